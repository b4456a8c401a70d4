"""The terminal front end (``qwirkle play``), driven end to end through text streams."""

from __future__ import annotations

import io
import random
import re
from collections import Counter

import pytest

import qwirkle_core as qc
from qwirkle_core.cli.play import board_text, run_play


def scripted(seed, players=2, human=0, opponent="greedy"):
    """The lines a human types to play a whole game (each turn the greedy choice),
    worked out on a parallel game; returns (lines, the finished parallel game, the
    human's hand before each line)."""
    g = qc.Game(players=players, seed=seed)
    lines, hands = [], []
    while not g.is_over:
        if g.current_player == human:
            hands.append(g.hand())
            move = g.copy().play_agent("greedy").move
            g.play(move)
            lines.append(str(move))
        else:
            g.play_agent(opponent)
    return lines, g, hands


def play(lines, **kwargs):
    out = io.StringIO()
    kwargs.setdefault("color", False)
    game = run_play(input_stream=io.StringIO("".join(f"{line}\n" for line in lines)), output_stream=out, **kwargs)
    return game, out.getvalue()


@pytest.mark.parametrize("seed, players, human", [(1, 2, 0), (2, 2, 1), (3, 3, 2)])
def test_a_whole_game_through_a_pipe(tmp_path, seed, players, human):
    lines, expected, _ = scripted(seed, players, human)
    path = tmp_path / "game.json"
    game, out = play(lines + [f"save {path}", "quit"], seed=seed, players=players, human_seat=human)
    assert game.is_over and game.scores == expected.scores
    assert game.history == expected.history
    assert "game over: " in out and "Traceback" not in out
    assert "\x1b" not in out  # no colours on a pipe
    assert f"saved the record of {expected.turn} actions to {path}" in out
    record = qc.GameRecord.from_json(path.read_text())
    assert record.agents == ["human" if p == human else "greedy" for p in range(players)]
    assert record.final_scores == expected.scores
    assert qc.replay(record).scores == expected.scores


def test_bad_input_and_commands_do_not_derail_the_game(tmp_path):
    lines, expected, _ = scripted(7)
    rng = random.Random(7)
    noise = [
        "",
        "hello",
        "R9@0,0",
        "R1@0,0 R1@0,0",
        "x",
        "pass now",
        "moves",
        "moves all",
        "moves 3",
        "hint",
        "hint me",
        "show",
        "help",
        "?",
        "save",
        "99999",
        "1 2",
        "Z1@3,3",
        "R1@200,200",
        "exchange Q1",
    ]
    script = []
    for i, line in enumerate(lines):
        script += rng.sample(noise, 3)
        script.append(line)
        if i % 5 == 2:
            script += ["undo", line]  # take back and play the same again: the same replies follow
    game, out = play(script + [f"save {tmp_path}/nowhere/x.json", "quit"], seed=7)
    assert game.is_over and game.scores == expected.scores
    assert game.history == expected.history
    assert "Traceback" not in out
    assert out.count("error: ") + out.count("illegal: ") >= len(lines)
    assert "error: 'hint' takes nothing after it" in out
    assert "error: save needs a file name" in out
    assert "No such file or directory" in out


def test_moves_numbers_hint_and_undo():
    g = qc.Game(seed=12)
    human = 0
    while g.current_player != human:
        g.play_agent("greedy")
    best = sorted(g.legal_moves(), key=lambda m: (-m.score, str(m)))
    hint = g.copy().play_agent("greedy")
    game, out = play(["2", "hint", "moves", "1", "undo", "undo"], seed=12)
    assert "error: no current 'moves' list" in out
    assert f"hint: {hint.move} ({hint.points} points)" in out
    assert f"   1. {best[0]}  ({best[0].score})" in out
    assert f"you play {best[0]}: {best[0].score} points" in out
    assert "undone: your turn again" in out
    assert "illegal: there is no move of yours to undo" in out
    assert game.turn == g.turn and game.hand(human) == g.hand(human)


def test_end_of_input_ends_cleanly():
    game, out = play(["moves"], seed=3)
    assert not game.is_over
    assert out.endswith("> \n")


def test_colours_only_when_asked():
    _, plain = play(["quit"], seed=5)
    _, coloured = play(["quit"], seed=5, color=True)
    assert "\x1b[" not in plain and "\x1b[" in coloured
    _, auto = play(["quit"], seed=5, color=None)  # a StringIO is no terminal
    assert auto == plain


def test_board_drawing():
    board = {(0, 0): qc.parse_tile("R1"), (0, 1): qc.parse_tile("R2"), (1, 1): qc.parse_tile("O2")}
    text = board_text(board).plain.splitlines()
    assert text == [
        "      -1   0   1   2",
        "  -1   .   .   .   .",
        "   0   .  R1  R2   .",
        "   1   .   .  O2   .",
        "   2   .   .   .   .",
    ]
    assert "empty board" in board_text({}).plain


def test_bad_arguments_are_refused_before_the_game():
    with pytest.raises(ValueError, match="the human's seat must be 0 to 1, not 2"):
        play([], seed=1, human_seat=2)
    with pytest.raises(ValueError, match="unknown agent"):
        play([], seed=1, opponent="grandmaster")
    with pytest.raises(ValueError, match="unknown opening rule"):
        play([], seed=1, opening="fast")
    with pytest.raises(TypeError, match="seed must be an int"):
        play([], seed=1.5)


def test_a_seeded_game_says_who_plays_where():
    game, out = play(["show", "quit"], seed=16, players=3, human_seat=1, opponent="random")
    assert "you are seat 1; random plays seat 0, seat 2. Seed 16." in out
    assert game.seed == 16 and game.players == 3 and out.count("your hand: ") == 2


def test_issue9_terminal_game_messages():
    """The terminal game said 'you hold only 1 2' and 'the list has 1 to 0', and did not
    mention the +6 when the opponent went out."""
    lines, expected, hands = scripted(0)
    stuck = next(i for i, h in enumerate(hands) if lines[i].startswith("x "))  # no placement: the human exchanges
    j = next(
        i for i in range(stuck + 1, len(lines)) if not lines[i].startswith("x ") and 1 in Counter(hands[i]).values()
    )
    once = next(t for t, n in Counter(hands[j]).items() if n == 1)
    code = qc.tile_code(once)
    script = (
        lines[:stuck]
        + ["moves", "1"]
        + lines[stuck:j]
        + [f"{code}@50,50 {code}@50,51", "moves", "99"]
        + lines[j:]
        + ["quit"]
    )
    game, text = play(script, seed=0)
    assert game.is_over and game.scores == expected.scores
    assert "error: the last 'moves' list is empty: no placement is possible" in text
    assert f"illegal: {qc.tile_name(once)} ({code}): you hold 1, not 2" in text
    assert re.search(r"error: no move number 99; the list has moves 1 to \d+", text)
    assert "hold only" not in text and "1 to 0" not in text
    last = expected.history[-1]
    assert last.player == 1 and expected.hand_sizes[1] == 0  # the opponent went out
    assert f"greedy (seat 1) plays {last.move}: {last.points} points +6 for going out" in text

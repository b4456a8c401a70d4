"""``qwirkle play``: a terminal front end to play against the built-in agents or a
Python agent (:mod:`qwirkle_core.batch.players`).

:func:`run_play` reads commands line by line from any text stream and writes to any
text stream, with colours (rich) only when asked or when the output is a terminal, so
it can be driven through a pipe. The command line (cli.py) parses the arguments and
calls it. See docs/frontend-guide.md.
"""

from __future__ import annotations

import argparse
import sys
from typing import IO, Any

from rich.console import Console
from rich.text import Text

from .._checks import check_int
from ..batch.players import Player, check_rules, check_time_limit
from ..errors import AgentFailure, IllegalMoveError
from ..game.game import Game
from ..game.move import Action, Move, MoveKind
from ..game.records import GameRecord
from ..game.rules import Rules
from ..game.tiles import COLORS, tile_code
from .common import (
    UsageError,
    add_variant,
    any_agent,
    check_cubes_option,
    plural,
    seed_type,
    time_limit,
)

__all__ = ["board_text", "run_play"]

STYLES = dict(zip(COLORS, ("bold red", "bold dark_orange", "bold yellow", "bold green", "bold blue", "bold magenta")))
SHOWN_MOVES = 20

HELP = """\
Type a move in the notation, or a command:
  R1@0,0 R2@0,1   place tiles (TILE@ROW,COL; rows grow downward, columns rightward)
  x R1 B4         exchange tiles with the bag
  pass            pass (only when the bag is empty and nothing fits)
  N               play move number N of the last 'moves' list
  moves [all]     list the legal placements, best first (the best 20 unless 'all')
  hint            what the greedy agent would do now (the most points; the web
                  board's hint is a Monte Carlo evaluation, docs/server.md)
  undo            take back your last move (and the replies to it)
  save FILE       write the game record (JSON) to FILE
  show            draw the board again
  help            this text
  quit            leave (end of input does too)
Tiles: colour R O Y G B P (red orange yellow green blue purple) + shape
1 circle, 2 square, 3 diamond, 4 clover, 5 cross, 6 star."""

CUBES_HELP = """\
Qwirkle Cubes: hands are open. Before you place, once a turn:
  r R1 B4         re-roll the cubes showing R1 and B4 (a roll keeps a cube's colour)
  r               re-roll all your cubes ('r all' too); when nothing fits you must,
                  as often as it takes
  x R1 B4 ...     only when no face of any of your colours fits anywhere: give your
                  cubes back to the bag for new ones (pass when the bag is empty)"""


def _tile_text(t: int) -> Text:
    return Text(tile_code(t), style=STYLES[COLORS[t // 6]])


def board_text(board: dict[tuple[int, int], int]) -> Text:
    """The board ``{(row, col): tile}`` as a rich Text grid with row and column numbers,
    one empty ring of cells around the tiles (plain text when printed without colour)."""
    if not board:
        return Text("(empty board: the opening goes at 0,0 and runs rightward, e.g. R1@0,0 R2@0,1)\n")
    rows = [r for r, _ in board]
    cols = [c for _, c in board]
    col_range = range(min(cols) - 1, max(cols) + 2)
    out = Text("    " + "".join(f"{c:>4}" for c in col_range) + "\n")
    for r in range(min(rows) - 1, max(rows) + 2):
        out.append(f"{r:>4}")
        for c in col_range:
            t = board.get((r, c))
            out.append("  ")
            out.append(_tile_text(t) if t is not None else Text(" ."))
        out.append("\n")
    return out


def _tiles_text(tiles: tuple[int, ...]) -> Text:
    out = Text()
    for i, t in enumerate(tiles):
        if i:
            out.append(" ")
        out.append(_tile_text(t))
    return out


class _Session:
    """One game in a terminal: the state of the loop of :func:`run_play`."""

    def __init__(
        self, game: Game, human: int, opponent: Player, console: Console, echo: bool, time_limit: float | None
    ) -> None:
        self.g = game
        self.human = human
        self.opponent = opponent.label
        self.seats = {p: opponent.seat(game.seed, p) for p in range(game.players) if p != human}
        self.time_limit = time_limit
        self.console = console
        self.echo = echo
        self.listed: tuple[int, list[Move]] | None = None  # (turn, moves) of the last 'moves' listing

    def say(self, *parts: Any, end: str = "\n") -> None:
        self.console.print(*parts, end=end)

    def name(self, p: int) -> str:
        return "you" if p == self.human else f"{self.opponent} (seat {p})"

    def show(self) -> None:
        g = self.g
        self.say(board_text(g.board), end="")
        scores = " | ".join(f"{self.name(p)} {s}" for p, s in enumerate(g.scores))
        self.say(f"scores: {scores} | bag {g.bag_size} | turn {g.turn}")
        if g.rules.cubes:
            for p in range(g.players):
                if p != self.human:
                    self.say(Text(f"{self.name(p)}: ").append(_tiles_text(g.hand(p))))
        self.say(Text("your hand: ").append(_tiles_text(g.hand(self.human))))
        if g.rules.cubes and not g.is_over and g.current_player == self.human:
            if g.must_reroll:
                self.say("nothing can be placed: re-roll all your cubes (r)")
            elif g.can_reroll:
                self.say("you may re-roll any of your cubes first (r TILES, or r for all)")

    def report(self, action: Action) -> None:
        move = "pass" if action.move.kind is MoveKind.PASS else str(action.move)
        points = f": {plural(action.points, 'point')}" if action.move.kind is MoveKind.PLACE else ""
        verb = "play" if action.player == self.human else "plays"
        if action.move.kind is MoveKind.REROLL:
            verb = "re-roll" if action.player == self.human else "re-rolls"
            move = move[2:]
        out = self.g.is_over and self.g.history[-1] == action and self.g.hand_sizes[action.player] == 0
        bonus = " +6 for going out" if out else ""
        self.say(f"{self.name(action.player)} {verb} {move}{points}{bonus}")

    def agents_play(self) -> None:
        g = self.g
        while not g.is_over and g.current_player != self.human:
            done = len(g.history)
            self.seats[g.current_player].play(g, self.time_limit)
            for action in g.history[done:]:  # a Qwirkle Cubes turn may re-roll, then place
                self.report(action)

    def announce_end(self) -> None:
        g = self.g
        result = (
            "a tie" if g.winner == -1 else "you won" if g.winner == self.human else f"{self.name(g.winner or 0)} won"
        )
        scores = ", ".join(f"{self.name(p)} {s}" for p, s in enumerate(g.scores))
        self.say(f"game over: {result} ({scores}). 'save FILE' keeps the record, 'undo' takes back, 'quit' leaves.")

    def after_change(self) -> None:
        self.agents_play()
        self.show()
        if self.g.is_over:
            self.announce_end()

    # -- commands -----------------------------------------------------------------------

    def cmd_help(self) -> None:
        self.say(HELP)
        if self.g.rules.cubes:
            self.say(CUBES_HELP)

    def cmd_moves(self, everything: bool) -> None:
        g = self.g
        moves = sorted(g.legal_moves(), key=lambda m: (-(m.score or 0), str(m)))
        self.listed = (g.turn, moves)
        if not moves:
            what = (
                "the game is over"
                if g.is_over
                else "re-roll all your cubes (r)"
                if g.must_reroll
                else "exchange (x TILES)"
                if g.bag_size
                else "pass"
            )
            self.say(f"no placement is possible: {what}")
            return
        shown = moves if everything else moves[:SHOWN_MOVES]
        for i, m in enumerate(shown, start=1):
            self.say(f"{i:>4}. {m}  ({m.score})")
        if len(shown) < len(moves):
            self.say(f"      ... and {len(moves) - len(shown)} more ('moves all')")

    def cmd_number(self, n: int) -> None:
        if self.listed is None or self.listed[0] != self.g.turn:
            raise ValueError("no current 'moves' list: type 'moves' first")
        moves = self.listed[1]
        if not moves:
            raise ValueError("the last 'moves' list is empty: no placement is possible")
        if not 1 <= n <= len(moves):
            raise ValueError(f"no move number {n}; the list has moves 1 to {len(moves)}")
        self.play(moves[n - 1])

    def cmd_hint(self) -> None:
        if self.g.is_over:
            raise IllegalMoveError("the game is over")
        trial = self.g.copy()
        done = len(trial.history)
        trial.play_agent("greedy")
        action = trial.history[done]
        if action.move.kind is MoveKind.REROLL:  # the re-roll, not what it would roll
            self.say(
                f"hint: r {' '.join(tile_code(t) for t in action.move.tiles)} (keep the cubes of the best placement, re-roll the others)"
            )
            return
        points = f" ({plural(action.points, 'point')})" if action.move.kind is MoveKind.PLACE else ""
        self.say(f"hint: {action.move}{points}")

    def cmd_undo(self) -> None:
        g = self.g
        if not any(a.player == self.human for a in g.history):
            raise IllegalMoveError("there is no move of yours to undo")
        while g.undo().player != self.human:
            pass
        self.say("undone: your turn again")
        self.show()

    def cmd_save(self, arg: str) -> None:
        if not arg:
            raise ValueError("save needs a file name: save FILE")
        agents = ["human" if p == self.human else self.opponent for p in range(self.g.players)]
        with open(arg, "w", encoding="utf-8") as f:
            f.write(GameRecord.from_game(self.g, agents).to_json(indent=2) + "\n")
        self.say(f"saved the record of {plural(self.g.turn, 'action')} to {arg}")

    def play(self, move: Move | str) -> None:
        self.g.play(move)
        self.report(self.g.history[-1])
        self.after_change()

    def handle(self, line: str) -> bool:
        """Carry out one input line; False to stop."""
        word, _, arg = line.strip().partition(" ")
        command, arg = word.lower(), arg.strip()
        plain = {
            "help": self.cmd_help,
            "?": self.cmd_help,
            "show": self.show,
            "hint": self.cmd_hint,
            "undo": self.cmd_undo,
        }
        if command in ("quit", "exit"):
            return False
        if command in plain:
            if arg:
                raise ValueError(f"'{command}' takes nothing after it")
            plain[command]()
        elif command == "moves":
            if arg not in ("", "all"):
                raise ValueError("'moves' takes nothing or 'all' after it")
            self.cmd_moves(everything=arg == "all")
        elif command == "save":
            self.cmd_save(arg)
        elif command in ("r", "reroll") and arg in ("", "all"):
            self.play(Move.reroll(self.g.hand()))
        elif command.isdigit() and not arg:
            self.cmd_number(int(command[:9]))
        elif command:
            self.play(line.strip())
        return True

    def loop(self, input_stream: IO[str]) -> None:
        self.say("Each turn, type a move such as R1@0,0 R2@0,1, or a command ('help' lists them).")
        self.after_change()
        while True:
            self.console.print("> ", end="")
            line = input_stream.readline()
            if not line:
                self.say("")
                return
            if self.echo:
                self.say(line.rstrip("\n"))
            try:
                if not self.handle(line):
                    return
            except AgentFailure:
                raise  # the opponent cannot go on: the game stops
            except IllegalMoveError as e:
                self.say(f"illegal: {e}")
            except (ValueError, TypeError, OSError) as e:
                self.say(f"error: {e}")


def run_play(
    players: int = 2,
    opponent: Any = "greedy",
    seed: int | None = None,
    human_seat: int = 0,
    input_stream: IO[str] | None = None,
    output_stream: IO[str] | None = None,
    color: bool | None = None,
    opening: str = "largest_group",
    time_limit: float | None = None,
    variant: str = "classic",
) -> Game:
    """Play one game in a terminal: the human at ``human_seat`` against ``opponent``
    in every other seat, until ``quit`` or the end of ``input_stream`` (default stdin).
    Writes to ``output_stream`` (default stdout), in colour if ``color`` is True, plain
    if False, and when None only if the output is a terminal. ``seed``: the game's seed
    (random when None). ``opening`` and ``variant``: the :class:`Rules`
    (``variant="cubes"``: Qwirkle Cubes).

    opponent:   a built-in agent (as :func:`~qwirkle_core.parse_agent` takes it) or a
                Python agent (an object, class, function or ``package.module:Name``;
                :mod:`qwirkle_core.batch.players`); each opponent seat gets its own instance.
    time_limit: a Python opponent's seconds per move (None: no limit).

    Returns the :class:`Game`. Raises AgentError, TypeError or ValueError for bad
    arguments before the game starts, and :class:`~qwirkle_core.AgentFailure` when a
    Python opponent fails (the game stops there).
    """
    input_stream = sys.stdin if input_stream is None else input_stream
    output_stream = sys.stdout if output_stream is None else output_stream
    player = Player.of(opponent)
    limit = check_time_limit(time_limit)
    rules = Rules(players=players, opening=opening, variant=variant)
    check_rules([player], rules)
    human_seat = check_int(human_seat, "the human's seat", 0, players - 1)
    if color is None:
        color = _isatty(output_stream)
    console = Console(
        file=output_stream,
        force_terminal=color,
        color_system="auto" if color else None,
        highlight=False,
        markup=False,
        emoji=False,
        soft_wrap=True,
    )
    game = Game(seed=seed, rules=rules)
    names = ", ".join(f"seat {p}" for p in range(players) if p != human_seat)
    console.print(
        f"qwirkle-core{' (Qwirkle Cubes)' if rules.cubes else ''}: you are seat {human_seat}; {player.label} plays {names}. Seed {game.seed}.",
        highlight=False,
    )
    _Session(game, human_seat, player, console, echo=not _isatty(input_stream), time_limit=limit).loop(input_stream)
    return game


def _isatty(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


# -- the command ------------------------------------------------------------------------


def register(sub: Any) -> None:
    from ..game.agents import agent_names
    from ..game.rules import OPENING_RULES

    p = sub.add_parser(
        "play",
        help="play a game against an agent in the terminal",
        description="Play Qwirkle against the built-in agents or a Python agent: the board in colour (plain "
        "text when piped), your hand, legal moves, hints, undo, and saving the game record. Reads commands "
        "from standard input, so it can be scripted. An opponent that fails ends the game with a one-line error.",
    )
    p.add_argument(
        "--players", type=int, choices=range(2, 7), default=2, metavar="N", help="number of seats, 2 to 6 (default: 2)"
    )
    p.add_argument(
        "--opponent",
        type=any_agent,
        default="greedy",
        help=f"the agent in the other seats: {agent_names()}, with parameters, or a Python agent as package.module:Name (default: greedy)",
    )
    p.add_argument(
        "--time-limit",
        type=time_limit,
        default=None,
        metavar="SECONDS",
        help="a Python opponent's seconds per move (default: no limit)",
    )
    p.add_argument("--seat", type=int, default=0, help="your seat, from 0 (default: 0); the rules decide who opens")
    p.add_argument(
        "--seed", type=seed_type, default=None, help="the game's seed (default: random; printed at the start)"
    )
    p.add_argument(
        "--opening",
        choices=sorted(OPENING_RULES),
        default="largest_group",
        help="opening rule (default: largest_group, the official one)",
    )
    add_variant(p)
    p.add_argument("--no-color", action="store_true", help="no colours even on a terminal")
    p.set_defaults(run=_run_play)


def _run_play(args: argparse.Namespace, console: Console) -> int:
    if not 0 <= args.seat < args.players:
        raise UsageError(
            f"argument --seat: must be 0 to {args.players - 1} with {args.players} players, got {args.seat}"
        )
    if args.variant == "cubes" and args.opponent.spec is None:
        raise UsageError(
            f"argument --opponent: {args.opponent.label!r} is a Python agent; Qwirkle Cubes is played by the built-in agents only"
        )
    if args.variant == "cubes":
        check_cubes_option("--opponent", [args.opponent.spec])
    run_play(
        players=args.players,
        opponent=args.opponent,
        seed=args.seed,
        human_seat=args.seat,
        color=False if args.no_color else None,
        opening=args.opening,
        time_limit=args.time_limit,
        variant=args.variant,
    )
    return 0

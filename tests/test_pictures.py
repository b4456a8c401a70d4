"""Board pictures (``qc.svg``, ``_repr_svg_``, ``GameRecord.to_html``, ``qwirkle analyse
--html``): the SVG parses and holds exactly the board's tiles at the cells its edge
coordinates name, the last move, highlighted and legal cells are where they should be,
an observation's picture never holds a tile its seat cannot see, bad arguments are
refused by name, and Chromium draws a picture of the size asked that is not blank."""

from __future__ import annotations

import collections
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qwirkle_core as qc
from qwirkle_core import cli
from qwirkle_core.game.picture import CELL

NS = {"s": "http://www.w3.org/2000/svg"}


def random_game(seed: int, actions: int, players: int = 2) -> qc.Game:
    """A game after ``actions`` actions chosen at random among the legal ones (an
    exchange now and then)."""
    import random

    rng = random.Random(seed)
    g = qc.Game(players=players, seed=seed)
    for _ in range(actions):
        if g.is_over:
            break
        moves = g.legal_moves()
        if moves and (g.opening_pending or not g.bag_size or rng.random() < 0.9):
            g.play(rng.choice(moves))
        elif g.bag_size:
            g.exchange(g.hand()[: rng.randint(1, min(len(g.hand()), g.bag_size))])
        else:
            g.pass_turn()
    return g


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    return root


def axes(root: ET.Element) -> tuple[dict[float, int], dict[float, int]]:
    """The column of each x centre and the row of each y centre, read from the labels
    along the edges."""
    cols = {float(t.get("x")): int(t.text) for t in root.iterfind(".//s:text[@data-col]", NS)}
    rows = {float(t.get("y")) - 4: int(t.text) for t in root.iterfind(".//s:text[@data-row]", NS)}
    return cols, rows


def drawn_board(root: ET.Element) -> dict[tuple[int, int], int]:
    """The board as the picture shows it: each tile's cell found from its position and
    the edge labels, its tile from the symbol it uses."""
    cols, rows = axes(root)
    board = {}
    for use in root.iterfind(".//s:use[@class='tile']", NS):
        x, y = float(use.get("x")), float(use.get("y"))
        assert float(use.get("width")) == CELL
        cell = (rows[y + CELL / 2], cols[x + CELL / 2])
        assert cell not in board
        assert use.get("data-cell") == f"{cell[0]},{cell[1]}"
        code = use.get("href").removeprefix("#qc-")
        assert use.get("data-tile") == code
        board[cell] = qc.parse_tile(code)
    return board


def cells_of(root: ET.Element, cls: str) -> set[tuple[int, int]]:
    cols, rows = axes(root)
    out = set()
    for rect in root.iterfind(f".//s:rect[@class='{cls}']", NS):
        x, y, w = float(rect.get("x")), float(rect.get("y")), float(rect.get("width"))
        out.add((rows[y + w / 2], cols[x + w / 2]))
    return out


def used_tiles(root: ET.Element) -> collections.Counter:
    """Every face-up tile the picture draws (board and hands), by tile."""
    return collections.Counter(
        use.get("href").removeprefix("#qc-") for use in root.iterfind(".//s:use", NS) if use.get("href") != "#qc-back"
    )


@pytest.mark.parametrize("seed, actions, players", [(0, 0, 2), (1, 1, 2), (2, 9, 2), (3, 30, 3), (5, 60, 4)])
def test_the_picture_holds_the_board_at_its_coordinates(seed, actions, players):
    g = random_game(seed, actions, players)
    for obj in (g, g.position(), g.observation(1)):
        root = parse(qc.svg(obj, hands="all"))
        assert drawn_board(root) == g.board
        scores = [int(t.text) for t in root.iterfind(".//s:text[@class='score']", NS)]
        assert scores == list(g.scores)
    status = root.find(".//s:text[@class='status']", NS).text
    assert f"bag {g.bag_size}" in status and f"turn {g.turn}" in status
    assert (f"seat {g.current_player} to move" in status) != g.is_over
    # every hand of the game's picture, in order, face up
    hands = collections.defaultdict(list)
    for use in parse(qc.svg(g, hands="all")).iterfind(".//s:use[@class='hand-tile']", NS):
        hands[int(use.get("data-seat"))].append(qc.parse_tile(use.get("data-tile")))
    assert [tuple(hands[p]) for p in range(players)] == [g.hand(p) for p in range(players)]
    current = parse(qc.svg(g)).iterfind(".//s:use[@class='hand-tile']", NS)
    assert {int(u.get("data-seat")) for u in current} <= {g.current_player}
    assert not list(parse(qc.svg(g, hands="none")).iterfind(".//s:use[@class='hand-tile']", NS))


def test_coordinates_are_the_notations():
    g = qc.Game(players=2, seed=1)
    g.play("O5@0,0 G5@0,1 B5@0,2")
    root = parse(qc.svg(g))
    cols, rows = axes(root)
    assert sorted(cols.values()) == list(range(-1, 4)) and sorted(rows.values()) == [-1, 0, 1]
    # columns grow rightward, rows downward
    assert sorted(cols, key=cols.get) == sorted(cols) and sorted(rows, key=rows.get) == sorted(rows)
    assert drawn_board(root) == {(0, c): qc.parse_tile(t) for c, t in enumerate(["O5", "G5", "B5"])}
    assert not parse(qc.svg(g, coordinates=False)).findall(".//s:text[@data-col]", NS)


def test_last_move_highlight_and_legal_cells():
    g = random_game(7, 12)
    while not g.legal_moves():
        g = random_game(g.seed + 1, 12)
    last = g.legal_moves()[-1]
    g.play(last)
    root = parse(qc.svg(g, lastmove=str(last), highlight=[(0, 0), (-3, 9)]))
    assert cells_of(root, "last-move") == {(r, c) for r, c, _ in last.placements}
    assert cells_of(root, "highlight") == {(0, 0), (-3, 9)}
    assert str(last) in root.find(".//s:text[@class='status']", NS).text
    assert (
        parse(g._repr_svg_()).find(".//s:text[@class='status']", NS).text
        == root.find(".//s:text[@class='status']", NS).text
    )
    # legal cells: where some legal placement puts the tile (naive: from legal_moves)
    moves = g.legal_moves()
    for tile in sorted(set(g.hand())):
        want = {(r, c) for m in moves for r, c, t in m.placements if t == tile}
        for obj in (g, g.position(), g.observation()):
            assert cells_of(parse(qc.svg(obj, legal_cells=qc.tile_code(tile))), "target") == want
    every = {(r, c) for m in moves for r, c, _ in m.placements}
    assert cells_of(parse(qc.svg(g.observation(), legal_cells=True)), "target") == every
    assert not cells_of(parse(qc.svg(g)), "target")


def test_an_exchange_as_last_move_names_no_tile():
    g = qc.Game(players=2, seed=3)
    g.play(g.legal_moves()[0])
    hand = g.hand()
    g.exchange(hand[:2])
    text = qc.svg(g.observation(0), lastmove=g.history[-1].move)
    assert "exchange (2 tiles)" in text
    assert "x " + qc.tile_code(hand[0]) not in text


def test_repr_svg_is_the_default_picture():
    g = random_game(4, 10)
    assert g.position()._repr_svg_() == qc.svg(g.position())
    for p in range(2):
        assert g.observation(p)._repr_svg_() == qc.svg(g.observation(p))
    assert g._repr_svg_() == qc.svg(g, lastmove=g.history[-1].move)
    assert qc.svg(g)._repr_svg_() == qc.svg(g)
    assert qc.Game(players=2, seed=0)._repr_svg_() == qc.svg(qc.Game(players=2, seed=0))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32),
    actions=st.integers(0, 50),
    players=st.integers(2, 4),
    hands=st.sampled_from(["current", "all", "none"]),
)
def test_an_observation_picture_shows_nothing_hidden(seed, actions, players, hands):
    g = random_game(seed, actions, players)
    board = collections.Counter(qc.tile_code(t) for t in g.board.values())
    for p in range(players):
        obs = g.observation(p)
        text = qc.svg(obs, hands=hands)
        root = parse(text)
        own = collections.Counter(qc.tile_code(t) for t in g.hand(p)) if hands != "none" else collections.Counter()
        assert used_tiles(root) == board + own
        backs = [int(u.get("data-seat")) for u in root.iterfind(".//s:use[@href='#qc-back']", NS)]
        assert collections.Counter(backs) == (
            collections.Counter({q: g.hand_sizes[q] for q in range(players) if q != p}) if hands == "all" else {}
        )
        # no tile code in any text, except the board's tiles written as cells
        words = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
        assert not re.search(r"\b[ROYGBP][1-6]\b(?!@)", words)
        # the same picture whatever the hidden tiles are
        other = g.determinize(p, seed=seed % 1000)
        assert qc.svg(other.observation(p), hands=hands) == text
    # the check can fail: the game's own picture shows every hand
    if hands == "all":
        full = sum((collections.Counter(qc.tile_code(t) for t in g.hand(q)) for q in range(players)), board)
        assert used_tiles(parse(qc.svg(g, hands="all"))) == full


def test_cubes_observation_shows_open_hands():
    g = qc.Game(seed=2, rules=qc.Rules(players=2, variant="cubes"))
    for _ in range(6):
        g.play(g.legal_moves()[0] if g.legal_moves() else g.reroll())
    root = parse(qc.svg(g.observation(1 - g.current_player), hands="all"))
    assert not root.findall(".//s:use[@href='#qc-back']", NS)
    assert len(root.findall(".//s:use[@class='hand-tile']", NS)) == sum(g.hand_sizes)
    assert drawn_board(root) == g.board
    # open hands: any seat's observation knows where the player to move may play
    every = {(r, c) for m in g.legal_moves() for r, c, _ in m.placements}
    assert cells_of(parse(qc.svg(g.observation(1 - g.current_player), legal_cells=True)), "target") == every


def test_a_finished_game_names_its_winner():
    for seed in (1, 2, 3):
        record = qc.play_game(("greedy", "greedy", "greedy"), seed=seed)
        g = qc.replay(record)
        want = "game over: a tie" if g.winner == -1 else f"game over: seat {g.winner} wins"
        for obj in (g, g.position(), g.observation(0)):
            root = parse(qc.svg(obj))
            assert root.find(".//s:text[@class='status']", NS).text.startswith(want)
            marks = [t.text for t in root.iterfind(".//s:text", NS) if t.text == "★"]
            assert len(marks) == (g.winner != -1)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"hands": "mine"}, ValueError, "hands must be one of 'current', 'all', 'none', not 'mine'"),
        ({"hands": None}, TypeError, "hands must be one of"),
        ({"size": 0}, ValueError, "size must be 1 to 20000 pixels, not 0"),
        ({"size": 2.5}, TypeError, "size must be an int"),
        ({"size": True}, TypeError, "size must be an int"),
        ({"coordinates": "yes"}, TypeError, "coordinates must be True or False"),
        ({"highlight": (0, 0)}, TypeError, "(row, col) pairs; 0 is not a pair"),
        ({"highlight": "0,0"}, TypeError, "highlight must be an iterable"),
        ({"highlight": [(0, 0, 1)]}, ValueError, "(0, 0, 1) is not a pair"),
        ({"highlight": [(0, 2**40)]}, ValueError, "highlight col"),
        ({"lastmove": "R1@0"}, ValueError, "expected TILE@ROW,COL"),
        ({"lastmove": "R1@5,5"}, ValueError, "lastmove puts R1 at 5,5, but that cell is empty"),
        ({"lastmove": 3}, TypeError, "lastmove must be a Move"),
        ({"legal_cells": "R7"}, ValueError, "unknown shape digit"),
        ({"legal_cells": 1.5}, TypeError, "legal_cells must be True, False or a tile"),
        ({"legal_cells": 40}, ValueError, "tile"),
    ],
)
def test_bad_arguments_are_refused(kwargs, error, message):
    g = qc.Game(players=2, seed=1)
    with pytest.raises(error, match=re.escape(message)):
        qc.svg(g, **kwargs)


def test_bad_objects_and_cells_are_refused():
    g = qc.Game(players=2, seed=1)
    with pytest.raises(TypeError, match="svg\\(\\) draws a Game, a Position or an Observation, not dict"):
        qc.svg(g.to_dict())
    absent = next(t for t in range(36) if t not in g.hand())
    with pytest.raises(ValueError, match=f"{qc.tile_code(absent)} is not in the hand of seat 0 to move"):
        qc.svg(g, legal_cells=absent)
    with pytest.raises(ValueError, match="this observation is seat 1's, and seat 0 is to move"):
        qc.svg(g.observation(1), legal_cells=True)
    g.play("O5@0,0 G5@0,1 B5@0,2")
    with pytest.raises(ValueError, match="lastmove puts R1 at 0,0, but that cell holds O5"):
        qc.svg(g, lastmove="R1@0,0")


# -- a record as a page ---------------------------------------------------------------------


def frames_of(page: str) -> list[str]:
    return re.findall(r'<div class="qc-frame f\d+" data-step="\d+"><nav>.*?</nav>(<svg.*?</svg>)</div>', page)


def test_a_record_page_steps_through_the_game():
    record = qc.play_game(("greedy", "greedy"), seed=6)
    notes = [f"verdict {i}" if i % 3 == 0 else None for i in range(len(record.actions))]
    page = record.to_html(notes=notes)
    assert page.startswith("<!doctype html>")
    assert "<script" not in page and not re.search(r"(src|href)=\"(https?:)?//", page)
    assert re.findall(r"https?://[^\s\"']+", page) == ["http://www.w3.org/2000/svg"] * (len(record.actions) + 1)
    frames = frames_of(page)
    assert len(frames) == len(record.actions) + 1
    pid = re.search(r'id="(qc-record-\w+)"', page)[1]
    g = qc.replay(record).root()
    assert drawn_board(parse(frames[0])) == g.board
    for i, (action, frame) in enumerate(zip(record.actions, frames[1:])):
        g.play(action.move)
        root = parse(frame)
        assert drawn_board(root) == g.board
        assert [int(t.text) for t in root.iterfind(".//s:text[@class='score']", NS)] == list(action.scores)
        assert cells_of(root, "last-move") == {(r, c) for r, c, _ in action.move.placements}
        assert f'<label for="{pid}-{i + 1}">seat {action.player}' in page
    for i, n in enumerate(notes):
        assert (f'<div class="note">{n}</div>' in page) == (n is not None)
    assert f"wins ({record.final_scores[0]}–{record.final_scores[1]})" in page
    fragment = record._repr_html_()
    assert fragment.startswith('<div class="qwirkle-record"') and len(frames_of(fragment)) == len(frames)
    with pytest.raises(ValueError, match="notes must hold one entry per action"):
        record.to_html(notes=["x"])
    with pytest.raises(TypeError, match="not one str"):
        record.to_html(notes="x" * len(record.actions))
    with pytest.raises(TypeError, match="notes must be str or None"):
        record.to_html(notes=[1] * len(record.actions))


def test_cli_analyse_writes_the_page(tmp_path, capsys):
    record = qc.play_game(("greedy", "greedy"), seed=4)
    path = tmp_path / "game.json"
    path.write_text(record.to_json())
    out = tmp_path / "game.html"
    argv = ["analyse", str(path), "--seat", "1", "--playouts", "2", "--candidates", "2", "--no-progress"]
    assert cli.main([*argv, "--html", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    page = out.read_text()
    assert len(frames_of(page)) == len(record.actions) + 1
    notes = re.findall(r'<li class="m(\d+)">.*?</li>', page)
    verdicts = re.findall(r'<li class="m\d+"><label[^>]*>seat (\d)[^<]*</label><div class="note">([^<]*)</div>', page)
    assert len(notes) == len(record.actions)
    assert {seat for seat, _ in verdicts} == {"1"}
    assert len(verdicts) == sum(a.player == 1 for a in record.actions)
    assert all(re.match(r"best .*\(margin [+-]\d.*, win \d+%.*\); loss \d", v) for _, v in verdicts)
    assert cli.main([*argv, "--html", str(tmp_path / "game.txt")]) == 2
    assert "written to a .html file" in capsys.readouterr().err


# -- in a real browser ------------------------------------------------------------------------

COLOURS = [
    (0xE5, 0x33, 0x2A),
    (0xF5, 0x8A, 0x1F),
    (0xF8, 0xD8, 0x1C),
    (0x34, 0xB8, 0x4A),
    (0x2D, 0x7F, 0xE0),
    (0x9B, 0x4F, 0xD6),
]


@pytest.fixture
def browser(tmp_path):
    from playwright.sync_api import sync_playwright

    from server_support import CHROMIUM, CHROMIUM_ARGS

    if CHROMIUM is None:
        pytest.skip("no Chromium: install Debian's package (apt-get install chromium); .ci/run does")
    args = [*CHROMIUM_ARGS, "--disable-quic", "--disable-sync"]
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, args=args, viewport={"width": 1000, "height": 900}
        )
        yield context
        context.close()


def test_chromium_draws_the_picture(browser, tmp_path):
    from PIL import Image

    g = random_game(11, 14)
    text = qc.svg(g, size=600, hands="all")
    root = parse(text)
    width, height = (int(v) for v in root.get("viewBox").split()[2:])
    page = browser.new_page()
    page.set_content(f"<body style='margin:0;background:#fff'>{text}</body>")
    page.locator("svg.qwirkle-board").screenshot(path=str(tmp_path / "board.png"))
    image = Image.open(tmp_path / "board.png").convert("RGB")
    assert image.size == (600, int(root.get("height"))) == (600, round(600 * height / width))
    assert len(image.getcolors(1 << 20)) > 100  # not blank
    scale = 600 / width
    for use in root.iterfind(".//s:use[@class='tile']", NS):
        x, y = (float(use.get(k)) + CELL / 2 for k in ("x", "y"))
        pixel = image.getpixel((int(x * scale), int(y * scale)))
        want = COLOURS[qc.parse_tile(use.get("data-tile")) // 6]
        assert max(abs(a - b) for a, b in zip(pixel, want)) < 40, (use.get("data-cell"), pixel, want)


def test_chromium_steps_through_a_record(browser):
    record = qc.play_game(("greedy", "greedy"), seed=6)
    page = browser.new_page()
    page.set_content(record.to_html())
    visible = "() => [...document.querySelectorAll('.qc-frame')].filter(f => f.offsetParent).map(f => f.dataset.step)"
    n = len(record.actions)
    assert page.evaluate(visible) == [str(n)]
    page.locator(f".f{n} nav label[title=previous]").click()
    assert page.evaluate(visible) == [str(n - 1)]
    page.locator(f".f{n - 1} nav label[title=first]").click()
    assert page.evaluate(visible) == ["0"]
    page.locator(".m5 > label").click()
    assert page.evaluate(visible) == ["5"]
    page.keyboard.press("ArrowRight")  # the steps are radio buttons: the arrows walk them
    assert page.evaluate(visible) == ["6"]
    page.locator(".f6 nav label[title=last]").click()
    assert page.evaluate(visible) == [str(n)]


# -- in a notebook ------------------------------------------------------------------------------


def test_the_example_notebook_shows_pictures(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbconvert")
    pytest.importorskip("ipykernel")
    import pathlib
    import subprocess
    import sys

    source = pathlib.Path(__file__).resolve().parent.parent / "docs" / "examples" / "pictures.ipynb"
    cmd = [
        sys.executable,
        "-m",
        "nbconvert",
        "--to",
        "notebook",
        "--execute",
        str(source),
        "--output-dir",
        str(tmp_path),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    nb = nbformat.read(tmp_path / "pictures.ipynb", as_version=4)
    outputs = [c.outputs for c in nb.cells if c.cell_type == "code"]
    assert all(len(o) == 1 and o[0].output_type == "execute_result" for o in outputs)
    data = [o[0].data for o in outputs]
    assert ["image/svg+xml" in d for d in data] == [True] * 4 + [False]
    # the notebook's game, played again here: each picture is the library's
    g = qc.Game(players=2, seed=7)
    for _ in range(8):
        g.play(max(g.legal_moves(), key=lambda m: m.score))
    assert data[0]["image/svg+xml"] == qc.svg(g, lastmove=g.history[-1].move)
    assert data[1]["image/svg+xml"] == qc.svg(g.position())
    assert data[2]["image/svg+xml"] == qc.svg(g.observation(0))
    assert data[3]["image/svg+xml"] == qc.svg(g, legal_cells=True, highlight=[(0, 0)], hands="all", size=420)
    page = data[4]["text/html"]
    assert page.startswith('<div class="qwirkle-record"') and len(frames_of(page)) == 9


def test_the_docs_pictures_are_what_the_script_makes(tmp_path):
    import pathlib
    import subprocess
    import sys

    docs = pathlib.Path(__file__).resolve().parent.parent / "docs"
    done = subprocess.run(
        [sys.executable, str(docs / "examples" / "pictures.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    names = sorted(p.name for p in tmp_path.glob("*.svg"))
    assert names == ["pictures-end.svg", "pictures-game.svg", "pictures-observation.svg"]
    for name in names:
        assert (tmp_path / name).read_text() == (docs / name).read_text(), f"docs/{name} is out of date"
        assert f"]({name})" in (docs / "pictures.md").read_text()

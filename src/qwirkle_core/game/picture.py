"""Board pictures as SVG text, drawn from plain values (a :class:`Scene`).

The public entry point is :func:`qwirkle_core.svg` (``game/render.py``), which turns a
``Game``, a ``Position`` or an ``Observation`` into a :class:`Scene` and checks its
arguments; this module only draws, so the value modules (position, observation, game,
records) can use it for their ``_repr_svg_`` / ``_repr_html_`` without an import cycle.

Tiles are drawn in the web board's colours and shapes
(``server/static/tiles.js``); a cell is :data:`CELL` units wide and one unit is one
pixel unless ``size`` scales the picture. Every board tile is a ``<use>`` element with
``data-cell="ROW,COL"`` and ``data-tile="R1"``; the coordinates along the edges are
``<text>`` elements with ``data-row`` / ``data-col``, centred on their row or column.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .move import Move, MoveKind, format_move
from .tiles import tile_code

__all__ = ["CELL", "Frame", "Scene", "Svg", "bounds_of", "draw", "last_of", "record_page", "tile_defs"]

CELL = 40
"""Units (pixels at natural size) per board cell."""

_COLORS = ("#e5332a", "#f58a1f", "#f8d81c", "#34b84a", "#2d7fe0", "#9b4fd6")  # R O Y G B P (tiles.js)
_INK, _MUTED, _PANEL, _FELT = "#f1efe8", "#b9c4bd", "#20262b", "#1d4a37"  # style.css
_ACCENT, _TARGET = "#f5c542", "#7fe0a6"
_FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"
_PAD = 8
_HAND_TILE = 30
_MIN_WIDTH = 380


class Svg(str):
    """SVG text (a ``str``) that Jupyter and IPython display as a picture."""

    __slots__ = ()

    def _repr_svg_(self) -> str:
        return str(self)


@dataclass(frozen=True)
class Scene:
    """What a picture shows, as plain values (built by ``qc.svg``'s callers).

    Attributes
    ----------
    board
        ``{(row, col): tile}``.
    hands
        one entry per seat: the sorted tiles when the picture may show them, else None
        (a hidden hand: only its size is drawn, as tile backs).
    hand_sizes, scores
        per seat.
    bag_size, current_player, turn
        the public counters.
    over, winner
        the end: ``winner`` is the seat, -1 for a tie, None while the game runs.
    viewer
        the seat whose view this is (an observation), else None (everything seen).
    names
        optional label per seat (agent names of a record).
    """

    board: Mapping[tuple[int, int], int]
    hands: tuple[tuple[int, ...] | None, ...]
    hand_sizes: tuple[int, ...]
    scores: tuple[int, ...]
    bag_size: int
    current_player: int
    turn: int
    over: bool
    winner: int | None
    viewer: int | None = None
    names: tuple[str, ...] | None = None


# -- the 36 tile symbols -------------------------------------------------------------


def _star(points: int, outer: float, inner: float) -> str:
    out = []
    for i in range(2 * points):
        a = -math.pi / 2 + i * math.pi / points
        r = inner if i % 2 else outer
        out.append(f"{50 + r * math.cos(a):.2f},{50 + r * math.sin(a):.2f}")
    return " ".join(out)


def _shape(shape: int, fill: str) -> str:
    """Shape 0..5 drawn in a 100 x 100 box centred on (50, 50), as tiles.js draws it."""
    if shape == 0:
        return f'<circle cx="50" cy="50" r="29" fill="{fill}"/>'
    if shape == 1:
        return f'<rect x="24" y="24" width="52" height="52" fill="{fill}"/>'
    if shape == 2:
        return f'<polygon points="50,13 87,50 50,87 13,50" fill="{fill}"/>'
    if shape == 3:
        lobes = ((50, 31, 16), (69, 50, 16), (50, 69, 16), (31, 50, 16), (50, 50, 14))
        return "".join(f'<circle cx="{x}" cy="{y}" r="{r}" fill="{fill}"/>' for x, y, r in lobes)
    if shape == 4:
        return f'<polygon points="{_star(4, 39, 11)}" fill="{fill}"/>'
    return f'<polygon points="{_star(8, 38, 19)}" fill="{fill}"/>'


_FACE = (
    '<rect x="3" y="3" width="94" height="94" rx="11" fill="url(#qc-gloss)" stroke="#050506" stroke-width="2"/>'
    '<rect x="8" y="8" width="84" height="84" rx="8" fill="#18181b"/>'
)


def tile_defs() -> str:
    """The ``<defs>`` of every picture: 36 tile symbols (``#qc-R1`` .. ``#qc-P6``) and
    the back of a hidden tile (``#qc-back``). Every picture holds the same definitions,
    so several pictures on one page may share the ids."""
    parts = [
        '<defs><linearGradient id="qc-gloss" x1="0" y1="0" x2="0" y2="1">'
        '<stop offset="0" stop-color="#3a3a40"/><stop offset="1" stop-color="#141417"/></linearGradient>'
    ]
    for t in range(36):
        parts.append(
            f'<symbol id="qc-{tile_code(t)}" viewBox="0 0 100 100">{_FACE}{_shape(t % 6, _COLORS[t // 6])}</symbol>'
        )
    parts.append(
        f'<symbol id="qc-back" viewBox="0 0 100 100">{_FACE}'
        '<rect x="30" y="30" width="40" height="40" rx="6" fill="none" stroke="#3a3a40" stroke-width="4"/></symbol>'
    )
    parts.append("</defs>")
    return "".join(parts)


# -- drawing ---------------------------------------------------------------------------


def _text(
    x: float, y: float, s: str, *, size: int = 13, fill: str = _INK, anchor: str = "start", extra: str = ""
) -> str:
    return (
        f'<text x="{x:g}" y="{y:g}" font-size="{size}" fill="{fill}" text-anchor="{anchor}"{extra}>'
        f"{html.escape(s, quote=False)}</text>"
    )


def _tile(href: str, x: float, y: float, size: float, extra: str) -> str:
    return f'<use href="#qc-{href}" x="{x:g}" y="{y:g}" width="{size:g}" height="{size:g}"{extra}/>'


def bounds_of(cells: Sequence[tuple[int, int]]) -> tuple[int, int, int, int]:
    """``(r0, r1, c0, c1)``: the rows and columns a picture shows for these cells (one
    empty cell around them; around the opening cells when there are none)."""
    if not cells:
        return -1, 1, -1, 6
    rows = [r for r, _ in cells]
    cols = [c for _, c in cells]
    return min(rows) - 1, max(rows) + 1, min(cols) - 1, max(cols) + 1


def last_of(move: Move | None) -> tuple[tuple[tuple[int, int], ...], str | None]:
    """The cells a last move outlines and its text for the status line. An exchange is
    written without its tiles ("exchange (2 tiles)"), which only its player saw."""
    if move is None:
        return (), None
    if move.kind is MoveKind.PLACE:
        return tuple((r, c) for r, c, _ in move.placements), format_move(move)
    if move.kind is MoveKind.EXCHANGE:
        k = len(move.tiles)
        return (), f"exchange ({k} tile{'s' * (k != 1)})"
    return (), format_move(move)


def _status(scene: Scene, lastmove: str | None) -> str:
    if scene.over:
        end = "game over: a tie" if scene.winner == -1 else f"game over: seat {scene.winner} wins"
    else:
        end = f"seat {scene.current_player} to move"
    parts = [end, f"bag {scene.bag_size}", f"turn {scene.turn}"]
    if scene.viewer is not None:
        parts.append(f"seen by seat {scene.viewer}")
    if lastmove:
        parts.append(f"last move: {lastmove}")
    return " · ".join(parts)


def draw(
    scene: Scene,
    *,
    last: Sequence[tuple[int, int]] = (),
    last_text: str | None = None,
    highlight: Sequence[tuple[int, int]] = (),
    targets: Sequence[tuple[int, int]] = (),
    coordinates: bool = True,
    hands: str = "current",
    size: int | None = None,
    bounds: tuple[int, int, int, int] | None = None,
    defs: bool = True,
) -> Svg:
    """The SVG picture of ``scene`` (arguments checked by ``qc.svg``).

    Parameters
    ----------
    last
        cells outlined as the last move.
    last_text
        the last move as text for the status line (None: not written).
    highlight, targets
        cells tinted, and cells marked as legal for a hand tile.
    coordinates
        write the row numbers along the left edge and the column numbers along the top.
    hands
        ``"current"`` (the focus seat's hand: the viewer's in an observation, else the
        player to move), ``"all"`` or ``"none"``.
    size
        the picture's width in pixels (None: one unit per pixel).
    bounds
        ``(r0, r1, c0, c1)``, the rows and columns shown (default: :func:`bounds_of`
        the board, highlighted and target cells).
    defs
        include the tile symbols (:func:`tile_defs`); without them the picture needs
        them elsewhere on the page.
    """
    if bounds is None:
        bounds = bounds_of([*scene.board, *highlight, *targets, *last])
    r0, r1, c0, c1 = bounds
    ncols, nrows = c1 - c0 + 1, r1 - r0 + 1
    left = 34 if coordinates else _PAD
    top = 20 if coordinates else _PAD
    bw, bh = ncols * CELL, nrows * CELL
    n = len(scene.scores)
    focus = scene.viewer if scene.viewer is not None else scene.current_player
    shown = {"all": set(range(n)), "current": {focus}, "none": set()}[hands]
    status = _status(scene, last_text)
    labels = [f"seat {p}" + (f" {scene.names[p][:16]}" if scene.names else "") for p in range(n)]
    hand_x = _PAD + 16 + int(7.5 * max(len(s) for s in labels)) + 44  # after "▶ seat 0  123"
    width = max(left + bw + _PAD, _MIN_WIDTH, hand_x + 6 * (_HAND_TILE + 3) + _PAD, 2 * _PAD + int(6.6 * len(status)))
    rows_h = [(_HAND_TILE + 6) if p in shown and scene.hand_sizes[p] else 22 for p in range(n)]
    height = top + bh + 10 + sum(rows_h) + 28

    def xy(r: int, c: int) -> tuple[int, int]:
        return left + (c - c0) * CELL, top + (r - r0) * CELL

    out: list[str] = []
    px_w = width if size is None else size
    px_h = height if size is None else max(1, round(size * height / width))
    out.append(
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{px_w}" height="{px_h}" '
        f'font-family="{_FONT}" class="qwirkle-board" role="img">'
    )
    out.append(f"<title>{html.escape(status, quote=False)}</title>")
    if defs:
        out.append(tile_defs())
    out.append(f'<rect x="0" y="0" width="{width}" height="{height}" fill="{_PANEL}"/>')
    out.append(f'<rect x="{left}" y="{top}" width="{bw}" height="{bh}" fill="{_FELT}" class="felt"/>')
    grid = [f"M{left + i * CELL} {top}v{bh}" for i in range(1, ncols)]
    grid += [f"M{left} {top + i * CELL}h{bw}" for i in range(1, nrows)]
    if grid:
        out.append(f'<path d="{"".join(grid)}" stroke="#ffffff" stroke-opacity="0.07" stroke-width="1"/>')
    if coordinates:
        for c in range(c0, c1 + 1):
            x, _ = xy(r0, c)
            out.append(
                _text(x + CELL / 2, top - 6, str(c), size=11, fill=_MUTED, anchor="middle", extra=f' data-col="{c}"')
            )
        for r in range(r0, r1 + 1):
            _, y = xy(r, c0)
            out.append(
                _text(left - 5, y + CELL / 2 + 4, str(r), size=11, fill=_MUTED, anchor="end", extra=f' data-row="{r}"')
            )
    for (r, c), t in sorted(scene.board.items()):
        x, y = xy(r, c)
        code = tile_code(t)
        out.append(_tile(code, x, y, CELL, f' class="tile" data-cell="{r},{c}" data-tile="{code}"'))
    for r, c in highlight:
        x, y = xy(r, c)
        out.append(
            f'<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{_ACCENT}" fill-opacity="0.35" '
            f'class="highlight" data-cell="{r},{c}"/>'
        )
    for r, c in targets:
        x, y = xy(r, c)
        out.append(
            f'<rect x="{x + 3}" y="{y + 3}" width="{CELL - 6}" height="{CELL - 6}" rx="6" fill="{_TARGET}" '
            f'fill-opacity="0.22" stroke="{_TARGET}" stroke-width="2" stroke-dasharray="5 4" '
            f'class="target" data-cell="{r},{c}"/>'
        )
    for r, c in last:
        x, y = xy(r, c)
        out.append(
            f'<rect x="{x + 1}" y="{y + 1}" width="{CELL - 2}" height="{CELL - 2}" rx="5" fill="none" '
            f'stroke="{_ACCENT}" stroke-width="2.5" class="last-move" data-cell="{r},{c}"/>'
        )
    # the seats: marker, name, score, tiles held, and the hand where it is shown
    y = top + bh + 10
    for p in range(n):
        h = rows_h[p]
        mid = y + h / 2 + 4
        won = scene.over and scene.winner == p
        mark = "★" if won else "▶" if not scene.over and p == scene.current_player else ""
        out.append(_text(_PAD, mid, mark, fill=_ACCENT))
        weight = ' font-weight="700"' if p == scene.viewer or won else ""
        out.append(_text(_PAD + 16, mid, labels[p], extra=f' class="seat" data-seat="{p}"{weight}'))
        out.append(
            _text(hand_x - 10, mid, str(scene.scores[p]), anchor="end", extra=f' class="score" data-seat="{p}"{weight}')
        )
        hand = scene.hands[p]
        if p in shown and scene.hand_sizes[p]:
            for i in range(scene.hand_sizes[p]):
                x = hand_x + i * (_HAND_TILE + 3)
                if hand is None:
                    out.append(_tile("back", x, y + 3, _HAND_TILE, f' class="tile-back" data-seat="{p}"'))
                else:
                    code = tile_code(hand[i])
                    out.append(
                        _tile(code, x, y + 3, _HAND_TILE, f' class="hand-tile" data-seat="{p}" data-tile="{code}"')
                    )
        else:
            held = scene.hand_sizes[p]
            out.append(_text(hand_x, mid, f"{held} tile{'s' * (held != 1)}", fill=_MUTED, extra=' class="held"'))
        y += h
    out.append(_text(_PAD, y + 18, status, fill=_MUTED, extra=' class="status"'))
    out.append("</svg>")
    return Svg("".join(out))


# -- a game record as a page -----------------------------------------------------------


@dataclass(frozen=True)
class Frame:
    """One step of a record page: the picture after an action (or the start) and the
    action's line in the move list (None for the start)."""

    svg: str
    caption: str
    line: str | None
    note: str | None


_PAGE_CSS = """
#ID{font:14px/1.4 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#f1efe8;background:#20262b;
padding:10px;border-radius:8px;max-width:1100px}
#ID .qc-step{position:absolute;opacity:0;width:1px;height:1px;margin:0}
#ID .qc-main{display:flex;gap:14px;align-items:flex-start;flex-wrap:wrap}
#ID .qc-frames{flex:1 1 420px;min-width:0}
#ID .qc-frame{display:none}
#ID .qc-frame svg{max-width:100%;height:auto;display:block}
#ID nav{display:flex;gap:6px;align-items:center;margin:0 0 8px}
#ID nav label{cursor:pointer;border:1px solid #47525b;border-radius:6px;padding:2px 10px;background:#2a3137}
#ID nav label.off{opacity:.35;pointer-events:none}
#ID nav span{color:#b9c4bd;margin-left:6px}
#ID .qc-moves{flex:0 1 340px;max-height:560px;overflow-y:auto;margin:0;padding-left:2.6em;
font-family:ui-monospace,Menlo,monospace;font-size:12px}
#ID .qc-moves label{cursor:pointer;display:block;border-radius:4px;padding:0 4px}
#ID .qc-moves label:hover{background:#2a3137}
#ID .qc-moves .note{color:#b9c4bd;padding-left:4px}
#ID h3{margin:0 0 8px;font-size:15px;color:#f5c542}
"""


def record_page(frames: Sequence[Frame], title: str, *, page_id: str, document: bool) -> str:
    """A self-contained HTML page (``document=True``) or fragment stepping through
    ``frames``: first / previous / next / last, a clickable move list, each frame's
    picture. No script and no network resource: the steps are radio buttons and CSS, so
    the page works where scripts are not run (a notebook that is not trusted); the arrow
    keys step once a button has the focus. ``page_id`` makes the ids unique on a page."""
    pid = page_id
    last = len(frames) - 1
    rules = [_PAGE_CSS.replace("#ID", f"#{pid}")]
    for i in range(len(frames)):
        rules.append(
            f"#{pid}-{i}:checked~.qc-main .f{i}{{display:block}}"
            f"#{pid}-{i}:checked~.qc-main .m{i}>label{{background:#6b5a1e;color:#fff}}"
        )
    out = [f'<div class="qwirkle-record" id="{pid}"><style>{"".join(rules)}</style>']
    out.append(f'<svg width="0" height="0" style="position:absolute" aria-hidden="true">{tile_defs()}</svg>')
    out.append(f"<h3>{html.escape(title)}</h3>")
    for i in range(len(frames)):
        checked = " checked" if i == last else ""
        out.append(f'<input type="radio" class="qc-step" name="{pid}" id="{pid}-{i}" aria-label="step {i}"{checked}>')
    out.append('<div class="qc-main"><div class="qc-frames">')
    for i, f in enumerate(frames):

        def nav(target: int, text: str, what: str, i: int = i) -> str:
            off = ' class="off"' if target == i or not 0 <= target <= last else ""
            return f'<label for="{pid}-{max(0, min(last, target))}" title="{what}"{off}>{text}</label>'

        out.append(f'<div class="qc-frame f{i}" data-step="{i}"><nav>')
        out.append(
            nav(0, "«", "first") + nav(i - 1, "‹", "previous") + nav(i + 1, "›", "next") + nav(last, "»", "last")
        )
        out.append(f"<span>{html.escape(f.caption)}</span></nav>{f.svg}</div>")
    out.append('</div><ol class="qc-moves" start="1">')
    for i, f in enumerate(frames):
        if f.line is None:
            continue
        note = f'<div class="note">{html.escape(f.note)}</div>' if f.note else ""
        out.append(f'<li class="m{i}"><label for="{pid}-{i}">{html.escape(f.line)}</label>{note}</li>')
    out.append("</ol></div></div>")
    body = "".join(out)
    if not document:
        return body
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title></head>"
        f'<body style="margin:0;background:#14181b;padding:12px">{body}</body></html>\n'
    )

"""A deliberately slow, obviously-correct Qwirkle rules reference.

Written straight from the rule text, by brute force, and independent of the
engine in ``src/``.  Nothing here imports ``qwirkle_core``.

Tiles are ints ``t = color * 6 + shape`` (0..35).  A board is a plain
``dict[(row, col), tile]``; a placement is a collection of ``(row, col, tile)``.

Rules implemented here:

* A *line* is a maximal run of >= 2 tiles that are edge-adjacent in one row or
  one column.  A line is valid iff it is all one colour with all shapes
  different, or all one shape with all colours different (hence <= 6 tiles and
  no repeated tile).
* A placement puts 1..6 tiles from the hand in one row or one column; together
  with the tiles already on the board the placed tiles form one contiguous run
  (old tiles may sit between placed ones, an empty cell may not); at least one
  placed tile is edge-adjacent to an old tile (unless the board is empty);
  every maximal line through a placed tile is valid.
* Score: for every distinct line (maximal run of length >= 2) containing a
  placed tile, its length, +6 if its length is 6.  A lone tile forming no line
  (only possible as an opening) scores 1.
* Opening on an empty board: the cells (0,0), (0,1), ..., (0,n-1).  With
  ``opening_len`` given, n must equal it; with ``None`` any n in 1..6.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

N_COLORS = 6
N_SHAPES = 6
MAX_LINE = 6
HAND_SIZE = 6

DIRECTIONS = ((0, 1), (1, 0))  # along a row, along a column
NEIGHBOURS = ((0, 1), (0, -1), (1, 0), (-1, 0))


def color(t: int) -> int:
    return t // N_SHAPES


def shape(t: int) -> int:
    return t % N_SHAPES


# --------------------------------------------------------------------------
# lines


def naive_is_valid_line(tiles: Iterable[int]) -> bool:
    """True iff ``tiles`` (a line, any order) obeys the colour/shape rule.

    A run of 0 or 1 tiles is not a line and is trivially fine.
    """
    tiles = list(tiles)
    if len(tiles) <= 1:
        return True
    if len(tiles) > MAX_LINE:
        return False
    colors = [color(t) for t in tiles]
    shapes = [shape(t) for t in tiles]
    same_color_all_shapes_differ = len(set(colors)) == 1 and len(set(shapes)) == len(tiles)
    same_shape_all_colors_differ = len(set(shapes)) == 1 and len(set(colors)) == len(tiles)
    return same_color_all_shapes_differ or same_shape_all_colors_differ


def run_through(board: dict, cell: tuple[int, int], direction) -> list:
    """Cells of the maximal run of occupied cells through ``cell`` (which must
    be occupied) along ``direction``, sorted from low to high."""
    dr, dc = direction
    r, c = cell
    start = 0
    while (r + (start - 1) * dr, c + (start - 1) * dc) in board:
        start -= 1
    end = 0
    while (r + (end + 1) * dr, c + (end + 1) * dc) in board:
        end += 1
    return [(r + i * dr, c + i * dc) for i in range(start, end + 1)]


def all_lines(board: dict) -> list[list]:
    """Every maximal run of length >= 2 on the board (each exactly once)."""
    seen = set()
    out = []
    for cell in board:
        for d in DIRECTIONS:
            run = run_through(board, cell, d)
            if len(run) >= 2 and (run[0], d) not in seen:
                seen.add((run[0], d))
                out.append(run)
    return out


def board_is_valid(board: dict) -> bool:
    """All lines valid and all tiles edge-connected (an empty board is valid)."""
    if not board:
        return True
    for run in all_lines(board):
        if not naive_is_valid_line(board[c] for c in run):
            return False
    start = next(iter(board))
    seen = {start}
    stack = [start]
    while stack:
        r, c = stack.pop()
        for dr, dc in NEIGHBOURS:
            n = (r + dr, c + dc)
            if n in board and n not in seen:
                seen.add(n)
                stack.append(n)
    return len(seen) == len(board)


# --------------------------------------------------------------------------
# scoring and legality of one placement


def _as_set(placements) -> frozenset:
    return frozenset((int(r), int(c), int(t)) for r, c, t in placements)


def naive_score(board: dict, placements) -> int:
    """Points for putting ``placements`` on ``board`` (legality not checked)."""
    placements = _as_set(placements)
    new_board = dict(board)
    for r, c, t in placements:
        new_board[(r, c)] = t
    lines = set()
    for r, c, _ in placements:
        for d in DIRECTIONS:
            run = run_through(new_board, (r, c), d)
            if len(run) >= 2:
                lines.add(tuple(run))
    if not lines:
        return 1  # a lone tile forming no line
    return sum(len(run) + (6 if len(run) == MAX_LINE else 0) for run in lines)


def naive_is_legal(board: dict, hand, placements, opening_len: int | None = None) -> bool:
    """Check one placement against every rule, directly."""
    placements = list(placements)
    if not 1 <= len(placements) <= HAND_SIZE:
        return False
    cells = [(r, c) for r, c, _ in placements]
    if len(set(cells)) != len(cells):
        return False
    if any(cell in board for cell in cells):
        return False
    # the tiles must come from the hand, respecting multiplicities
    need = Counter(t for _, _, t in placements)
    have = Counter(hand)
    if any(need[t] > have[t] for t in need):
        return False
    rows = {r for r, _ in cells}
    cols = {c for _, c in cells}
    if len(rows) != 1 and len(cols) != 1:
        return False
    new_board = dict(board)
    for r, c, t in placements:
        new_board[(r, c)] = t
    # contiguity: every cell between the extreme placed cells is occupied
    if len(rows) == 1:
        (r,) = rows
        span = [(r, c) for c in range(min(cols), max(cols) + 1)]
    else:
        (c,) = cols
        span = [(r, c) for r in range(min(rows), max(rows) + 1)]
    if any(cell not in new_board for cell in span):
        return False
    if not board:
        # opening: the horizontal line starting at (0,0)
        n = len(placements)
        if sorted(cells) != [(0, i) for i in range(n)]:
            return False
        if opening_len is not None and n != opening_len:
            return False
    else:
        touches = any((r + dr, c + dc) in board for r, c in cells for dr, dc in NEIGHBOURS)
        if not touches:
            return False
    for cell in cells:
        for d in DIRECTIONS:
            run = run_through(new_board, cell, d)
            if not naive_is_valid_line(new_board[x] for x in run):
                return False
    return True


# --------------------------------------------------------------------------
# enumeration


def largest_group(hand) -> int:
    """max over colours of #distinct shapes of that colour in hand, and over
    shapes of #distinct colours of that shape in hand."""
    best = 0
    for k in range(N_COLORS):
        best = max(best, len({shape(t) for t in hand if color(t) == k}))
    for k in range(N_SHAPES):
        best = max(best, len({color(t) for t in hand if shape(t) == k}))
    return best


def _fits_alone(board: dict, cell, t) -> bool:
    """Whether every maximal run through ``cell`` is valid when ``t`` alone is
    put there.  Necessary for ``t`` to be placed at ``cell`` in any placement:
    with more tiles placed, the runs through ``cell`` only grow, and a piece of
    a valid line is valid."""
    trial = dict(board)
    trial[cell] = t
    return all(naive_is_valid_line(trial[x] for x in run_through(trial, cell, d)) for d in DIRECTIONS)


def _fillings(board: dict, cells: list, counts: Counter, fits=None):
    """Yield every way (as a list of tiles, one per cell) to fill ``cells``
    from the tile multiset ``counts``.  Each distinct assignment is yielded
    once.  Pruning: after every assignment, every maximal run through the
    newly assigned cell on the partially filled board must be a valid line.
    This is sound because such a run is a contiguous piece of the final
    maximal run, and any piece of a valid line is itself valid.  ``fits``
    (optional) maps a cell to the tiles that fit it alone (see _fits_alone);
    other tiles are skipped, which is sound for the same reason."""
    if not cells:
        yield []
        return
    cell, rest = cells[0], cells[1:]
    for t in sorted(counts):
        if counts[t] == 0:
            continue
        if fits is not None and t not in fits[cell]:
            continue
        board[cell] = t
        ok = all(naive_is_valid_line(board[x] for x in run_through(board, cell, d)) for d in DIRECTIONS)
        if ok:
            counts[t] -= 1
            for tail in _fillings(board, rest, counts, fits):
                yield [t] + tail
            counts[t] += 1
        del board[cell]


def naive_legal_placements(board: dict, hand, opening_len: int | None = None) -> dict[frozenset, int]:
    """All legal placements, as ``{frozenset((row, col, tile), ...): score}``.

    ``opening_len`` only matters on an empty board: the exact number of tiles
    an opening must have, or ``None`` for "any 1..6".
    """
    board = dict(board)
    hand = [int(t) for t in hand]
    result: dict[frozenset, int] = {}
    counts = Counter(hand)

    if not board:
        lengths = range(1, min(MAX_LINE, len(hand)) + 1)
        if opening_len is not None:
            lengths = [opening_len] if 1 <= opening_len <= len(hand) else []
        for n in lengths:
            cells = [(0, i) for i in range(n)]
            for tiles in _fillings(dict(board), cells, Counter(counts)):
                placement = frozenset((r, c, t) for (r, c), t in zip(cells, tiles))
                assert naive_is_legal(board, hand, placement, opening_len)
                result[placement] = naive_score(board, placement)
        return result

    rows = [r for r, _ in board]
    cols = [c for _, c in board]
    fits = {}  # empty cell -> the hand tiles that fit there alone

    def fits_of(cell):
        if cell not in fits:
            fits[cell] = {t for t in counts if _fits_alone(board, cell, t)}
        return fits[cell]

    # A window is a run of consecutive cells along one row/column; its empty
    # cells are exactly the placed cells, so the run is contiguous by
    # construction.  The window is part of one line, so it is at most
    # MAX_LINE long, and a placed tile must touch the board, so the window's
    # row (for horizontal windows) lies within one of the board's rows.
    for dr, dc in DIRECTIONS:
        if (dr, dc) == (0, 1):
            starts = [
                (r, c) for r in range(min(rows) - 1, max(rows) + 2) for c in range(min(cols) - MAX_LINE, max(cols) + 2)
            ]
        else:
            starts = [
                (r, c) for c in range(min(cols) - 1, max(cols) + 2) for r in range(min(rows) - MAX_LINE, max(rows) + 2)
            ]
        for r0, c0 in starts:
            for length in range(1, MAX_LINE + 1):
                window = [(r0 + i * dr, c0 + i * dc) for i in range(length)]
                empty = [cell for cell in window if cell not in board]
                if not empty or len(empty) > len(hand):
                    continue
                if not any((r + a, c + b) in board for r, c in empty for a, b in NEIGHBOURS):
                    continue
                if not all(fits_of(cell) for cell in empty):
                    continue
                for tiles in _fillings(dict(board), empty, Counter(counts), fits):
                    placement = frozenset((r, c, t) for (r, c), t in zip(empty, tiles))
                    if placement in result:
                        continue
                    if naive_is_legal(board, hand, placement, opening_len):
                        result[placement] = naive_score(board, placement)
    return result


# --------------------------------------------------------------------------
# Qwirkle Cubes (MindWare): the rule summaries, as docs/rules.md states them
#
# * 90 cubes, 15 of each colour; a cube shows one face, a tile (colour, shape),
#   and a roll changes its shape, never its colour.  Placements are checked and
#   scored exactly as above; a hand may hold any number of cubes showing the same
#   tile (naive_legal_placements already takes the hand as a multiset).
# * Opening (seat 0, under the largest-group rule): play as many cubes as share a
#   colour or a shape; a hand of two or more cubes of which no two share a colour
#   or a shape must be re-rolled, all of it, before anything is played.
# * A player who cannot place re-rolls all cubes until a placement exists; when no
#   face of any colour the player holds fits any cell, no roll can help: pass.

CUBES = 90
CUBES_PER_COLOR = 15


def naive_cubes_stuck(board: dict, hand) -> bool:
    """No face of any colour in ``hand`` can be placed alone next to the board
    (a placement always has a tile next to the board, and a piece of a valid
    line is valid, so then no roll of the hand has a placement)."""
    if not board:
        return False
    empty = {(r + a, c + b) for r, c in board for a, b in NEIGHBOURS} - set(board)
    for k in {color(t) for t in hand}:
        for s in range(N_SHAPES):
            t = k * N_SHAPES + s
            if any(naive_is_legal(board, [t], [(r, c, t)]) for r, c in empty):
                return False
    return True


def naive_cubes_opening_blocked(board: dict, hand, opening: str = "largest_group") -> bool:
    """The opener must re-roll all its cubes before opening."""
    return not board and opening == "largest_group" and len(hand) >= 2 and largest_group(hand) < 2

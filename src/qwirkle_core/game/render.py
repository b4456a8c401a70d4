"""Board pictures: :func:`svg` (``qc.svg``), in the spirit of python-chess's ``chess.svg``.

A picture of a :class:`~qwirkle_core.game.game.Game` or a
:class:`~qwirkle_core.game.position.Position` may show every hand; a picture of an
:class:`~qwirkle_core.game.observation.Observation` shows only what its seat may see
(its own hand; of the others only how many tiles they hold). See docs/pictures.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._checks import check_coord
from .game import Game
from .move import Move, MoveKind
from .observation import Observation, observation_scene
from .picture import Scene, Svg, draw, last_of
from .position import Position, position_scene
from .tiles import check_tile, parse_tile, tile_code

__all__ = ["svg"]

_HANDS = ("current", "all", "none")
MAX_SIZE = 20_000
"""The largest ``size`` (pixels) :func:`svg` draws."""


def svg(
    obj: Game | Position | Observation,
    *,
    lastmove: Move | str | None = None,
    highlight: Iterable[tuple[int, int]] = (),
    legal_cells: bool | int | str = False,
    coordinates: bool = True,
    hands: str = "current",
    size: int | None = None,
) -> Svg:
    """The picture of a game, a position or an observation, as SVG text.

    Tiles are drawn in the web board's colours and shapes; below the board, one line
    per seat (a ▶ marks the player to move, a ★ the winner) with its score and its hand
    or the number of tiles it holds, then the status: who is to move, the tiles left in
    the bag, the turn and the last move. In a notebook the result shows as a picture
    (it is a ``str`` with ``_repr_svg_``); ``Game``, ``Position`` and ``Observation``
    also show as pictures by themselves (a game with its last action outlined).

    >>> import qwirkle_core as qc
    >>> g = qc.Game(players=2, seed=1)
    >>> g.play("O5@0,0 G5@0,1 B5@0,2")
    3
    >>> picture = qc.svg(g, lastmove="O5@0,0 G5@0,1 B5@0,2", legal_cells=True, size=400)
    >>> picture.startswith("<svg")
    True

    Parameters
    ----------
    obj
        a :class:`Game`, a :class:`Position` or an :class:`Observation`.
    lastmove
        a :class:`Move` or its text, outlined on the board (a placement, whose tiles
        must be on the board at its cells) and written in the status line (an exchange
        as the number of tiles only). None: no last move.
    highlight
        ``(row, col)`` cells to tint.
    legal_cells
        ``False``; a tile of the hand of the player to move (an int 0..35 or a code such
        as ``"B5"``): the cells where some legal placement puts that tile, as the web
        board marks them; ``True``: those of every tile of that hand. An observation
        knows that hand only when its seat is to move.
    coordinates
        write the row numbers along the left edge and the column numbers along the top
        (the notation's ``ROW,COL``: rows grow downward, columns rightward).
    hands
        ``"current"``: the hand of the player to move (of an observation: its own seat's
        hand); ``"all"``: every hand (of an observation: its own, and the other seats'
        as face-down tiles, except in Qwirkle Cubes where hands are open); ``"none"``.
    size
        the width in pixels (the height follows); None: 40 pixels per cell.

    Returns
    -------
    Svg
        the SVG text (a ``str``): one ``<use class="tile" data-cell="ROW,COL"
        data-tile="R1">`` per board tile.

    Raises
    ------
    TypeError, ValueError
        naming the bad argument.
    """
    if isinstance(obj, Game):
        scene = position_scene(obj.position())
    elif isinstance(obj, Position):
        scene = position_scene(obj)
    elif isinstance(obj, Observation):
        scene = observation_scene(obj)
    else:
        raise TypeError(f"svg() draws a Game, a Position or an Observation, not {type(obj).__name__}")
    if not isinstance(hands, str):
        raise TypeError(f"hands must be one of {', '.join(map(repr, _HANDS))}, not {type(hands).__name__}")
    if hands not in _HANDS:
        raise ValueError(f"hands must be one of {', '.join(map(repr, _HANDS))}, not {hands!r}")
    if not isinstance(coordinates, bool):
        raise TypeError(f"coordinates must be True or False, not {coordinates!r}")
    if size is not None and (isinstance(size, bool) or not isinstance(size, int)):
        raise TypeError(f"size must be an int (pixels) or None, not {type(size).__name__}")
    if size is not None and not 1 <= size <= MAX_SIZE:
        raise ValueError(f"size must be 1 to {MAX_SIZE} pixels, not {size}")
    cells = _cells(highlight)
    last, last_text = last_of(_lastmove(lastmove, scene))
    targets = _legal_cells(obj, scene, legal_cells)
    return draw(
        scene,
        last=last,
        last_text=last_text,
        highlight=cells,
        targets=targets,
        coordinates=coordinates,
        hands=hands,
        size=size,
    )


def _cells(highlight: Any) -> list[tuple[int, int]]:
    if isinstance(highlight, (str, bytes)) or not isinstance(highlight, Iterable):
        raise TypeError(f"highlight must be an iterable of (row, col) pairs, not {highlight!r}")
    out = []
    for cell in highlight:
        if isinstance(cell, (str, bytes)) or not isinstance(cell, Iterable):
            raise TypeError(f"highlight must be an iterable of (row, col) pairs; {cell!r} is not a pair")
        pair = tuple(cell)
        if len(pair) != 2:
            raise ValueError(f"highlight must be an iterable of (row, col) pairs; {cell!r} is not a pair")
        rc = (check_coord(pair[0], "highlight row"), check_coord(pair[1], "highlight col"))
        if rc not in out:
            out.append(rc)
    return out


def _lastmove(lastmove: Any, scene: Scene) -> Move | None:
    if lastmove is None:
        return None
    if isinstance(lastmove, str):
        move = Move.parse(lastmove)
    elif isinstance(lastmove, Move):
        move = lastmove
    else:
        raise TypeError(f"lastmove must be a Move, its text or None, not {type(lastmove).__name__}")
    if move.kind is MoveKind.PLACE:
        for r, c, t in move.placements:
            held = scene.board.get((r, c))
            if held != t:
                there = "is empty" if held is None else f"holds {tile_code(held)}"
                raise ValueError(f"lastmove puts {tile_code(t)} at {r},{c}, but that cell {there}")
    return move


def _legal_cells(obj: Game | Position | Observation, scene: Scene, legal_cells: Any) -> list[tuple[int, int]]:
    if legal_cells is False:
        return []
    p = scene.current_player
    hand = scene.hands[p]
    if isinstance(obj, Observation) and obj.player != p and not obj.rules.cubes:
        raise ValueError(
            f"legal_cells: this observation is seat {obj.player}'s, and seat {p} is to move, whose hand it cannot see"
        )
    assert hand is not None
    if legal_cells is True:
        wanted = set(hand)
    elif isinstance(legal_cells, (int, str)) and not isinstance(legal_cells, bool):
        t = parse_tile(legal_cells) if isinstance(legal_cells, str) else check_tile(legal_cells)
        if t not in hand:
            held = " ".join(tile_code(x) for x in hand) or "nothing"
            raise ValueError(f"legal_cells: {tile_code(t)} is not in the hand of seat {p} to move ({held})")
        wanted = {t}
    else:
        raise TypeError(f"legal_cells must be True, False or a tile of the hand, not {legal_cells!r}")
    if scene.over:
        return []
    game = _game_of(obj)
    cells = {(r, c) for m in game.legal_moves() for r, c, t in m.placements if t in wanted}
    return sorted(cells)


def _game_of(obj: Game | Position | Observation) -> Game:
    """A game with the same legal placements for the player to move."""
    if isinstance(obj, Game):
        return obj
    if isinstance(obj, Position):
        return Game.from_dict(obj.to_dict())
    # an observation of the seat to move: the board and that hand fix the placements;
    # the other seats get unseen tiles (or their open cubes) so the position is complete
    p = obj.current_player
    if obj.hands is not None:
        hands = [list(h) for h in obj.hands]
    else:
        unseen = list(obj.unseen or ())
        hands = []
        for q, n in enumerate(obj.hand_sizes):
            if q == p:
                hands.append(list(obj.hand))
                continue
            h: list[int] = []
            for t in range(len(unseen)):
                while unseen[t] and len(h) < n:
                    unseen[t] -= 1
                    h.append(t)
            hands.append(h)
    return Game.from_position(dict(obj.board), hands, scores=obj.scores, current_player=p, rules=obj.rules, seed=0)

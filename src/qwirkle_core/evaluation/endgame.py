"""The exact endgame solver: best play once the bag is empty (two players).

See docs/agents.md ("The exact endgame solver") and :mod:`qwirkle_core._kernels.endgame` for the search.
"""

import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._kernels import endgame as _eg
from ..game.game import Game
from ..game.move import Move

__all__ = ["EndgameResult", "solve_endgame"]

# Table entries: 2**20 (24 MB). One workspace per thread, kept between calls: each
# solve starts a new table generation, so results never depend on earlier calls.
_TT_BITS = 20
_local = threading.local()


def _workspace() -> Any:
    if not hasattr(_local, "ws"):
        _local.ws = _eg.new_workspace(_TT_BITS)
    return _local.ws


_KINDS = {_eg.EXACT_VALUE: "exact", _eg.LOWER_BOUND: "lower_bound", _eg.ESTIMATE: "estimate"}


@dataclass(frozen=True)
class EndgameResult:
    """The outcome of :func:`solve_endgame`, from the point of view of ``player``.

    Attributes
    ----------
    move
        the action chosen: a placement (a :class:`Move` whose ``.score`` is its
        points, without the going-out bonus), or ``Move.pass_turn()`` when the
        player has no placement.
    value
        the final score margin of ``player`` (their final score minus the
        opponent's), the going-out bonus included, as ``kind`` says:
    kind
        ``"exact"``: the margin under best play by both sides, and ``move`` is a
        best move. ``"lower_bound"``: a limit stopped the search after some moves
        were searched to the end; ``move`` is the best of them and guarantees at
        least ``value``. ``"estimate"``: a limit stopped the search sooner;
        ``value`` counts the points of the next two placements at most (``depth``).
    nodes
        positions searched.
    depth
        the longest line searched, in placements. An estimate of depth 0 means
        no search completed: ``move`` is then the placement of the most points
        and ``value`` counts only its points.
    principal_variation
        ``move``, then (exact results only) move after move a move
        the search proved to keep ``value``, as far as its table holds the proofs
        (it may stop before the end of the game).
    player
        the seat to move.

    """

    move: Move
    value: int
    kind: str
    nodes: int
    depth: int
    principal_variation: tuple[Move, ...]
    player: int

    @property
    def exact(self) -> bool:
        """Whether ``value`` is the exact result of best play."""
        return self.kind == "exact"


def _limit(value: Any, name: str, types: type | tuple[type, ...], what: str) -> Any:
    """A positive limit of one of ``types`` (0 for None); ``what`` names the types."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, types):
        raise TypeError(f"{name} must be {what} or None, not {value!r}")
    if not value > 0:  # type: ignore[operator]
        raise ValueError(f"{name} must be positive, not {value!r}")
    return value


def _move(row: np.ndarray) -> Move:
    """The :class:`Move` of a kernel output row (see ``_kernels.endgame``)."""
    n = int(row[_eg.O_N])
    if n == 0:
        return Move.pass_turn()
    cells = zip(
        row[_eg.O_ROW : _eg.O_ROW + n].tolist(),
        row[_eg.O_COL : _eg.O_COL + n].tolist(),
        row[_eg.O_TILE : _eg.O_TILE + n].tolist(),
    )
    return Move(cells, score=int(row[_eg.O_POINTS]))


def solve_endgame(game: Game, max_nodes: int | None = None, time_ms: float | None = None) -> EndgameResult:
    """The best action and the final score margin under best play, once the bag is empty.

    With an empty bag each player knows both hands, so the rest of a two-player game is
    solved exactly by alpha-beta search (iterative deepening, a transposition table).
    When a bound stops the search, the result says what it knows (a lower bound or an
    estimate, see :class:`EndgameResult`) and ``move`` is still a legal action. The game
    is not changed.

    Parameters
    ----------
    game
        a two-player tile game whose bag is empty.
    max_nodes
        at most this many positions (default: no bound).
    time_ms
        at most this many milliseconds of search (default: no bound).

    Returns
    -------
    EndgameResult

    Raises
    ------
    TypeError
        ``game`` is not a :class:`Game`, ``max_nodes`` not an int or ``time_ms`` not a
        number.
    ValueError
        a limit is not positive, the game is over, the bag is not empty, the game has more
        than two players, or it is Qwirkle Cubes.
    """
    if not isinstance(game, Game):
        raise TypeError(f"game must be a qwirkle_core.Game, not {type(game).__name__}")
    max_nodes = min(int(_limit(max_nodes, "max_nodes", (int, np.integer), "an int")), 2**62)
    time_ms = float(_limit(time_ms, "time_ms", (int, float, np.integer, np.floating), "a number"))
    if game.players != 2:
        raise ValueError(
            f"the endgame solver handles two-player games only, not {game.players} players "
            "(with more players the game is no longer a two-sided contest)"
        )
    if game.rules.cubes:
        raise ValueError(
            "the endgame solver is for the tile game: in Qwirkle Cubes re-rolls keep the endgame a game of chance"
        )
    if game.is_over:
        raise ValueError("the game is over: there is no endgame left to solve")
    if game.bag_size:
        raise ValueError(f"the bag still holds {game.bag_size} tiles: the endgame starts when it is empty")
    a = game.kernel_arrays()
    board, cross, anchors, bmeta, hands, gmeta = a.board, a.cross, a.anchors, a.bmeta, a.hands, a.gmeta
    ws = _workspace()
    # Copies: the search changes the board arrays while it runs (and restores them).
    value, kind, depth, nodes, pv_len = _eg.solve(
        ws, board.copy(), cross.copy(), anchors.copy(), bmeta.copy(), hands, gmeta, max_nodes, time_ms
    )
    player = game.current_player
    scores = game.scores
    return EndgameResult(
        move=_move(ws[_eg.W_BEST]),
        value=int(value) + scores[player] - scores[1 - player],
        kind=_KINDS[int(kind)],
        nodes=int(nodes),
        depth=int(depth),
        principal_variation=tuple(_move(ws[_eg.W_PV][k]) for k in range(pv_len)),
        player=player,
    )

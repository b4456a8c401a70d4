"""``Game``: the Python face of the rules engine.

A ``Game`` owns the numpy arrays of one game (board, cross-check masks, hands, bag,
counters, random streams; see ``_kernels``). Every method checks its arguments here,
then calls a kernel; a refused action raises and changes nothing.
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np

from .._checks import COORD_LIMIT, INT_FIELD_LIMIT, check_coord, check_int, check_seed
from .._compiling import compiling, turn_notice
from .._kernels import agents as _ag
from .._kernels import board as _bd
from .._kernels import cubes as _cu
from .._kernels import layout as _lo
from .._kernels import mc as _mc
from .._kernels import movegen as _mg
from .._kernels import scoring as _sc
from .._kernels import state as _st
from .._kernels.rng import seed_streams
from ..errors import FormatError, IllegalMoveError
from .agents import AgentLike, check_cubes_agents, spec_row
from .move import Action, Move, MoveKind, moves_from_arrays
from .notation import format_view, over_text
from .observation import Observation
from .picture import draw, last_of
from .position import Position, position_scene
from .rules import Rules, resolve_rules
from .tiles import (
    COLORS,
    COPIES,
    CUBES_PER_COLOR,
    NUM_TILE_TYPES,
    NUM_TILES,
    check_color,
    check_tile,
    parse_tile,
    tile_code,
    tile_name,
)

__all__ = ["Game", "GameArrays", "MoveArrays"]

MAX_TURNS = int(_st.MAX_TURNS)


GameArrays = _lo.GameState
"""The numpy arrays of one game, in the order the kernels take them (a named tuple:
``board, cross, anchors, bmeta`` as in ``_kernels.board``, ``hands, bag, gmeta, rng``
as in ``_kernels.state``, the move generator's scratch ``gen_scratch`` and the action
word ``act``; ``_kernels.layout`` names every field). The seam through which the
modules above ``Game`` (evaluation, simulation) reach a game's state; it is not part
of the user-facing API."""


_ERRORS = {
    _sc.NOT_IN_LINE: "the tiles are not all in one row or one column",
    _sc.GAP: "the placed tiles and the tiles between them must form one unbroken line (there is a gap)",
    _sc.NOT_TOUCHING: "no placed tile touches a tile on the board",
    _sc.OPENING_PLACE: "the opening must be a horizontal line starting at (0, 0) and running right",
    _sc.TOO_LONG: "a placement has at most 6 tiles",
}


class MoveArrays(NamedTuple):
    """The legal placements of a position as arrays (:meth:`Game.legal_move_arrays`),
    ``n`` moves, move ``i`` putting down tiles ``j < counts[i]``:

    Attributes
    ----------
    rows, cols
        int64[n, 6]  the cells of its tiles (0 past ``counts[i]``)
    tiles
        int64[n, 6]  its tiles, 0..35 (-1 past ``counts[i]``)
    counts
        int64[n]     its number of tiles, 1..6
    scores
        int64[n]     its points (without the 6 for going out)

    """

    rows: np.ndarray
    cols: np.ndarray
    tiles: np.ndarray
    counts: np.ndarray
    scores: np.ndarray


# One entry of the action log: (action, the non-board arrays before it, the placement's
# (row, col, tile) triples in the order the kernel put them down).
_LogEntry = tuple[Action, tuple[np.ndarray, ...], tuple[tuple[int, int, int], ...]]


class Game:
    """A game of Qwirkle, or of Qwirkle Cubes with ``rules=Rules(variant="cubes")``.

    ``Game(players=2, seed=None, rules=None)`` shuffles the bag with the game's own
    random stream (from ``seed``, an int 0..2**64-1; a fresh random seed when None),
    deals 6 tiles to each seat and applies the opening rule: :attr:`current_player`
    is the starter, who must open. Coordinates are ``(row, col)`` ints with
    ``|row|, |col| < 2**31``; the opening's first tile is at (0, 0), rows grow downward
    and columns to the right.

    In Qwirkle Cubes a tile is the face a cube shows: the bag holds 90 cubes (15 of each
    colour), every cube drawn is rolled from the game's stream, hands are open, and a
    turn may begin with :meth:`reroll` (docs/rules.md).

    Two games compare by identity (``==`` is ``is``, and a game hashes by identity): a
    game is mutable, so equal-by-value games would change their hash as they are
    played. Compare positions with ``g.position() == h.position()`` (a frozen
    :class:`~qwirkle_core.game.position.Position`: board, hands, bag order, scores,
    random stream; the history is not part of it), or boards with ``g.board == h.board``.

    Raises TypeError/ValueError for a bad ``players``, ``seed`` or ``rules``.
    """

    def __init__(self, players: int | None = None, seed: int | None = None, rules: Rules | None = None) -> None:
        self._rules = resolve_rules(players, rules)
        self._seed = secrets.randbits(64) if seed is None else check_seed(seed)
        self._new_arrays()
        seed_streams(self._rng, np.uint64(self._seed))
        new_game = _cu.new_game if self._rules.cubes else _st.new_game
        # as Python calling its jitted parts: a first Game() compiles them, not new_game too
        new_game.py_func(self._hands, self._bag, self._gmeta, self._rng, self._rules.players, self._rules.opening_code)
        self._start_log(setup=(), dealt=True)

    # The kernels' array constructors run as Python here (``py_func``: the same numpy
    # calls): a game's first move then compiles no allocation kernels.
    def _new_arrays(self) -> None:
        self._board, self._cross, self._anchors, self._bmeta = _bd.new_board.py_func()
        self._hands, self._bag, self._gmeta, self._rng = _st.new_game_arrays.py_func()
        self._new_scratch()

    def _new_scratch(self) -> None:
        self._moves = _mg.new_move_buffer(1024)
        self._scratch = _mg.new_scratch_array.py_func()
        self._act = np.zeros(_lo.ACT_SIZE, np.int64)
        self._cells = np.zeros(6, np.int64)
        self._agent_scratch: Any = None  # made on the first play_agent, with the search
        self._agent_scratch_searches = False  # agent's 4 MB only when that agent plays

    # -- positions -----------------------------------------------------------------------

    @classmethod
    def from_position(
        cls,
        board: dict[tuple[int, int], int],
        hands: Sequence[Iterable[int]],
        bag: Iterable[int] = (),
        scores: Sequence[int] | None = None,
        current_player: int = 0,
        rules: Rules | None = None,
        seed: int | None = None,
    ) -> Game:
        """A game set up from a position.

        Parameters
        ----------
        board
            ``{(row, col): tile}``; its lines must be valid and its tiles connected.
            Empty: the current player must open (under the official rule with
            exactly their largest group).
        hands
            one iterable of 1 to 6 tiles per seat; ``len(hands)`` is the number of
            players.
        bag
            the tiles left, ``bag[0]`` drawn first. The position need not hold all
            108 tiles, but no tile may appear more than 3 times in all. In Qwirkle
            Cubes (``rules.variant == "cubes"``): the cubes' colours (ints 0..5 or
            names), rolled as they are drawn; no colour more than 15 times in all,
            board and hands included.
        scores
            one int per seat (zeros by default).
        seed
            the stream used to put exchanged tiles back into the bag.

        Notes
        -----
        Raises TypeError/ValueError naming the first problem.
        """
        if not isinstance(board, dict):
            raise TypeError(f"board must be a dict {{(row, col): tile}}, not {type(board).__name__}")
        cells = {}
        for key, t in board.items():
            try:
                r, c = key
            except (TypeError, ValueError):
                raise TypeError(f"board keys are (row, col) pairs, not {key!r}") from None
            cells[(check_coord(r, "row"), check_coord(c, "col"))] = check_tile(t)
        groups = (tuple((r, c, t) for (r, c), t in sorted(cells.items())),) if cells else ()
        hands = _check_hands(hands)
        rules = resolve_rules(len(hands), rules)
        n = rules.players
        scores = (0,) * n if scores is None else tuple(check_int(s, "score", 0, INT_FIELD_LIMIT) for s in scores)
        if len(scores) != n:
            raise ValueError(f"scores must be {n} ints, one per seat, not {len(scores)}")
        position = Position(
            rules=rules,
            seed=secrets.randbits(64) if seed is None else check_seed(seed),
            rng=(0, 0),
            board=groups,
            hands=hands,
            bag=tuple((check_color if rules.cubes else check_tile)(t) for t in bag),
            scores=scores,
            qwirkles=(0,) * n,
            current_player=check_int(current_player, "current_player", 0, n - 1),
            starting_player=0,
            turn=0,
            passes=0,
            over=False,
        )
        return cls._assemble(position, min_hand=1, counters=False)

    @classmethod
    def _assemble(cls, p: Position, min_hand: int, counters: bool) -> Game:
        """The game of position ``p``; with ``counters`` its random streams, starter,
        turn, passes, Qwirkles and end are taken from ``p`` too (a saved position),
        else the streams come from the seed (a position set up by hand)."""
        _check_supply(p, min_hand)
        g = cls.__new__(cls)
        g._rules = p.rules
        g._seed = secrets.randbits(64) if p.seed is None else p.seed
        g._new_arrays()
        seed_streams(g._rng, np.uint64(g._seed))
        gm = g._gmeta
        gm[_lo.G_PLAYERS] = p.rules.players
        gm[_lo.G_RULE_OPENING] = p.rules.opening_code
        gm[_lo.G_VARIANT] = p.rules.variant_code
        gm[_lo.G_WINNER] = -2
        for seat, hand in enumerate(p.hands):
            g._hands[seat, : len(hand)] = sorted(hand)
            gm[_lo.G_HAND + seat] = len(hand)
            gm[_lo.G_SCORE + seat] = p.scores[seat]
        g._bag[: len(p.bag)] = p.bag[::-1]
        gm[_lo.G_BAG] = len(p.bag)
        gm[_lo.G_CURRENT] = p.current_player
        g._place_groups(p.board)
        if p.board:
            gm[_lo.G_PLACED] = sum(len(group) for group in p.board)
        else:
            _st.set_opening(g._hands, gm, p.current_player)
        if counters:
            g._load_counters(p)
        g._start_log(p.board, dealt=False)
        return g

    def _load_counters(self, p: Position) -> None:
        gm = self._gmeta
        if gm[_lo.G_PLACED]:
            gm[_lo.G_STARTER] = p.starting_player
        gm[_lo.G_TURNS] = p.turn
        gm[_lo.G_PASSES] = p.passes
        gm[_lo.G_REROLLED] = p.rerolled
        gm[_lo.G_QWIRKLES : _lo.G_QWIRKLES + len(p.qwirkles)] = p.qwirkles
        self._rng[:] = np.array(p.rng, np.uint64)
        if p.over:
            _st.finish_game(gm)

    def position(self) -> Position:
        """The complete position as a :class:`~qwirkle_core.game.position.Position` value."""
        return Position(
            rules=self.rules,
            seed=self.seed,
            rng=(int(self._rng[0]), int(self._rng[1])),
            board=self._board_groups(),
            hands=tuple(self.hand(p) for p in range(self.players)),
            bag=tuple(int(t) for t in self._bag[: self.bag_size][::-1]),
            scores=self.scores,
            qwirkles=self.qwirkles,
            current_player=self.current_player,
            starting_player=self.starting_player,
            turn=self.turn,
            passes=self.passes,
            over=self.is_over,
            rerolled=bool(self._gmeta[_lo.G_REROLLED]),
        )

    def to_dict(self) -> dict[str, Any]:
        """The complete position as a JSON-ready dict (docs/position.schema.json)."""
        return self.position().to_dict()

    def to_json(self, indent: int | None = None) -> str:
        """The complete position as JSON text (docs/position.schema.json).

        ``Game.from_json(g.to_json())`` is the same game in every respect (board, hands, bag
        order, scores, turn, random streams...) and plays on identically; the action history
        is not part of it (a record is).

        Parameters
        ----------
        indent
            spaces of indentation per level (None: one line).

        Returns
        -------
        str
        """
        import json

        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: Any) -> Game:
        """The game of a position dict (see :meth:`to_dict`).

        Parameters
        ----------
        data
            a dict as :meth:`to_dict` writes it.

        Returns
        -------
        Game

        Raises
        ------
        FormatError
            naming the first problem.
        """
        position = Position.from_dict(data)
        try:
            return cls._assemble(position, min_hand=0, counters=True)
        except (TypeError, ValueError) as e:
            raise FormatError(f"position: {e}") from None

    @classmethod
    def from_json(cls, text: str | bytes) -> Game:
        """The game of a position written by :meth:`to_json`.

        Parameters
        ----------
        text
            JSON text (str or bytes).

        Returns
        -------
        Game

        Raises
        ------
        FormatError
            naming the first problem.
        """
        from .._checks import load_json

        return cls.from_dict(load_json(text, "position"))

    # -- state ---------------------------------------------------------------------------

    @property
    def rules(self) -> Rules:
        """The :class:`Rules` of the game."""
        return self._rules

    @property
    def seed(self) -> int:
        """The 64-bit seed of the game's random streams."""
        return self._seed

    @property
    def is_dealt(self) -> bool:
        """True for a game dealt by ``Game(...)`` (its seed fixes every draw), False for
        one set up by :meth:`from_position` or read by :meth:`from_json`."""
        return self._dealt

    @property
    def players(self) -> int:
        """The number of seats."""
        return int(self._gmeta[_lo.G_PLAYERS])

    @property
    def current_player(self) -> int:
        """The seat to move."""
        return int(self._gmeta[_lo.G_CURRENT])

    @property
    def starting_player(self) -> int:
        """The seat that opened (or must open)."""
        return int(self._gmeta[_lo.G_STARTER])

    @property
    def scores(self) -> tuple[int, ...]:
        """Each seat's score (going-out bonus included)."""
        return tuple(int(s) for s in self._gmeta[_lo.G_SCORE : _lo.G_SCORE + self.players])

    @property
    def qwirkles(self) -> tuple[int, ...]:
        """Qwirkles (lines of 6 completed) per seat."""
        return tuple(int(s) for s in self._gmeta[_lo.G_QWIRKLES : _lo.G_QWIRKLES + self.players])

    @property
    def bag_size(self) -> int:
        """Tiles left in the bag."""
        return int(self._gmeta[_lo.G_BAG])

    @property
    def turn(self) -> int:
        """The number of actions taken so far (placements, exchanges and passes)."""
        return int(self._gmeta[_lo.G_TURNS])

    @property
    def is_over(self) -> bool:
        """Whether the game has ended."""
        return bool(self._gmeta[_lo.G_OVER])

    @property
    def winner(self) -> int | None:
        """None while the game runs; then the winning seat, or -1 for a tie."""
        return int(self._gmeta[_lo.G_WINNER]) if self.is_over else None

    @property
    def opening_pending(self) -> bool:
        """True until the opening has been played."""
        return bool(self._gmeta[_lo.G_OPENING])

    @property
    def passes(self) -> int:
        """Passes in a row just before now (the game ends when every seat has passed)."""
        return int(self._gmeta[_lo.G_PASSES])

    @property
    def hand_sizes(self) -> tuple[int, ...]:
        """The number of tiles in each seat's hand (public information)."""
        return tuple(int(n) for n in self._gmeta[_lo.G_HAND : _lo.G_HAND + self.players])

    def _seat(self, player: int | None) -> int:
        """``player`` checked as a seat number; the current player for None."""
        if player is None:
            return self.current_player
        return check_int(player, "player", 0, self.players - 1)

    def hand(self, player: int | None = None) -> tuple[int, ...]:
        """The tiles of a player's hand, sorted.

        Parameters
        ----------
        player
            a seat, 0 .. players - 1 (default: the current player).

        Returns
        -------
        tuple of int
            tile ints 0..35, sorted.

        Raises
        ------
        TypeError, ValueError
            a bad seat.
        """
        p = self._seat(player)
        return tuple(sorted(int(t) for t in self._hands[p, : self._gmeta[_lo.G_HAND + p]]))

    @property
    def board(self) -> dict[tuple[int, int], int]:
        """A copy of the board as ``{(row, col): tile}``."""
        n = int(self._bmeta[_lo.B_TILES])
        rows, cols, tiles = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int8)
        _mc.board_tiles(self._board, self._bmeta, rows, cols, tiles)
        return {(r, c): t for r, c, t in zip(rows.tolist(), cols.tolist(), tiles.tolist())}

    def kernel_arrays(self) -> GameArrays:
        """The game's numpy arrays for the kernels (internal seam; see :class:`GameArrays`).

        The kernels may change them in place; the caller then owns keeping the action
        history consistent (the modules above ``Game`` only read them or copy them).
        """
        return _lo.GameState(
            self._board,
            self._cross,
            self._anchors,
            self._bmeta,
            self._hands,
            self._bag,
            self._gmeta,
            self._rng,
            self._scratch,
            self._act,
        )

    def copy(self) -> Game:
        """An independent copy of the game, history included."""
        g = Game.__new__(Game)
        g.__dict__.update(self.__dict__)
        for name in ("_board", "_cross", "_anchors", "_bmeta", "_hands", "_bag", "_gmeta", "_rng"):
            setattr(g, name, getattr(self, name).copy())
        g._new_scratch()
        g._log = list(self._log)
        return g

    def root(self) -> Game:
        """A copy of the game as it was before the first action of :attr:`history`."""
        g = self.copy()
        if g._log:
            g._rewind(0)
        return g

    def __repr__(self) -> str:
        state = f"over, winner {self.winner}" if self.is_over else f"player {self.current_player} to move"
        variant = " cubes" if self._rules.cubes else ""
        return (
            f"<Game{variant} players={self.players} turn={self.turn} scores={self.scores} bag={self.bag_size} {state}>"
        )

    def __str__(self) -> str:
        """The game as text: the board in the notation with its coordinates, the scores,
        the bag count and the hand of the player to move (no other hand)."""
        variant = " (Qwirkle Cubes)" if self._rules.cubes else ""
        return format_view(
            f"Game{variant}: {self.players} players, turn {self.turn}",
            self.board,
            self.scores,
            self.current_player,
            over_text(self.winner) if self.is_over else None,
            self.bag_size,
            None if self.is_over else (self.current_player, self.hand()),
            "cubes" if self._rules.cubes else "tiles",
        )

    def _repr_svg_(self) -> str:
        """The board picture with the last action outlined (``qc.svg(game, lastmove=...)``),
        shown by Jupyter."""
        cells, text = last_of(self._log[-1][0].move if self._log else None)
        return draw(position_scene(self.position()), last=cells, last_text=text)

    # -- moves ---------------------------------------------------------------------------

    def _placements(self) -> int:
        """The number of legal placements of the current player."""
        bm = self._bmeta
        near_edge = max(-bm[_lo.B_MINR], bm[_lo.B_MAXR], -bm[_lo.B_MINC], bm[_lo.B_MAXC]) >= COORD_LIMIT - 8
        return len(self.legal_moves()) if near_edge else self._generate()

    def _generate(self) -> int:
        """Fill the move buffer with the current player's placements; returns their number
        (0 while a Qwirkle Cubes opener must re-roll)."""
        if self._rules.cubes and _cu.opening_blocked(self._gmeta):
            return 0
        hand = _st.hand_mask(self._hands, self._gmeta, self.current_player)
        args = (self._board, self._cross, self._anchors, self._bmeta, hand, _st.opening_len.py_func(self._gmeta))
        n = int(_mg.generate(*args, self._moves, self._scratch, False))
        if n > len(self._moves):  # grown here, not by generate_all: one kernel less to compile
            self._moves = _mg.new_move_buffer(2 * n)
            n = int(_mg.generate(*args, self._moves, self._scratch, False))
        return n

    def legal_moves(self) -> list[Move]:
        """Every distinct legal placement for the current player, each once, with its score.

        On an empty board the openings are the horizontal lines starting at (0, 0)
        and running right (one per order of tiles). Empty when the game is over, and
        in Qwirkle Cubes when the player must re-roll (:attr:`must_reroll`).
        The same moves in the same order as :meth:`legal_move_arrays`.
        """
        return moves_from_arrays(*self.legal_move_arrays())

    def legal_move_arrays(self) -> MoveArrays:
        """Every legal placement of the current player as numpy arrays (a
        :class:`MoveArrays` of ``n`` moves, in :meth:`legal_moves` order), without
        building a :class:`Move` per placement: for code that handles all of them at
        once (the RL environment's action mask). New arrays; n = 0 when the game is over.
        """
        n = 0 if self.is_over else self._generate()
        mv = self._moves[:n]
        counts = mv[:, _lo.M_N].astype(np.int64)
        used = np.arange(6)[None, :] < counts[:, None]
        rows, cols = _bd.true_coords(self._bmeta, mv[:, _lo.M_CELL : _lo.M_CELL + 6])
        # a legal move may not leave the board (only positions within 7 cells of the limit)
        keep = (((np.abs(rows) < COORD_LIMIT) & (np.abs(cols) < COORD_LIMIT)) | ~used).all(axis=1)
        return MoveArrays(
            rows=np.where(used, rows, 0)[keep],
            cols=np.where(used, cols, 0)[keep],
            tiles=np.where(used, mv[:, _lo.M_TILE : _lo.M_TILE + 6], -1).astype(np.int64)[keep],
            counts=counts[keep],
            scores=mv[:, _lo.M_SCORE].astype(np.int64)[keep],
        )

    def has_legal_placement(self) -> bool:
        """Whether the current player can place at least one tile."""
        return not self.is_over and self._placements() > 0

    def _check_running(self) -> None:
        if self.is_over:
            raise IllegalMoveError("the game is over")

    def _check_in_hand(self, tiles: Sequence[int]) -> None:
        held = Counter(self.hand())
        for t, n in Counter(tiles).items():
            if held[t] < n:
                have = "you do not hold it" if held[t] == 0 else f"you hold {held[t]}, not {n}"
                raise IllegalMoveError(f"{tile_name(t)} ({tile_code(t)}): {have}")

    def check(self, move: Move | str | Iterable[tuple[int, int, int]]) -> int:
        """The score a placement would get now, without playing it.

        Parameters
        ----------
        move
            a :class:`Move`, its text (``"R1@0,0 R2@0,1"``) or an iterable of
            ``(row, col, tile)``.

        Returns
        -------
        int
            its points (without the 6 for going out).

        Raises
        ------
        IllegalMoveError
            it is not legal now (or is not a placement).
        TypeError, ValueError
            it is not a well-formed move.
        """
        move = _as_move(move)
        self._check_running()
        if move.kind is not MoveKind.PLACE:
            raise IllegalMoveError(f"check() takes placements; this is a {move.kind.value}")
        return self._check_placement(move)[0]

    def _check_placement(self, move: Move) -> tuple[int, int, np.ndarray, np.ndarray]:
        """(score, qwirkles, wrapped cells, tiles) of a legal placement, or IllegalMoveError."""
        if self._rules.cubes and _cu.opening_blocked(self._gmeta):
            raise IllegalMoveError("no two of the opener's cubes share a colour or a shape: re-roll all of them first")
        n = len(move.placements)
        cells = move.cells
        if len(set(cells)) != n:
            dup = next(c for c in cells if cells.count(c) > 1)
            raise IllegalMoveError(f"cell {dup} is used twice")
        self._check_in_hand(move.tiles)
        bm = self._bmeta
        if bm[_lo.B_TILES]:
            for r, c in cells:
                if not (
                    bm[_lo.B_MINR] - 7 <= r <= bm[_lo.B_MAXR] + 7 and bm[_lo.B_MINC] - 7 <= c <= bm[_lo.B_MAXC] + 7
                ):
                    raise IllegalMoveError(
                        f"cell {(r, c)} is too far from the tiles on the board to be part of a legal line"
                    )
        rows = np.array([r for r, _ in cells], np.int64)
        cols = np.array([c for _, c in cells], np.int64)
        tiles = np.array(move.tiles, np.int64)
        code, score, qw, where = _sc.check_placement(
            self._board,
            self._cross,
            self._bmeta,
            rows,
            cols,
            tiles,
            n,
            _st.opening_len.py_func(self._gmeta),
            self._cells,
        )
        if code == _sc.OK:
            return int(score), int(qw), self._cells[:n].copy(), tiles
        raise IllegalMoveError(self._explain(int(code), int(where), move))

    def _explain(self, code: int, where: int, move: Move) -> str:
        if code in _ERRORS:
            return _ERRORS[code]
        if code == _sc.OPENING_LENGTH:
            k = int(self._gmeta[_lo.G_OPEN_LEN])
            return f"the opening must have exactly {k} tiles (the largest group of one colour or one shape in the hand)"
        at = move.placements[where] if where >= 0 else None
        if code == _sc.CELL_TAKEN and at is not None:
            return f"cell {at[:2]} is already taken"
        what = f"{tile_name(at[2])} at {at[:2]}" if at else "a tile"
        in_row = len({r for r, _, _ in move.placements}) == 1
        if code == _sc.BAD_LINE:
            return (
                f"{what} does not fit the {'row' if in_row else 'column'} it is placed in: a line is one colour "
                "with different shapes or one shape with different colours, at most 6 tiles"
            )
        axis = "column" if in_row else "row"
        return f"{what} does not fit the {axis} it joins"

    def play(self, move: Move | str | Iterable[tuple[int, int, int]]) -> int:
        """Apply a move.

        A re-roll rolls its cubes as :meth:`reroll` does (faces written in the move are its
        record, not a request: :func:`~qwirkle_core.replay` compares them).

        Parameters
        ----------
        move
            a :class:`Move`, its text (``"R1@0,0 R2@0,1"``, ``"x R1"``, ``"pass"``, in
            Qwirkle Cubes ``"r R1 B4"``) or an iterable of ``(row, col, tile)``.

        Returns
        -------
        int
            the points of a placement (the +6 for going out is added to :attr:`Game.scores`
            but not returned); 0 for an exchange, a pass or a re-roll.

        Raises
        ------
        IllegalMoveError
            it is not legal now; the game is unchanged.
        TypeError, ValueError
            it is not a well-formed move.
        """
        move = _as_move(move)
        if move.kind is MoveKind.EXCHANGE:
            self.exchange(move.tiles)
            return 0
        if move.kind is MoveKind.PASS:
            self.pass_turn()
            return 0
        if move.kind is MoveKind.REROLL:
            self.reroll(move.tiles)
            return 0
        self._check_running()
        score, qw, cells, tiles = self._check_placement(move)
        player, before = self.current_player, self._snapshot()
        _bd.place_cells(self._board, self._cross, self._anchors, self._bmeta, cells, tiles, len(tiles))
        if self._rules.cubes:
            _cu.book_placement(self._hands, self._bag, self._gmeta, self._rng, tiles, len(tiles), score, qw)
        else:
            _st.after_placement(self._hands, self._bag, self._gmeta, tiles, len(tiles), score, qw)
        self._log_action(player, move, score, before, move.placements)
        return score

    def exchange(self, tiles: Iterable[int | str] | str) -> None:
        """Exchange 1..6 tiles of the current hand for as many from the bag.

        In Qwirkle Cubes only a player none of whose colours fits anywhere exchanges (a
        swap): as many of its cubes as the bag holds, the new ones rolled as they are drawn
        (docs/rules.md).

        Parameters
        ----------
        tiles
            tiles of the current hand (a tile as often as it is held): ints, or their
            codes as in :meth:`play`'s text (``["R1", "B4"]``, or one str ``"R1 B4"``).

        Raises
        ------
        IllegalMoveError
            it is not legal now; the game is unchanged.
        TypeError, ValueError
            something that is not a tile.
        """
        checked = self._check_exchange(tiles)
        player, before = self.current_player, self._snapshot()
        cubes = self._rules.cubes
        (_cu.swap if cubes else _st.exchange)(
            self._hands, self._bag, self._gmeta, self._rng, np.array(checked, np.int64), len(checked)
        )
        (_cu.end_if_dead if cubes else _st.end_if_dead)(
            self._cross, self._anchors, self._bmeta, self._hands, self._bag, self._gmeta
        )
        self._log_action(player, Move.exchange(checked), 0, before, ())

    def check_exchange(self, tiles: Iterable[int | str] | str) -> list[int]:
        """Check that exchanging ``tiles`` is legal now, without doing it.

        Parameters
        ----------
        tiles
            tiles of the current hand, as for :meth:`exchange`.

        Returns
        -------
        list of int
            the tiles.

        Raises
        ------
        IllegalMoveError
            the exchange is not legal now.
        TypeError, ValueError
            something that is not a tile.
        """
        return self._check_exchange(tiles)

    def _check_exchange(self, tiles: Iterable[int | str] | str) -> list[int]:
        self._check_running()
        if self._rules.cubes and not self._stuck():
            raise IllegalMoveError(
                "Qwirkle Cubes has no exchanges while a face of a colour you hold fits somewhere: re-roll cubes instead (r R1 B4)"
            )
        if isinstance(tiles, str):  # "R1 B4" (or "x R1 B4", the move's notation)
            words = tiles.split()
            tiles = words[1:] if words[:1] in (["x"], ["X"], ["exchange"]) else words
        checked = []
        for t in tiles:
            checked.append(parse_tile(t) if isinstance(t, str) else check_tile(t))
            if len(checked) > 6:
                raise IllegalMoveError("an exchange has 1 to 6 tiles")
        if not checked:
            raise IllegalMoveError("an exchange has 1 to 6 tiles, not 0")
        if self.opening_pending:
            raise IllegalMoveError("the opening must be played first")
        self._check_in_hand(checked)
        if len(checked) > self.bag_size:
            raise IllegalMoveError(f"the bag holds only {self.bag_size} tiles; cannot exchange {len(checked)}")
        if self._rules.cubes and len(checked) != min(len(self.hand()), self.bag_size):
            raise IllegalMoveError(
                f"none of your colours fits anywhere: swap {min(len(self.hand()), self.bag_size)} cubes (all you hold, as far as the bag allows), not {len(checked)}"
            )
        return checked

    def pass_turn(self) -> None:
        """Pass: legal only when the bag is empty and no placement is possible.

        Raises IllegalMoveError (and changes nothing) otherwise. In Qwirkle Cubes: legal
        only with an empty bag when no face of any colour the player holds fits any cell
        (so that no roll could help).
        """
        self._check_running()
        if self._rules.cubes:
            if not self._stuck():
                what = "a placement is possible" if self._placements() > 0 else "re-roll all your cubes until one fits"
                raise IllegalMoveError(
                    f"passing is only allowed when no face of any colour you hold fits anywhere; {what}"
                )
            if self.bag_size:
                raise IllegalMoveError(
                    "none of your colours fits anywhere: swap your cubes for cubes from the bag (x and your cubes)"
                )
            player, before = self.current_player, self._snapshot()
            _cu.pass_stuck(self._gmeta)
            self._log_action(player, Move.pass_turn(), 0, before, ())
            return
        if self.bag_size > 0:
            raise IllegalMoveError("passing is only allowed when the bag is empty; exchange instead")
        if self._placements() > 0:
            raise IllegalMoveError("a placement is possible, so passing is not allowed")
        player, before = self.current_player, self._snapshot()
        _st.pass_turn(self._gmeta)
        self._log_action(player, Move.pass_turn(), 0, before, ())

    def play_agent(self, agent: AgentLike) -> Action:
        """Let a built-in agent take this turn.

        The agent decides and acts exactly as inside :func:`~qwirkle_core.simulate` (same
        choices, same draws, its tie-breaks from the game's agent stream), and the action goes
        into :attr:`history` like any other, so it can be undone. In Qwirkle Cubes a turn may
        take several actions: the agent's re-rolls go into the history first, then the
        placement or pass that ends the turn.

        Parameters
        ----------
        agent
            a name with optional parameters (``"greedy"``, ``"mc:playouts=32"``), an
            :class:`~qwirkle_core.AgentSpec`, or a spec row (float64 array, as
            :meth:`AgentSpec.row` makes).

        Returns
        -------
        Action
            the action that ends the turn.

        Raises
        ------
        AgentError
            a bad agent.
        IllegalMoveError
            the game is over, or (in a position within 7 cells of the coordinate limit) the
            agent's move would leave the board; the turn is then undone.
        """
        spec = spec_row(agent)
        self._check_running()
        if self._rules.cubes:
            check_cubes_agents([spec])
        searches = int(spec[_lo.SPEC_ID]) == _lo.SEARCH
        with compiling(lambda: turn_notice(searches)):  # a first turn compiles: says so once
            if self._agent_scratch is None or (searches and not self._agent_scratch_searches):
                self._agent_scratch, self._agent_scratch_searches = _ag.new_agent_scratch(searches), searches
            if searches:
                _ag.bind_search()
            _ag.bind_for([spec])
            take_turn = _cu.take_turn if self._rules.cubes else _ag.take_turn
            start, turn_before = len(self._log), self._snapshot()
            while True:
                player, before = self.current_player, self._snapshot()
                self._moves = take_turn(spec, self.kernel_arrays(), self._moves, self._agent_scratch)
                action = self._log_act(player, before)
                if action is None:
                    del self._log[start:]
                    self._restore(turn_before, board_changed=True)
                    raise IllegalMoveError("the agent's move would leave the board (|row|, |col| < 2**31)")
                if action.move.kind is not MoveKind.REROLL:
                    return action

    def _log_act(self, player: int, before: tuple[np.ndarray, ...]) -> Action | None:
        """Log the action a kernel left in the action word (applied already), or None for
        a placement outside the coordinate range (not logged)."""
        act = self._act
        if int(act[_lo.A_KIND]) == _lo.PLACE:
            placed = self._placed(act)
            if any(not (-COORD_LIMIT < x < COORD_LIMIT) for r, c, _ in placed for x in (r, c)):
                return None
            return self._log_action(player, Move(placed), int(act[_lo.A_POINTS]), before, placed)
        return self._log_action(player, self.decode_action(act), 0, before, ())

    # -- the kernels' action rows ------------------------------------------------------------

    def encode_action(self, move: Move) -> np.ndarray:
        """The kernels' action row of ``move``, an action legal now.

        Parameters
        ----------
        move
            a placement, an exchange or a pass (a :class:`Move`).

        Returns
        -------
        numpy.ndarray
            int64[``CAND_COLS``]: the kind, the tile count, a placement's points and its
            wrapped cells and tiles, or an exchange's tiles (``_kernels.layout``'s ``A_*``).

        Raises
        ------
        IllegalMoveError
            the placement or exchange is not legal now.
        ValueError
            a re-roll (it has no action row before it is rolled).
        """
        row = np.zeros(_lo.CAND_COLS, np.int64)
        if move.kind is MoveKind.PASS:
            row[_lo.A_KIND] = _lo.PASS
        elif move.kind is MoveKind.EXCHANGE:
            self.check_exchange(move.tiles)
            row[_lo.A_KIND], row[_lo.A_N] = _lo.EXCHANGE, len(move.tiles)
            row[_lo.A_TILE : _lo.A_TILE + len(move.tiles)] = move.tiles
        elif move.kind is MoveKind.PLACE:
            row[_lo.A_KIND], row[_lo.A_N], row[_lo.A_POINTS] = _lo.PLACE, len(move.placements), self.check(move)
            for j, (r, c, tile) in enumerate(move.placements):
                row[_lo.A_CELL + j] = _bd.cell_of(r, c)
                row[_lo.A_TILE + j] = tile
        else:
            raise ValueError(f"a {move.kind.value} has no action row")
        return row

    def decode_action(self, row: np.ndarray) -> Move:
        """The :class:`Move` of a kernels' action row of this game (the inverse of
        :meth:`encode_action`; re-rolls too).

        Parameters
        ----------
        row
            int64[``CAND_COLS``] (or longer): an action row whose cells are this game's
            wrapped board cells.

        Returns
        -------
        Move
            the action, with true coordinates (a placement's ``score`` is None).
        """
        kind, n = int(row[_lo.A_KIND]), int(row[_lo.A_N])
        tiles = row[_lo.A_TILE : _lo.A_TILE + n].tolist()
        if kind == _lo.PLACE:
            return Move(self._placed(row))
        if kind == _lo.REROLL:
            return Move.reroll(tiles, row[_lo.A_FACE : _lo.A_FACE + n].tolist())
        return Move.exchange(tiles) if kind == _lo.EXCHANGE else Move.pass_turn()

    def _placed(self, row: np.ndarray) -> tuple[tuple[int, int, int], ...]:
        """A placement row's ``(row, col, tile)`` triples, true coordinates, in row order."""
        n = int(row[_lo.A_N])
        rows, cols = _bd.true_coords(self._bmeta, row[_lo.A_CELL : _lo.A_CELL + n])
        return tuple(zip(rows.tolist(), cols.tolist(), row[_lo.A_TILE : _lo.A_TILE + n].tolist(), strict=True))

    # -- Qwirkle Cubes: re-rolls -----------------------------------------------------------

    def reroll(self, tiles: Iterable[int] | None = None) -> Move:
        """Qwirkle Cubes: re-roll the current player's cubes that show ``tiles``.

        Each cube gets a new face of its colour from the game's random stream (in increasing
        tile order), so the same re-roll from the same position always rolls the same faces.
        Legal once per turn before placing, any cubes; and whenever the player has no
        placement (:attr:`must_reroll`), all of its cubes. The re-roll goes into
        :attr:`history` (points 0) and can be undone.

        Parameters
        ----------
        tiles
            tile ints, a tile as often as cubes show it (default: all the player's cubes).

        Returns
        -------
        Move
            the re-roll with its :attr:`~Move.faces`.

        Raises
        ------
        IllegalMoveError
            it is not legal now; the game is unchanged.
        TypeError, ValueError
            something that is not a tile.
        """
        checked = self._check_reroll(tiles)
        player, before = self.current_player, self._snapshot()
        cubes = np.array(checked, np.int64)
        faces = np.zeros(len(checked), np.int64)
        _cu.reroll(self._hands, self._gmeta, self._rng, cubes, len(checked), faces)
        move = Move.reroll(cubes.tolist(), faces.tolist())
        self._log_action(player, move, 0, before, ())
        return move

    def _check_reroll(self, tiles: Iterable[int] | None) -> list[int]:
        self._check_running()
        if not self._rules.cubes:
            raise IllegalMoveError(
                "re-rolls are part of Qwirkle Cubes (Rules(variant='cubes')); in the tile game exchange tiles instead"
            )
        hand = list(self.hand())
        checked = hand if tiles is None else [check_tile(t) for t in tiles]
        if not 1 <= len(checked) <= len(hand):
            raise IllegalMoveError(f"a re-roll has 1 to {len(hand)} cubes (those you hold), not {len(checked)}")
        self._check_in_hand(checked)
        if self._gmeta[_lo.G_REROLLED]:
            if not self.must_reroll:
                raise IllegalMoveError(
                    "you have re-rolled in this turn already: place cubes now"
                    if not self._stuck()
                    else "you have re-rolled in this turn already and nothing can fit: pass"
                )
            if len(checked) != len(hand):
                raise IllegalMoveError(
                    f"no cube can be placed: re-roll all your cubes ({len(hand)}), not {len(checked)}"
                )
        return checked

    def _stuck(self) -> bool:
        """Qwirkle Cubes: no face of any colour the current player holds fits any cell."""
        return bool(_cu.stuck(self._cross, self._anchors, self._bmeta, self._hands, self._gmeta))

    @property
    def must_reroll(self) -> bool:
        """Qwirkle Cubes: whether the current player may only re-roll all its cubes now (it
        has no placement but some roll could give one, or it opens and no two of its
        cubes share a colour or a shape). False in the tile game and once the game is over."""
        if not self._rules.cubes or self.is_over:
            return False
        return bool(_cu.opening_blocked(self._gmeta)) or (self._placements() == 0 and not self._stuck())

    @property
    def can_reroll(self) -> bool:
        """Qwirkle Cubes: whether :meth:`reroll` is legal now (any cubes while the turn's
        re-roll is unused; all of them when :attr:`must_reroll`)."""
        return self._rules.cubes and not self.is_over and (not self._gmeta[_lo.G_REROLLED] or self.must_reroll)

    def determinize(self, player: int | None = None, seed: int = 0) -> Game:
        """A copy of the game in which what ``player`` cannot see is sampled afresh.

        The other hands and the bag order are dealt again from the unseen tiles; the board,
        ``player``'s hand, the hand sizes, the bag size and the scores stay. Use it to sample
        worlds consistent with an observation. In Qwirkle Cubes, where hands are open, the
        bag's order and every later roll are sampled afresh; all hands stay.

        Parameters
        ----------
        player
            a seat (default: the current player).
        seed
            the seed of the sampling (an int 0..2**64-1; default: a fresh random one).

        Returns
        -------
        Game

        Raises
        ------
        TypeError, ValueError
            a bad seat or seed.
        """
        p = self._seat(player)
        rng = np.zeros(2, np.uint64)
        seed_streams(rng, np.uint64(check_seed(seed)))
        g = self.copy()
        if self._rules.cubes:
            _cu.determinize(g._bag, g._gmeta, rng, _lo.R_AGENTS)
            g._rng[_lo.R_GAME] = rng[_lo.R_GAME]
        else:
            _mc.determinize(g._hands, g._bag, g._gmeta, p, rng, _lo.R_AGENTS)
        return g

    def observation(self, player: int | None = None) -> Observation:
        """What a player may see: the board, its own hand and the public counts.

        The opponents' hands and the bag are merged into ``unseen``. In Qwirkle Cubes hands
        are open: every hand and the colours in the bag, with only the bag's order and the
        rolls to come hidden (``unseen`` is None).

        Parameters
        ----------
        player
            a seat (default: the current player).

        Returns
        -------
        Observation

        Raises
        ------
        TypeError, ValueError
            a bad seat.
        """
        p = self._seat(player)
        if self._rules.cubes:
            colours = np.bincount(self._bag[: self.bag_size], minlength=len(COLORS))
            return Observation(
                **self._public(p),
                unseen=None,
                hands=tuple(self.hand(q) for q in range(self.players)),
                bag_colors=tuple(int(n) for n in colours),
            )
        unseen = np.zeros(NUM_TILE_TYPES, np.int64)
        _st.unseen_counts(self._hands, self._bag, self._gmeta, p, unseen)
        return Observation(**self._public(p), unseen=tuple(int(n) for n in unseen))

    def _public(self, p: int) -> dict[str, Any]:
        """The fields of an observation that are the same in both games."""
        return dict(
            player=p,
            rules=self.rules,
            board=self.board,
            hand=self.hand(p),
            hand_sizes=self.hand_sizes,
            scores=self.scores,
            qwirkles=self.qwirkles,
            bag_size=self.bag_size,
            current_player=self.current_player,
            turn=self.turn,
            passes=self.passes,
            is_over=self.is_over,
            winner=self.winner,
        )

    # -- the action log: history and undo ------------------------------------------------
    #
    # ``_log`` holds one entry per action taken on this object, in order (see _LogEntry):
    # the non-board arrays before the action are copied (about 0.5 kB); the board arrays
    # (about 300 kB) are not: they are rebuilt by putting down ``_setup`` (the board the
    # game was created with, as groups) and then every logged placement, each in one
    # kernel call in its original order, which reproduces them exactly, down to the
    # order of the frontier cells that orders legal_moves() and the agents' tie-breaks.

    def _start_log(self, setup: tuple[tuple[tuple[int, int, int], ...], ...], dealt: bool) -> None:
        self._setup = setup
        self._dealt = dealt
        self._log: list[_LogEntry] = []

    def _snapshot(self) -> tuple[np.ndarray, ...]:
        return (self._hands.copy(), self._bag.copy(), self._gmeta.copy(), self._rng.copy())

    def _log_action(
        self,
        player: int,
        move: Move,
        points: int,
        before: tuple[np.ndarray, ...],
        placed: Iterable[tuple[int, int, int]],
    ) -> Action:
        action = Action(player, move, int(points), self.scores)
        self._log.append((action, before, tuple(placed)))
        return action

    def _board_groups(self) -> tuple[tuple[tuple[int, int, int], ...], ...]:
        """The board as groups of (row, col, tile) in the order they were put down."""
        return self._setup + tuple(placed for _, _, placed in self._log if placed)

    def _place_groups(self, groups: Sequence[Sequence[tuple[int, int, int]]]) -> None:
        """Set the board arrays to an empty board with ``groups`` put down in order."""
        self._board, self._cross, self._anchors, self._bmeta = _bd.new_board.py_func()
        scratch = np.zeros(max((len(g) for g in groups), default=0), np.int64)
        for group in groups:
            rows = np.array([r for r, _, _ in group], np.int64)
            cols = np.array([c for _, c, _ in group], np.int64)
            tiles = np.array([t for _, _, t in group], np.int8)
            _bd.place_at(self._board, self._cross, self._anchors, self._bmeta, rows, cols, tiles, len(group), scratch)

    def _rewind(self, n: int) -> None:
        """Restore the state from before logged action ``n`` and forget it and those after."""
        _, before, _ = self._log[n]
        board_changed = any(placed for _, _, placed in self._log[n:])
        del self._log[n:]
        self._restore(before, board_changed)

    def _restore(self, before: tuple[np.ndarray, ...], board_changed: bool) -> None:
        """Set the non-board arrays to copies of ``before`` and, if the board changed
        since, rebuild it from the logged groups."""
        self._hands, self._bag, self._gmeta, self._rng = (a.copy() for a in before)
        if board_changed:
            self._place_groups(self._board_groups())

    @property
    def history(self) -> list[Action]:
        """The actions taken on this object so far, oldest first: a new list of
        :class:`Action` (player, move, points, scores after). A game made by
        :meth:`from_position` or :meth:`from_json` starts with none."""
        return [action for action, _, _ in self._log]

    def undo(self) -> Action:
        """Take back the last action in :attr:`history` and return it.

        Everything is restored as it was, draws included: the tiles go back into the
        bag in their old order and the random streams rewind, so playing the same
        action again draws the same tiles. Raises :class:`IllegalMoveError` when there
        is nothing to undo.
        """
        if not self._log:
            raise IllegalMoveError("there is no action to undo")
        action = self._log[-1][0]
        self._rewind(len(self._log) - 1)
        return action


def _as_move(move: Move | str | Iterable[tuple[int, int, int]]) -> Move:
    if isinstance(move, Move):
        return move
    if isinstance(move, str):
        return Move.parse(move)
    return Move(move)


def _check_hands(hands: Any) -> tuple[tuple[int, ...], ...]:
    """``hands`` (one iterable of tiles per seat) as tuples of checked tiles."""
    if isinstance(hands, (str, bytes)) or not isinstance(hands, Sequence):
        raise TypeError(f"hands must be a sequence of tile lists, one per seat, not {type(hands).__name__}")
    out = []
    for p, h in enumerate(hands):
        if isinstance(h, (str, bytes)) or not isinstance(h, Iterable):
            raise TypeError(f"hand of player {p} must be a list of tiles, not {type(h).__name__}")
        tiles = []
        for t in h:
            tiles.append(check_tile(t))
            if len(tiles) > 6:
                raise ValueError(f"hand of player {p} has more than 6 tiles")
        out.append(tuple(tiles))
    return tuple(out)


def _check_supply(p: Position, min_hand: int) -> None:
    """Raise ValueError unless ``p``'s board, hands and bag can be a game's: at most 3
    copies of a tile, or in Qwirkle Cubes at most 15 cubes of a colour (the bag holding
    colours)."""
    cells: dict[tuple[int, int], int] = {}
    for r, c, t in (x for group in p.board for x in group):
        if (r, c) in cells:
            raise ValueError(f"cell {(r, c)} holds two tiles")
        cells[(r, c)] = t
    _check_board(cells)
    counts = Counter(cells.values())
    for seat, hand in enumerate(p.hands):
        if not min_hand <= len(hand) <= 6:
            raise ValueError(f"hand of player {seat} has {len(hand)} tiles; a hand holds {min_hand} to 6")
        counts.update(hand)
    if p.rules.cubes:
        colours = Counter(p.bag)
        for t, n in counts.items():
            colours[t // 6] += n
        over = [f"{COLORS[c]} x{n}" for c, n in sorted(colours.items()) if n > CUBES_PER_COLOR]
        if over:
            raise ValueError(f"more than {CUBES_PER_COLOR} cubes of a colour: {', '.join(over)}")
        return
    counts.update(p.bag)
    over = [f"{tile_name(t)} x{n}" for t, n in sorted(counts.items()) if n > COPIES]
    if over:
        raise ValueError(f"more than {COPIES} copies of a tile: {', '.join(over)}")


def _check_board(cells: dict[tuple[int, int], int]) -> None:
    """Raise ValueError unless ``cells`` ({(r, c): tile}) is a board a game can reach."""
    if not cells:
        return
    rows = [r for r, _ in cells]
    cols = [c for _, c in cells]
    if max(rows) - min(rows) > 107 or max(cols) - min(cols) > 107:
        raise ValueError(f"the board spans more than {NUM_TILES} rows or columns, which no game can reach")
    for dr, dc, axis in ((0, 1, "row"), (1, 0, "column")):
        for r, c in cells:
            if (r - dr, c - dc) in cells:
                continue
            line = []
            while (r, c) in cells:
                line.append(cells[(r, c)])
                r, c = r + dr, c + dc
            if len(line) > 1 and not _valid_line(line):
                names = ", ".join(tile_name(t) for t in line)
                raise ValueError(f"invalid {axis} on the board ending before {(r, c)}: {names}")
    if not _connected(set(cells)):
        raise ValueError("the board's tiles are not all connected")


def _connected(cells: set[tuple[int, int]]) -> bool:
    start = next(iter(cells))
    seen = {start}
    todo = [start]
    while todo:
        r, c = todo.pop()
        for nb in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            if nb in cells and nb not in seen:
                seen.add(nb)
                todo.append(nb)
    return len(seen) == len(cells)


def _valid_line(line: list[int]) -> bool:
    if len(line) > 6 or len(set(line)) != len(line):
        return False
    return len({t // 6 for t in line}) == 1 or len({t % 6 for t in line}) == 1

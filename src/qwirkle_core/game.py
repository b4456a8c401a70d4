"""``Game`` and ``Move``: the Python face of the rules engine."""

import secrets
from collections import Counter

import numpy as np

from ._kernels import agents as _ag
from ._kernels import board as _bd
from ._kernels import layout as _lo
from ._kernels import movegen as _mg
from ._kernels import scoring as _sc
from ._kernels import state as _st
from ._kernels.rng import seed_streams
from .rules import IllegalMoveError, resolve_rules
from .tiles import COPIES, NUM_TILE_TYPES, check_tile, tile_code, tile_name

__all__ = ["Game", "Move"]

_PLACE, _EXCHANGE, _PASS = "place", "exchange", "pass"


def _coord(v, what):
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        raise TypeError(f"{what} must be an int, not {v!r}")
    return v.__index__()


class Move:
    """One action: a placement (the usual case), an exchange or a pass.

    ``Move(placements)`` with ``placements`` an iterable of ``(row, col, tile)``;
    ``Move.exchange(tiles)``; ``Move.pass_turn()``. ``placements`` is kept sorted by
    (row, col); equality and hashing ignore order and ``score``. ``score`` is the
    placement's points when the move comes from :meth:`Game.legal_moves`, else None.
    """

    __slots__ = ("kind", "placements", "tiles", "score")

    def __init__(self, placements, score=None):
        items = []
        for p in placements:
            try:
                r, c, t = p
            except (TypeError, ValueError):
                raise TypeError(f"a placement is a (row, col, tile) triple, not {p!r}") from None
            items.append((_coord(r, "row"), _coord(c, "col"), check_tile(t)))
        if not items:
            raise ValueError("a placement needs at least one tile")
        self.kind = _PLACE
        self.placements = tuple(sorted(items))
        self.tiles = tuple(t for _, _, t in self.placements)
        self.score = score

    @classmethod
    def exchange(cls, tiles):
        """An exchange of ``tiles`` (an iterable of tile ints, 1 to 6 of them)."""
        m = cls.__new__(cls)
        m.kind = _EXCHANGE
        m.placements = ()
        m.tiles = tuple(sorted(check_tile(t) for t in tiles))
        if not 1 <= len(m.tiles) <= 6:
            raise ValueError(f"an exchange has 1 to 6 tiles, not {len(m.tiles)}")
        m.score = None
        return m

    @classmethod
    def pass_turn(cls):
        """A pass."""
        m = cls.__new__(cls)
        m.kind = _PASS
        m.placements = ()
        m.tiles = ()
        m.score = None
        return m

    @property
    def cells(self):
        """The (row, col) cells of a placement, sorted."""
        return tuple((r, c) for r, c, _ in self.placements)

    def _key(self):
        return (self.kind, self.placements if self.kind == _PLACE else self.tiles)

    def __eq__(self, other):
        return isinstance(other, Move) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __len__(self):
        return len(self.placements) if self.kind == _PLACE else len(self.tiles)

    def __str__(self):
        from .notation import format_move

        return format_move(self)

    def __repr__(self):
        if self.kind == _PASS:
            return "Move.pass_turn()"
        if self.kind == _EXCHANGE:
            return f"Move.exchange({list(self.tiles)!r})"
        score = "" if self.score is None else f", score={self.score}"
        return f"Move({list(self.placements)!r}{score})"

    @classmethod
    def parse(cls, text):
        """The move written ``text`` in the project's notation (see docs/notation.md)."""
        from .notation import parse_move

        return parse_move(text)


_ERRORS = {
    _sc.NOT_IN_LINE: "the tiles are not all in one row or one column",
    _sc.GAP: "the placed tiles and the tiles between them must form one unbroken line (there is a gap)",
    _sc.NOT_TOUCHING: "no placed tile touches a tile on the board",
    _sc.OPENING_PLACE: "the opening must be a horizontal line starting at (0, 0) and running right",
    _sc.TOO_LONG: "a placement has at most 6 tiles",
}


class Game:
    """A game of Qwirkle.

    ``Game(players=2, seed=None, rules=None)`` shuffles the bag with the game's own
    random stream (from ``seed``; a fresh random seed when None), deals 6 tiles to
    each seat and applies the opening rule: :attr:`current_player` is the starter,
    who must open. Coordinates are ``(row, col)``; the opening's first tile is at
    (0, 0), rows grow downward and columns to the right.
    """

    def __init__(self, players=None, seed=None, rules=None):
        self._rules = resolve_rules(players, rules)
        if seed is None:
            seed = secrets.randbits(64)
        self._seed = _coord(seed, "seed") & 0xFFFFFFFFFFFFFFFF
        self._board, self._cross, self._anchors, self._bmeta = _bd.new_board()
        self._hands, self._bag, self._gmeta, self._rng = _st.new_game_arrays()
        seed_streams(self._rng, np.uint64(self._seed))
        _st.new_game(self._hands, self._bag, self._gmeta, self._rng, self._rules.players, self._rules.opening_code)
        self._init_scratch()
        self._start_log(setup=(), dealt=True)

    def _init_scratch(self):
        self._moves = _mg.new_move_buffer(1024)
        self._scratch = _mg.new_scratch_array()
        self._act = np.zeros(_ag.ACT_SIZE, np.int64)
        self._cells = np.zeros(6, np.int64)

    @classmethod
    def from_position(cls, board, hands, bag=(), scores=None, current_player=0, rules=None, seed=None):
        """A game set up from a position.

        board:  ``{(row, col): tile}``; its lines must be valid and its tiles connected.
                Empty: the current player must open (under the official rule with
                exactly their largest group).
        hands:  one list of tiles (0 to 6... at least 1) per seat; ``len(hands)`` is
                the number of players.
        bag:    the tiles left, ``bag[0]`` drawn first. The position need not hold all
                108 tiles, but no tile may appear more than 3 times in all.
        scores: one int per seat (zeros by default).
        seed:   the stream used to put exchanged tiles back into the bag.
        """
        if not isinstance(board, dict):
            raise TypeError(f"board must be a dict {{(row, col): tile}}, not {type(board).__name__}")
        cells = {}
        for key, t in board.items():
            try:
                r, c = key
            except (TypeError, ValueError):
                raise TypeError(f"board keys are (row, col) pairs, not {key!r}") from None
            cells[(_coord(r, "row"), _coord(c, "col"))] = check_tile(t)
        groups = [[(r, c, t) for (r, c), t in sorted(cells.items())]] if cells else []
        return cls._build(groups, hands, bag, scores, current_player, rules, seed, min_hand=1)

    @classmethod
    def _build(cls, groups, hands, bag, scores, current_player, rules, seed, min_hand):
        """The game of a position whose board is ``groups``: lists of ``(row, col, tile)``
        (ints) in the order they were put down (see :meth:`_place_groups`). A hand holds
        ``min_hand`` to 6 tiles. Raises TypeError/ValueError naming the first problem.
        """
        hands = [list(h) for h in hands]
        rules = resolve_rules(len(hands), rules)
        g = cls.__new__(cls)
        g._rules = rules
        g._seed = (secrets.randbits(64) if seed is None else int(seed)) & 0xFFFFFFFFFFFFFFFF
        g._hands, g._bag, g._gmeta, g._rng = _st.new_game_arrays()
        seed_streams(g._rng, np.uint64(g._seed))
        g._init_scratch()
        cells = {}
        for r, c, t in (p for group in groups for p in group):
            if (r, c) in cells:
                raise ValueError(f"cell {(r, c)} holds two tiles")
            cells[(r, c)] = t
        _check_board(cells)
        counts = Counter(cells.values())
        for p, h in enumerate(hands):
            if not min_hand <= len(h) <= 6:
                raise ValueError(f"hand of player {p} has {len(h)} tiles; a hand holds {min_hand} to 6")
            h[:] = [check_tile(t) for t in h]
            counts.update(h)
        bag = [check_tile(t) for t in bag]
        counts.update(bag)
        over = [f"{tile_name(t)} x{n}" for t, n in sorted(counts.items()) if n > COPIES]
        if over:
            raise ValueError(f"more than {COPIES} copies of a tile: {', '.join(over)}")
        players = rules.players
        if scores is None:
            scores = [0] * players
        scores = [_coord(s, "score") for s in scores]
        if len(scores) != players or min(scores) < 0:
            raise ValueError(f"scores must be {players} non-negative ints, not {scores!r}")
        current_player = _coord(current_player, "current_player")
        if not 0 <= current_player < players:
            raise ValueError(f"current_player must be 0..{players - 1}, not {current_player}")
        gm = g._gmeta
        gm[_st.G_PLAYERS] = players
        gm[_st.G_RULE_OPENING] = rules.opening_code
        gm[_st.G_WINNER] = -2
        for p, h in enumerate(hands):
            g._hands[p, : len(h)] = sorted(h)
            gm[_st.G_HAND + p] = len(h)
            gm[_st.G_SCORE + p] = scores[p]
        g._bag[: len(bag)] = bag[::-1]
        gm[_st.G_BAG] = len(bag)
        gm[_st.G_CURRENT] = current_player
        setup = tuple(tuple(group) for group in groups)
        g._place_groups(setup)
        if cells:
            gm[_st.G_PLACED] = len(cells)
        else:
            _st.set_opening(g._hands, gm, current_player)
        g._start_log(setup, dealt=False)
        return g

    # -- state ---------------------------------------------------------------------------

    @property
    def rules(self):
        return self._rules

    @property
    def seed(self):
        """The 64-bit seed of the game's random streams."""
        return self._seed

    @property
    def players(self):
        return int(self._gmeta[_st.G_PLAYERS])

    @property
    def current_player(self):
        return int(self._gmeta[_st.G_CURRENT])

    @property
    def starting_player(self):
        return int(self._gmeta[_st.G_STARTER])

    @property
    def scores(self):
        return tuple(int(s) for s in self._gmeta[_st.G_SCORE : _st.G_SCORE + self.players])

    @property
    def qwirkles(self):
        """Qwirkles (lines of 6 completed) per seat."""
        return tuple(int(s) for s in self._gmeta[_st.G_QWIRKLES : _st.G_QWIRKLES + self.players])

    @property
    def bag_size(self):
        return int(self._gmeta[_st.G_BAG])

    @property
    def turn(self):
        """The number of actions taken so far (placements, exchanges and passes)."""
        return int(self._gmeta[_st.G_TURNS])

    @property
    def is_over(self):
        return bool(self._gmeta[_st.G_OVER])

    @property
    def winner(self):
        """None while the game runs; then the winning seat, or -1 for a tie."""
        return int(self._gmeta[_st.G_WINNER]) if self.is_over else None

    @property
    def opening_pending(self):
        return bool(self._gmeta[_st.G_OPENING])

    @property
    def passes(self):
        """Passes in a row just before now (the game ends when every seat has passed)."""
        return int(self._gmeta[_st.G_PASSES])

    @property
    def hand_sizes(self):
        """The number of tiles in each seat's hand (public information)."""
        return tuple(int(n) for n in self._gmeta[_st.G_HAND : _st.G_HAND + self.players])

    def _seat(self, player):
        """``player`` checked as a seat number; the current player for None."""
        p = self.current_player if player is None else _coord(player, "player")
        if not 0 <= p < self.players:
            raise ValueError(f"player must be 0..{self.players - 1}, not {p}")
        return p

    def hand(self, player=None):
        """The tiles of ``player`` (the current player by default), sorted."""
        p = self._seat(player)
        return tuple(sorted(int(t) for t in self._hands[p, : self._gmeta[_st.G_HAND + p]]))

    @property
    def board(self):
        """A copy of the board as ``{(row, col): tile}``."""
        bm = self._bmeta
        if bm[_bd.B_TILES] == 0:
            return {}
        rows = np.arange(bm[_bd.B_MINR], bm[_bd.B_MAXR] + 1)
        cols = np.arange(bm[_bd.B_MINC], bm[_bd.B_MAXC] + 1)
        idx = ((rows[:, None] & _bd.GMASK) << _bd.GRID_BITS) | (cols[None, :] & _bd.GMASK)
        tiles = self._board[idx]
        rr, cc = np.nonzero(tiles >= 0)
        return {(int(rows[i]), int(cols[j])): int(tiles[i, j]) for i, j in zip(rr, cc)}

    def copy(self):
        """An independent copy of the game."""
        g = Game.__new__(Game)
        g.__dict__.update(self.__dict__)
        for name in ("_board", "_cross", "_anchors", "_bmeta", "_hands", "_bag", "_gmeta", "_rng"):
            setattr(g, name, getattr(self, name).copy())
        g._init_scratch()
        g.__dict__.pop("_agent_scratch", None)
        g._log = list(self._log)
        return g

    def __repr__(self):
        state = f"over, winner {self.winner}" if self.is_over else f"player {self.current_player} to move"
        return f"<Game players={self.players} turn={self.turn} scores={self.scores} bag={self.bag_size} {state}>"

    # -- moves ---------------------------------------------------------------------------

    def _hand_mask(self):
        return int(_st.hand_mask(self._hands, self._gmeta, self.current_player))

    def _generate(self):
        """Fill the move buffer; returns the number of moves (growing the buffer if needed)."""
        hand = self._hand_mask()
        open_len = int(_st.opening_len(self._gmeta))
        while True:
            n = _mg.generate(self._board, self._cross, self._anchors, self._bmeta, hand, open_len, self._moves, self._scratch)
            if n <= len(self._moves):
                return n
            self._moves = _mg.new_move_buffer(2 * n)

    def legal_moves(self):
        """Every distinct legal placement for the current player, each once, with its score.

        On an empty board the openings are the horizontal lines starting at (0, 0)
        and running right (one per order of tiles). Empty when the game is over.
        """
        if self.is_over:
            return []
        n = self._generate()
        mv = self._moves[:n]
        cells = mv[:, _mg.M_CELL : _mg.M_CELL + 6].astype(np.int64)
        rows = _unwrap(cells >> _bd.GRID_BITS, self._bmeta[_bd.B_MINR]).tolist()
        cols = _unwrap(cells & _bd.GMASK, self._bmeta[_bd.B_MINC]).tolist()
        tiles = mv[:, _mg.M_TILE : _mg.M_TILE + 6].tolist()
        counts = mv[:, _mg.M_N].tolist()
        scores = mv[:, _mg.M_SCORE].tolist()
        out = []
        for i in range(n):
            k = counts[i]
            out.append(Move(zip(rows[i][:k], cols[i][:k], tiles[i][:k]), score=scores[i]))
        return out

    def has_legal_placement(self):
        return not self.is_over and self._generate() > 0

    def _check_running(self):
        if self.is_over:
            raise IllegalMoveError("the game is over")

    def _check_in_hand(self, tiles):
        held = Counter(self.hand())
        for t, n in Counter(tiles).items():
            if held[t] < n:
                have = "you do not hold" if held[t] == 0 else f"you hold only {held[t]}"
                raise IllegalMoveError(f"{tile_name(t)} ({tile_code(t)}): {have} {'it' if n == 1 else n}")

    def check(self, move):
        """The score ``move`` would get now; raises IllegalMoveError if it is not legal."""
        move = _as_move(move)
        self._check_running()
        if move.kind != _PLACE:
            raise IllegalMoveError(f"check() takes placements; this is a {move.kind}")
        return self._check_placement(move)[0]

    def _check_placement(self, move):
        """(score, qwirkles, wrapped cells) of a legal placement, or IllegalMoveError."""
        n = len(move.placements)
        if n > 6:
            raise IllegalMoveError("a placement has at most 6 tiles")
        cells = move.cells
        if len(set(cells)) != n:
            dup = next(c for c in cells if cells.count(c) > 1)
            raise IllegalMoveError(f"cell {dup} is used twice")
        self._check_in_hand(move.tiles)
        bm = self._bmeta
        if bm[_bd.B_TILES]:
            for r, c in cells:
                if not (bm[_bd.B_MINR] - 7 <= r <= bm[_bd.B_MAXR] + 7 and bm[_bd.B_MINC] - 7 <= c <= bm[_bd.B_MAXC] + 7):
                    raise IllegalMoveError(f"cell {(r, c)} is too far from the tiles on the board to be part of a legal line")
        rows = np.array([r for r, _ in cells], np.int64)
        cols = np.array([c for _, c in cells], np.int64)
        tiles = np.array(move.tiles, np.int64)
        code, score, qw, where = _sc.check_placement(
            self._board, self._cross, self._bmeta, rows, cols, tiles, n, int(_st.opening_len(self._gmeta)), self._cells
        )
        if code == _sc.OK:
            return int(score), int(qw), self._cells[:n].copy(), tiles
        raise IllegalMoveError(self._explain(code, where, move))

    def _explain(self, code, where, move):
        if code in _ERRORS:
            return _ERRORS[code]
        if code == _sc.OPENING_LENGTH:
            k = int(self._gmeta[_st.G_OPEN_LEN])
            return f"the opening must have exactly {k} tiles (the largest group of one colour or one shape in the hand)"
        at = move.placements[where] if where >= 0 else None
        if code == _sc.CELL_TAKEN:
            return f"cell {at[:2]} is already taken"
        what = f"{tile_name(at[2])} at {at[:2]}" if at else "a tile"
        if code == _sc.BAD_LINE:
            axis = "row" if len(set(r for r, _, _ in move.placements)) == 1 else "column"
            return (
                f"{what} does not fit the {axis} it is placed in: a line is one colour with "
                "different shapes or one shape with different colours, at most 6 tiles"
            )
        axis = "column" if len(set(r for r, _, _ in move.placements)) == 1 else "row"
        if len(move.placements) == 1:
            axis = "column"
        return f"{what} does not fit the {axis} it joins"

    def play(self, move):
        """Apply ``move`` (a :class:`Move` or an iterable of ``(row, col, tile)``).

        Returns the points of a placement (the +6 for going out is added to
        :attr:`scores` but not returned); 0 for an exchange or a pass.
        Raises :class:`IllegalMoveError` and changes nothing if it is not legal.
        """
        move = _as_move(move)
        if move.kind == _EXCHANGE:
            self.exchange(move.tiles)
            return 0
        if move.kind == _PASS:
            self.pass_turn()
            return 0
        self._check_running()
        score, qw, cells, tiles = self._check_placement(move)
        player, before = self.current_player, self._snapshot()
        _bd.place_cells(self._board, self._cross, self._anchors, self._bmeta, cells, tiles, len(tiles))
        _st.after_placement(self._hands, self._bag, self._gmeta, tiles, len(tiles), score, qw)
        self._log_action(player, move, score, before, move.placements)
        return score

    def exchange(self, tiles):
        """Exchange 1..6 tiles of the current hand for as many from the bag."""
        tiles = self._check_exchange(tiles)
        player, before = self.current_player, self._snapshot()
        _st.exchange(self._hands, self._bag, self._gmeta, self._rng, np.array(tiles, np.int64), len(tiles))
        _st.end_if_dead(self._cross, self._anchors, self._bmeta, self._hands, self._bag, self._gmeta)
        self._log_action(player, Move.exchange(tiles), 0, before, ())

    def _check_exchange(self, tiles):
        """The exchange's tiles as a list, or IllegalMoveError if it is not legal now."""
        self._check_running()
        tiles = [check_tile(t) for t in tiles]
        if not 1 <= len(tiles) <= 6:
            raise IllegalMoveError(f"an exchange has 1 to 6 tiles, not {len(tiles)}")
        if self.opening_pending:
            raise IllegalMoveError("the opening must be played first")
        self._check_in_hand(tiles)
        if len(tiles) > self.bag_size:
            raise IllegalMoveError(f"the bag holds only {self.bag_size} tiles; cannot exchange {len(tiles)}")
        return tiles

    def determinize(self, player=None, seed=0):
        """A copy of the game in which everything ``player`` (the current player by
        default) cannot see — the other hands and the bag order — is sampled afresh from
        the unseen tiles. The board, ``player``'s hand, the hand sizes, the bag size and
        the scores stay. Use it to sample worlds consistent with an observation."""
        from ._kernels.mc import determinize
        from ._kernels.rng import seed_streams

        p = self._seat(player)
        g = self.copy()
        rng = np.zeros(2, np.uint64)
        seed_streams(rng, np.uint64(_coord(seed, "seed") & 0xFFFFFFFFFFFFFFFF))
        determinize(g._hands, g._bag, g._gmeta, p, rng, 1)
        return g

    def evaluate_moves(self, playouts=200, policy="greedy", seed=0, moves=None, top=20, depth=0, threads=None):
        """Flat Monte Carlo evaluation of candidate moves; see :func:`qwirkle_core.evaluate.evaluate_moves`.

        Returns a list of :class:`~qwirkle_core.evaluate.MoveEvaluation`, best first.
        """
        from .evaluate import evaluate_moves

        return evaluate_moves(self, playouts=playouts, policy=policy, seed=seed, moves=moves, top=top, depth=depth, threads=threads)

    def pass_turn(self):
        """Pass: legal only when the bag is empty and no placement is possible."""
        self._check_running()
        if self.bag_size > 0:
            raise IllegalMoveError("passing is only allowed when the bag is empty; exchange instead")
        if self._generate() > 0:
            raise IllegalMoveError("a placement is possible, so passing is not allowed")
        player, before = self.current_player, self._snapshot()
        _st.pass_turn(self._gmeta)
        self._log_action(player, Move.pass_turn(), 0, before, ())

    def play_agent(self, agent):
        """Let a built-in agent take this turn: a name in ``qwirkle_core.AGENTS``
        (parameters as in :func:`~qwirkle_core.simulate`, e.g. ``"mc:playouts=32"``)
        or a spec row from ``simulate.parse_agents``.

        The agent decides and acts exactly as inside :func:`~qwirkle_core.simulate`
        (same choices, same draws, its tie-breaks from the game's agent stream), and
        the action goes into :attr:`history` like any other, so it can be undone.
        Returns the :class:`~qwirkle_core.records.Action`.
        """
        from .simulate import agent_turn, parse_agents

        spec = parse_agents([agent])[1][0] if isinstance(agent, (str, tuple)) else agent
        self._check_running()
        player, before = self.current_player, self._snapshot()
        act, self._agent_scratch = agent_turn(self, spec, getattr(self, "_agent_scratch", None))
        move, placed = self._kernel_move(act)
        return self._log_action(player, move, int(act[2]), before, placed)

    def _kernel_state(self):
        """The kernels' game state (``_kernels.layout.GameState``) over this game's arrays."""
        return _lo.GameState(self._board, self._cross, self._anchors, self._bmeta, self._hands, self._bag, self._gmeta, self._rng, self._scratch, self._act)

    def _kernel_move(self, act):
        """The :class:`Move` a kernel described in ``act`` (see ``_kernels.agents``), and
        for a placement its ``(row, col, tile)`` triples in the order they were put down."""
        kind, n = int(act[0]), int(act[1])
        if kind == _ag.PLACE:
            bm = self._bmeta
            placed = tuple((int(_bd.true_row(bm, act[4 + i])), int(_bd.true_col(bm, act[4 + i])), int(act[10 + i])) for i in range(n))
            return Move(placed), placed
        if kind == _ag.EXCHANGE:
            return Move.exchange(int(t) for t in act[10 : 10 + n]), ()
        return Move.pass_turn(), ()

    # -- the action log: history, undo, records -----------------------------------------
    #
    # ``_log`` holds one entry per action taken on this object, in order:
    # ``(action, before, placed)`` with ``action`` a records.Action, ``before`` copies of
    # the non-board arrays (hands, bag, gmeta, rng; about 0.5 kB) as they were before the
    # action, and ``placed`` the placement's (row, col, tile) triples in the order the
    # kernel put them down (empty for exchanges and passes). The board arrays are not
    # copied (they are about 300 kB): they are rebuilt by putting down ``_setup`` (the
    # board the game was created with, as groups) and then every logged placement, each
    # in one kernel call in its original order, which reproduces them exactly, down to the
    # order of the frontier cells that orders legal_moves() and the agents' tie-breaks.

    def _start_log(self, setup, dealt):
        self._setup = setup
        self._dealt = dealt
        self._log = []

    def _snapshot(self):
        return (self._hands.copy(), self._bag.copy(), self._gmeta.copy(), self._rng.copy())

    def _log_action(self, player, move, points, before, placed):
        from .records import Action

        action = Action(player, move, int(points), self.scores)
        self._log.append((action, before, tuple(placed)))
        return action

    def _board_groups(self):
        """The board as groups of (row, col, tile) in the order they were put down."""
        return self._setup + tuple(placed for _, _, placed in self._log if placed)

    def _place_groups(self, groups):
        """Set the board arrays to an empty board with ``groups`` put down in order."""
        self._board, self._cross, self._anchors, self._bmeta = _bd.new_board()
        scratch = np.zeros(max((len(g) for g in groups), default=0), np.int64)
        for group in groups:
            rows = np.array([r for r, _, _ in group], np.int64)
            cols = np.array([c for _, c, _ in group], np.int64)
            tiles = np.array([t for _, _, t in group], np.int8)
            _bd.place_at(self._board, self._cross, self._anchors, self._bmeta, rows, cols, tiles, len(group), scratch)

    def _rewind(self, n):
        """Restore the state from before logged action ``n`` and forget it and those after."""
        _, before, _ = self._log[n]
        board_changed = any(placed for _, _, placed in self._log[n:])
        del self._log[n:]
        self._hands, self._bag, self._gmeta, self._rng = (a.copy() for a in before)
        if board_changed:
            self._place_groups(self._board_groups())

    @property
    def history(self):
        """The actions taken on this object so far, oldest first: a new list of
        :class:`~qwirkle_core.records.Action` (player, move, points, scores after).
        A game made by :meth:`from_position` or :meth:`from_json` starts with none."""
        return [action for action, _, _ in self._log]

    def undo(self):
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

    def record(self, agents=None):
        """A :class:`~qwirkle_core.GameRecord` of this game so far.

        A game dealt by ``Game(...)`` is recorded by its seed and initial hands; one made
        by :meth:`from_position` or :meth:`from_json` by the position it started from
        (``setup``). ``agents``: optional names of who played each seat.
        """
        from .records import GameRecord

        start = self.copy()
        if start._log:
            start._rewind(0)
        record = GameRecord(
            rules=self.rules,
            seed=self.seed if self._dealt else None,
            agents=agents,
            hands=[start.hand(p) for p in range(self.players)] if self._dealt else None,
            setup=None if self._dealt else start.to_dict(),
            actions=self.history,
        )
        record.finish(self)
        return record

    # -- positions as JSON and observations ----------------------------------------------

    def to_dict(self):
        """The complete position as a JSON-ready dict (docs/position.schema.json)."""
        from .records import position_to_dict

        return position_to_dict(self)

    def to_json(self, indent=None):
        """The complete position as JSON text: ``Game.from_json(g.to_json())`` is the same
        game in every respect (board, hands, bag order, scores, turn, random streams...)
        and plays on identically; the action log is not part of it (see :meth:`record`)."""
        import json

        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data):
        """The game of a position dict (see :meth:`to_dict`); FormatError names the problem."""
        from .records import position_from_dict

        return position_from_dict(data)

    @classmethod
    def from_json(cls, text):
        """The game of a position written by :meth:`to_json`; FormatError names the problem."""
        from .records import load_json

        return cls.from_dict(load_json(text, "position"))

    def _load_counters(self, starting_player, turn, passes, qwirkles, over, rng):
        """Set what a position holds beyond :meth:`_build`'s arguments (all checked ints)."""
        gm = self._gmeta
        if gm[_st.G_PLACED]:
            gm[_st.G_STARTER] = starting_player
        gm[_st.G_TURNS] = turn
        gm[_st.G_PASSES] = passes
        gm[_st.G_QWIRKLES : _st.G_QWIRKLES + len(qwirkles)] = qwirkles
        self._rng[:] = np.array(rng, np.uint64)
        if over:
            _st.finish_game(gm)

    def observation(self, player=None):
        """What ``player`` (the current player by default) may see, as an
        :class:`~qwirkle_core.observation.Observation`: the board, their own hand and
        the public counts, with the opponents' hands and the bag merged into ``unseen``."""
        from .observation import Observation

        p = self._seat(player)
        hidden = list(self._bag[: self.bag_size])
        for q in range(self.players):
            if q != p:
                hidden.extend(self._hands[q, : self._gmeta[_st.G_HAND + q]])
        unseen = np.bincount(np.array(hidden, np.int64), minlength=NUM_TILE_TYPES)
        return Observation(
            player=p,
            rules=self.rules,
            board=self.board,
            hand=self.hand(p),
            hand_sizes=self.hand_sizes,
            scores=self.scores,
            qwirkles=self.qwirkles,
            bag_size=self.bag_size,
            unseen=tuple(int(n) for n in unseen),
            current_player=self.current_player,
            turn=self.turn,
            passes=self.passes,
            is_over=self.is_over,
            winner=self.winner,
        )


def _as_move(move):
    if isinstance(move, Move):
        return move
    if isinstance(move, str):
        return Move.parse(move)
    return Move(move)


def _unwrap(w, lo):
    base = int(lo) - 8
    return base + ((w - base) & _bd.GMASK)


def _check_board(cells):
    """Raise ValueError unless ``cells`` ({(r, c): tile}) is a board a game can reach."""
    if not cells:
        return
    rows = [r for r, _ in cells]
    cols = [c for _, c in cells]
    if max(rows) - min(rows) > 107 or max(cols) - min(cols) > 107:
        raise ValueError("the board spans more than 108 rows or columns, which no game can reach")
    for dr, dc, axis in ((0, 1, "row"), (1, 0, "column")):
        for (r, c) in cells:
            if (r - dr, c - dc) in cells:
                continue
            line = []
            while (r, c) in cells:
                line.append(cells[(r, c)])
                r, c = r + dr, c + dc
            if len(line) > 1 and not _valid_line(line):
                names = ", ".join(tile_name(t) for t in line)
                raise ValueError(f"invalid {axis} on the board ending before {(r, c)}: {names}")
    start = next(iter(cells))
    seen = {start}
    todo = [start]
    while todo:
        r, c = todo.pop()
        for nb in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            if nb in cells and nb not in seen:
                seen.add(nb)
                todo.append(nb)
    if len(seen) != len(cells):
        raise ValueError("the board's tiles are not all connected")


def _valid_line(line):
    if len(line) > 6 or len(set(line)) != len(line):
        return False
    return len({t // 6 for t in line}) == 1 or len({t % 6 for t in line}) == 1


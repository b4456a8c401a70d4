"""Every call the server makes into the engine, in one place.

The rest of the server package handles games only through these functions, so
porting the server to a renamed engine API means editing this module alone. Only
public names of :mod:`qwirkle_core` are used.

What leaves the server for a seat is built here (:func:`seat_view`): the library's
observation document for that seat, its legal moves when it is to move, and the
public history, in which other seats' exchanges show only how many tiles went back.
Nothing here puts the seed, the bag's order or another seat's tiles into a view.
"""

import json
import random
import secrets
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from ..errors import IllegalMoveError, RecordError
from ..evaluation.evaluate import evaluate_moves
from ..game.agents import AGENTS, agent_params, parse_agent
from ..game.game import Game
from ..game.move import Action, Move
from ..game.observation import Observation
from ..game.records import GameRecord, replay
from ..game.rules import MAX_PLAYERS, MIN_PLAYERS
from ..game.tiles import COPIES, NUM_TILE_TYPES, tile_code

__all__ = [
    "AGENT_CAPS",
    "COUNT_CAPS",
    "DEFAULT_MAX_AGENT_MS",
    "HUMAN",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "IllegalMoveError",
    "RecordError",
    "action_json",
    "agent_limits",
    "agent_names",
    "apply_action",
    "choose_move",
    "hint",
    "hint_world",
    "new_game",
    "on_the_clock",
    "play_agent",
    "play_move",
    "rank_hints",
    "record_header",
    "record_json",
    "restore",
    "seat_label",
    "seat_view",
    "undo_last",
    "warm",
]

HUMAN = "human"

DEFAULT_MAX_AGENT_MS = 300.0  # qwirkle serve --max-agent-ms: an agent's time per turn on the server

# The counts an agent without a time budget may ask of the server per turn, at
# DEFAULT_MAX_AGENT_MS (``playouts`` scales with --max-agent-ms): (least, most). An
# integer parameter of such an agent that is not listed here keeps its default on a
# server (see :func:`agent_limits`).
COUNT_CAPS: dict[str, tuple[int, int]] = {
    "playouts": (1, 256),
    "candidates": (1, 32),
    "breadth": (1, 32),
    "samples": (1, 16),
    "depth": (1, 8),  # 0 (play out to the end of the game) is refused: its cost has no bound
    "horizon": (0, 108),
}

Limits = dict[str, dict[str, tuple[float, float]]]
"""``{agent: {parameter: (least, most)}}``: the values an agent's parameters may take."""


def agent_limits(max_agent_ms: float = DEFAULT_MAX_AGENT_MS) -> Limits:
    """The values each agent parameter may take on a server whose agents may spend
    ``max_agent_ms`` milliseconds per turn, derived from the agent parameter table
    (:func:`qwirkle_core.game.agents.agent_params`), so that an agent added to the
    table is bounded without a change here:

    - a number parameter named ``*_ms`` is a time per decision: at most ``max_agent_ms``.
      An agent with one is *timed*: its budget bounds its turn, so its other
      parameters (and choices such as ``budget=clock``) keep their whole range;
    - an integer parameter of an untimed agent buys work (playouts, candidates...): it is
      bounded by :data:`COUNT_CAPS`, or held to its default when not listed there;
    - other numbers (weights) and choices change what is computed, not how much: free;
    - a file parameter (``net:weights``) is held to ``shipped`` by :func:`seat_label`.

    Parameters with their whole range are left out of the answer.
    """
    if not max_agent_ms > 0:
        raise ValueError(f"max_agent_ms must be > 0, not {max_agent_ms!r}")
    limits: Limits = {}
    for name in AGENTS:
        params = agent_params(name)
        timed = any(p.kind == "float" and p.name.endswith("_ms") for p in params)
        own: dict[str, tuple[float, float]] = {}
        for p in params:
            if p.kind == "choice" or p.lo is None or p.hi is None:
                continue
            if p.name.endswith("_ms") and p.kind == "float":
                own[p.name] = (p.lo, min(p.hi, max_agent_ms))
            elif p.kind == "int" and not timed:
                default = int(p.default)
                least, most = COUNT_CAPS.get(p.name, (default, default))
                if p.name == "playouts":
                    most = max(least, round(most * max_agent_ms / DEFAULT_MAX_AGENT_MS))
                bound = (max(least, int(p.lo)), min(most, int(p.hi)))
                if bound != (p.lo, p.hi):
                    own[p.name] = bound
        if own:
            limits[name] = own
    return limits


AGENT_CAPS = agent_limits()
"""The limits of a server at :data:`DEFAULT_MAX_AGENT_MS`."""


def agent_names() -> tuple[str, ...]:
    """The built-in agent names (``"random"``, ``"greedy"``, ...)."""
    return AGENTS


def seat_label(text: str, caps: Limits | None = None) -> str:
    """The canonical label of a seat: ``"human"`` or an agent spec such as
    ``"mc:playouts=32"`` written as the library writes it.

    Raises ValueError naming the problem for an unknown agent, a parameter out of
    its range (:class:`qwirkle_core.AgentError`), or one outside ``caps``
    (:func:`agent_limits`; by default :data:`AGENT_CAPS`: a server runs agents for
    anyone who can create a game; a bot that runs on its own machine passes ``{}``).
    """
    if not isinstance(text, str):
        raise TypeError(f"a seat is 'human' or an agent spec such as 'greedy', not {text!r}")
    if text.strip().lower() == HUMAN:
        return HUMAN
    if caps is None or caps:  # a server's: no file of its disk is named by a client
        name, *pairs = text.split(":")
        files = {p.name for p in agent_params(name.strip()) if p.kind == "file"} if name.strip() in AGENTS else set()
        for key, _, given in (pair.partition("=") for pair in pairs):
            if key.strip() in files and given.strip() != "shipped":
                raise ValueError(
                    f"agent {text!r}: {key.strip()} is 'shipped' on this server (it opens no file a client names)"
                )
    spec = parse_agent(text)
    own = (AGENT_CAPS if caps is None else caps).get(spec.name, {})
    for key, (lo, hi) in own.items():
        value = spec.value(key)
        if isinstance(value, str) or not lo <= value <= hi:
            allowed = f"{lo:g}" if lo == hi else f"{lo:g} .. {hi:g}"
            raise ValueError(f"agent {text!r}: {key} is {allowed} on this server, not {value:g}")
    return spec.label


def new_game(players: int, seed: int | None = None) -> Game:
    """A freshly dealt :class:`qwirkle_core.Game` for ``players`` seats (2..6);
    ``seed``: an int 0..2**64-1, or None for a random one."""
    return Game(players=players, seed=seed)


def record_json(game: Game, agents: Sequence[str]) -> str:
    """The game's record (JSON text) from its deal to now; ``agents``: one label per seat.
    It holds the seed and every hand: it stays on the server while the game runs."""
    return GameRecord.from_game(game, list(agents)).to_json()


def record_header(game: Game, agents: Sequence[str]) -> str:
    """The record (JSON text) of a game before its first action: rules, seed, the
    initial hands and the seats' labels. The server stores it once per game and the
    actions as rows of their own (:func:`action_json`)."""
    record = GameRecord.from_game(game.root(), list(agents))
    record.final_scores = record.winner = None
    return record.to_json()


def action_json(game: Game, count: int, by: str | None = None) -> list[str]:
    """The last ``count`` actions of ``game`` as the record writes them (JSON text each).
    ``by``: the label of the agent that played the first of them for a 'human' seat (a
    remote bot, ``qwirkle bot``), kept in that row as ``"by"`` for the record."""
    rows = [a.to_dict() for a in game.history[len(game.history) - count :]] if count else []
    if by is not None and rows:
        rows[0]["by"] = by
    return [json.dumps(r) for r in rows]


def played_by(agents: Sequence[str], actions: Sequence[str]) -> list[str]:
    """The seats' labels for the record: ``agents``, except that a 'human' seat all of
    whose stored actions (``actions``, JSON rows) were played by one remote agent
    (their ``"by"``) gets that agent's label."""
    seen: dict[int, set[str | None]] = {}
    for text in actions:
        row = json.loads(text)
        seen.setdefault(int(row["player"]), set()).add(row.get("by"))
    labels = list(agents)
    for seat, label in enumerate(agents):
        by = seen.get(seat, set())
        if label == HUMAN and len(by) == 1 and None not in by:
            labels[seat] = str(next(iter(by)))
    return labels


def restore(header: str, actions: Sequence[str] = ()) -> Game:
    """The game of a stored header and action rows (or of a whole record, as text, with
    no rows), rebuilt and checked action by action (``replay``); its history holds
    the actions, so they can be undone. Raises :class:`qwirkle_core.RecordError` for
    a record that does not replay."""
    if not actions:
        return replay(GameRecord.from_json(header))
    data = json.loads(header)
    data["actions"] = [json.loads(a) for a in actions]
    for row in data["actions"]:
        if isinstance(row, dict):
            row.pop("by", None)  # who played it (action_json), not part of a record's action
    return replay(GameRecord.from_dict(data))


def apply_action(game: Game, text: str) -> None:
    """Play the stored action ``text`` (one row, JSON) on ``game``, checking it as
    ``replay`` does: the player to move, the move's legality, its points and the scores.
    Raises :class:`qwirkle_core.RecordError` for an action that does not fit the game
    (the game may then be changed: rebuild it with :func:`restore`)."""
    try:
        data = json.loads(text)
        move = Move.parse(data["move"])
        player, points, scores = int(data["player"]), int(data["points"]), tuple(data["scores"])
    except (ValueError, KeyError, TypeError) as e:
        raise RecordError(f"a stored action is malformed: {e}") from None
    if player != game.current_player:
        raise RecordError(f"a stored action is seat {player}'s, but seat {game.current_player} is to move")
    try:
        got = game.play(move)
    except IllegalMoveError as e:
        raise RecordError(f"a stored action is illegal: {e}") from None
    if got != points or tuple(game.scores) != scores:
        raise RecordError("a stored action's points or scores differ from the rules'")


def _action_result(action: Action) -> dict[str, Any]:
    return {"player": action.player, "move": str(action.move), "points": action.points, "scores": list(action.scores)}


def play_move(game: Game, text: str) -> dict[str, Any]:
    """Play the move written ``text`` (notation: a placement, ``x R1 B4`` or ``pass``)
    for the current player. Returns ``{"player", "move" (canonical), "points", "scores"}``.

    Raises :class:`IllegalMoveError` (the rules say no) or ValueError/TypeError (not
    readable as a move); either way the game is unchanged.
    """
    move = Move.parse(text)
    game.play(move)
    return _action_result(game.history[-1])


def play_agent(game: Game, label: str, on_clock: bool = False) -> dict[str, Any]:
    """Let the agent ``label`` take the current turn; returns the action as
    :func:`play_move` does. ``on_clock``: a timed agent (see :func:`on_the_clock`)
    keeps to its time per turn in true time."""
    return _action_result(game.play_agent(on_the_clock(label) if on_clock else label))


@lru_cache(maxsize=1024)
def on_the_clock(label: str) -> str:
    """The agent ``label`` with every choice that offers ``clock`` (a time budget kept on
    the true clock, such as the search agent's ``budget``) set to it, so that its
    ``*_ms`` time per turn bounds the turn's wall time however slow or loaded the machine
    is; other agents as they are."""
    spec = parse_agent(label)
    params = dict(spec.params)
    for p in agent_params(spec.name):
        if p.kind == "choice" and any(name == "clock" for name, _ in p.choices):
            params[p.name] = "clock"
    return parse_agent((spec.name, params)).label if params else label


def undo_last(game: Game, seat: int) -> int:
    """Take back ``seat``'s last action and every action after it; returns how many
    actions were taken back. Raises :class:`IllegalMoveError` when ``seat`` has no
    action to take back or the game is over (its record may have been seen)."""
    if game.is_over:
        raise IllegalMoveError("the game is over")
    if not any(a.player == seat for a in game.history):
        raise IllegalMoveError("there is no move of yours to take back")
    undone = 1
    while game.undo().player != seat:
        undone += 1
    return undone


_CODES = tuple(tile_code(t) for t in range(NUM_TILE_TYPES))


def _legal_moves(game: Game) -> list[dict[str, Any]]:
    """``[{"move", "points"}]`` of every legal placement, best first (ties in the
    engine's order): what ``sorted(game.legal_moves(), key=-score)`` written in
    notation gives, formatted straight from :meth:`Game.legal_move_arrays` (a view
    lists hundreds of moves; building a Move for each cost most of a view)."""
    arrays = game.legal_move_arrays()
    counts = arrays.counts
    if len(counts) == 0:
        return []
    rows, cols, tiles = arrays.rows, arrays.cols, arrays.tiles
    # the engine lists a move's cells in (row, col) order already: sort only if not
    unused = np.arange(6)[None, 1:] >= counts[:, None]
    later = (rows[:, 1:] > rows[:, :-1]) | ((rows[:, 1:] == rows[:, :-1]) & (cols[:, 1:] > cols[:, :-1]))
    in_order = bool(np.all(later | unused))
    rs, cs, ts = rows.tolist(), cols.tolist(), tiles.tolist()
    ks, scores = counts.tolist(), arrays.scores.tolist()
    cache = _CELLS
    out = []
    for i in sorted(range(len(ks)), key=lambda i: -scores[i]):
        k = ks[i]
        cells = zip(rs[i][:k], cs[i][:k], ts[i][:k])
        words = []
        for cell in cells if in_order else sorted(cells):
            word = cache.get(cell)
            if word is None:
                r, c, t = cell
                word = cache[cell] = f"{_CODES[t]}@{r},{c}"
            words.append(word)
        out.append({"move": " ".join(words), "points": scores[i]})
    if len(cache) > 1 << 17:
        cache.clear()
    return out


_CELLS: dict[tuple[int, int, int], str] = {}  # "R1@0,1" of (row, col, tile)


@lru_cache(maxsize=1 << 16)
def _notation(move: Move) -> str:
    return str(move)


def _public_history(game: Game, seat: int | None) -> list[dict[str, Any]]:
    out = []
    for a in game.history:
        kind = a.move.kind.value
        hidden = kind == "exchange" and a.player != seat
        out.append(
            {
                "player": a.player,
                "kind": kind,
                "move": None if hidden else _notation(a.move),
                "tiles": len(a.move),
                "points": a.points,
                "scores": list(a.scores),
            }
        )
    return out


def _spectator_observation(game: Game) -> dict[str, Any]:
    """The observation document's shape with nothing private: no hand, and ``unseen``
    counting every tile not on the board (hands and bag together)."""
    doc = game.observation(0).to_dict()
    on_board = Counter(game.board.values())
    doc["player"] = None
    doc["hand"] = []
    doc["unseen"] = [COPIES - on_board[t] for t in range(NUM_TILE_TYPES)]
    return doc


def seat_view(game: Game, seat: int | None) -> dict[str, Any]:
    """What ``seat`` (an int, or None for a spectator) may see, as a JSON-ready dict:

    ``observation`` (the library's observation document of that seat), ``legal_moves``
    (``[{"move", "points"}]``, best first, only when ``seat`` is to move), ``can_exchange``
    (how many tiles it may exchange now, 0 if none), ``can_pass``, ``to_move`` (None
    when over), ``scores``, ``over``, ``winner`` and ``history`` (every action; other
    seats' exchanges without their tiles).
    """
    over = game.is_over
    to_move = None if over else game.current_player
    mine = seat is not None and seat == to_move
    obs = game.observation(seat).to_dict() if seat is not None else _spectator_observation(game)
    moves = _legal_moves(game) if mine else []
    can_exchange = 0
    if mine and not game.opening_pending:
        can_exchange = min(game.bag_size, len(game.hand(seat)))
    return {
        "seat": seat,
        "observation": obs,
        "legal_moves": moves,
        "can_exchange": can_exchange,
        "can_pass": mine and not moves and game.bag_size == 0,
        "to_move": to_move,
        "scores": list(game.scores),
        "over": over,
        "winner": game.winner,
        "history": _public_history(game, seat),
    }


def hint(game: Game, seat: int, count: int = 3, playouts: int = 64) -> list[dict[str, Any]]:
    """The engine's best ``count`` moves for ``seat`` (who must be to move), by Monte
    Carlo evaluation of a copy of the game in which everything the seat cannot see is
    dealt afresh (so a hint reveals nothing hidden): ``[{"move", "points", "margin",
    "win_rate"}]``, best first. ``margin``: mean final score margin in points;
    ``win_rate``: share of playouts won (0..1). Runs on one thread, tens of ms."""
    return rank_hints(hint_world(game, seat), count, playouts)


def hint_world(game: Game, seat: int) -> Game:
    """The world a hint for ``seat`` (who must be to move) is computed in: a copy of
    ``game`` in which every tile the seat cannot see is dealt afresh. Fast (a copy and
    a shuffle): the server makes it under the game's lock and ranks it
    (:func:`rank_hints`, the costly part) without the lock. Raises
    :class:`IllegalMoveError` when ``seat`` is not to move."""
    if game.is_over or game.current_player != seat:
        raise IllegalMoveError("a hint is for the seat to move")
    return game.determinize(seat, seed=secrets.randbits(64))


def rank_hints(world: Game, count: int = 3, playouts: int = 64) -> list[dict[str, Any]]:
    """:func:`hint`'s answer for a world made by :func:`hint_world`."""
    evaluations = evaluate_moves(world, playouts=playouts, top=10, seed=secrets.randbits(64), threads=1)
    return [
        {
            "move": str(e.move),
            "points": e.move.score or 0,
            "margin": round(e.margin, 2),
            "win_rate": round(e.win_rate, 3),
        }
        for e in evaluations[:count]
    ]


def choose_move(observation: dict[str, Any], label: str, seed: int) -> str:
    """The move (notation) the agent ``label`` picks from an observation document
    alone, as a remote bot does: the tiles the seat cannot see are dealt at random
    (from ``seed``) into the other hands and the bag, and the agent plays that world.

    Raises ValueError for a malformed observation, a finished game, or a seat that is
    not to move.
    """
    obs = Observation.from_dict(observation)
    if obs.is_over or obs.current_player != obs.player:
        raise ValueError(f"seat {obs.player} is not to move")
    if obs.unseen is None:
        raise ValueError("the server's bots play the tile game, not Qwirkle Cubes")
    hidden = [t for t, n in enumerate(obs.unseen) for _ in range(n)]
    rng = random.Random(seed)
    rng.shuffle(hidden)
    hands = []
    for p, size in enumerate(obs.hand_sizes):
        if p == obs.player:
            hands.append(list(obs.hand))
        else:
            hands.append(hidden[:size])
            del hidden[:size]
    world = Game.from_position(
        board=obs.board,
        hands=hands,
        bag=hidden,
        scores=list(obs.scores),
        current_player=obs.current_player,
        rules=obs.rules,
        seed=seed,
    )
    return str(world.play_agent(label).move)


# cheap forms of every built-in agent: their turns load the kernels the agent's turns use
_WARM_AGENTS = (
    "random",
    "greedy",
    "heuristic",
    "mc:playouts=2:candidates=2:depth=1",
    "search:time_ms=1",
    "static",
)


def warm() -> float:
    """Load every kernel the server uses (from numba's disk cache, or compiled when it
    is not there): a few turns of each built-in agent, a view, a hint, an undo and a
    replay of a throwaway game. The server calls it before it accepts connections, so
    that the first request costs what later ones do. Returns the seconds it took."""
    import time

    start = time.perf_counter()
    game = new_game(2, seed=1)
    for label in _WARM_AGENTS:
        world = game.copy()
        for _ in range(3):
            if world.is_over:
                break
            play_agent(world, label, on_clock=True)
        seat_view(world, world.current_player)
        seat_view(world, None)
    hint(game, game.current_player, playouts=2)
    play_agent(game, "greedy")
    seat_view(game, game.current_player)
    undo_last(game, 0 if game.history[0].player == 0 else 1)
    restore(record_json(game, ["human", "greedy"]))
    return time.perf_counter() - start

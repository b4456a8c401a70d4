"""The measurements of the search's fourth to eighteenth tuning rounds (docs/agents.md).

    python benchmarks/search_tuning.py paired search:finish=24 search --seed 1000 --deals 300
    python benchmarks/search_tuning.py paired heuristic:dup=1 heuristic --opponent heuristic --seed 31000 --deals 20000
    python benchmarks/search_tuning.py paired search search:win=0 --seed 1000 --first 300 --deals 300
    python benchmarks/search_tuning.py margins search --seed 1000 --first 0,300 --deals 100 --out base.npz
    python benchmarks/search_tuning.py paired search:win=0 base.npz --seed 1000 --first 0,300 --deals 100
    python benchmarks/search_tuning.py horizon --seed 5000 --games 3000
    python benchmarks/search_tuning.py horizon --seed 5000 --games 3000 --agent heuristic:reply=0:cycle=1:fits=0.25
    python benchmarks/search_tuning.py endgame --seed 8000 --positions 100 --nodes 25000,40000,80000,150000,300000
    python benchmarks/search_tuning.py infer heuristic mc search:time_ms=10 --seed 7000 --games 10
    python benchmarks/search_tuning.py regret search search:time_ms=10 heuristic --seed 9100 --games 40
    python benchmarks/search_tuning.py ceiling --seed 50000 --games 300 --jobs 2

``paired A B``: both agents play the same deals against ``--opponent`` (greedy), each
deal from both seats (the tournament's own games: ``tournament.play_deals``, deals
``--first`` to ``--first`` + ``--deals``, for each of the comma-separated ``--first``);
prints each agent's win rate and mean margin, how many games went differently, and the
differences of the win rates and of the mean margins paired by game, with their
standard errors. Settings that differ only late in the game play the same games until
then, so the paired difference is much more precise than the two win rates.

``margins A --out FILE.npz``: plays ``paired``'s games of one agent and saves its
margins with the deals and the git commit. ``paired`` takes such a file in place of an
agent (it must hold the same deals), so two builds compare in one run: save the margins
on a trial's commit (with this script, copied there if it lacks ``margins``), then run
``paired`` on the other commit.

``endgame``: positions where the bag has just run out (heuristic self-play, one per
seed); for each node budget, the mean loss of the solver's first move against best
play (exact values by an unlimited solve) and how often the budget solved exactly.
Positions whose exact solve exceeds ``--exact-ms`` are skipped.

``horizon``: the weights of the search's horizon value (``outlook``, ``tempo``). In
two-player self-play of ``--agent`` (the heuristic by default), at every position
with tiles in the bag, the rest of the game's margin of the side to move (its final
margin minus its margin now) is fitted by least squares to the best score the side
to move could make now, the best score of the other side, and a constant; then also
to the hand shape of each side (its largest group of distinct tiles sharing a colour
or a shape, minus its extra copies of a tile: the ninth round's trial term), then
also to the tiles in the bag and each side's extra copies of a tile (the seventeenth
round), with standard errors and the share of the variance each fit explains.

``infer``: how far each agent's placements fall below the best score (the model of
the seventh round's inference of kept tiles, a trial). In two-player self-play
(greedy plays the openings and the empty-bag endgames), at every position with tiles
in the bag, the gap of the placement played (best score minus its score); prints how
often it is 0, its mean, and the mean log-likelihood of the gaps for a range of beta
under the model P(placement) proportional to exp(-beta x gap) over the legal placements.

``regret``: how far each agent's choices fall below the best of the search's
candidates by the search's own playout values (its default ``depth``, ``finish``,
``outlook``, ``tempo`` and ``win``), each candidate valued by ``--playouts`` playouts.
Positions: every ``--every``-th turn of two-player heuristic self-play with tiles in
the bag and at least two placements. A small regret means the search finds the best
move by its own values: more playouts cannot help it, better values can.

``ceiling``: what better play once the bag is empty could still gain. Two-player games
of ``search`` against greedy (game i: ``Game(players=2, seed=seed + i)``, search in seat
i mod 2); at each of search's decisions with an empty bag, the exact final margin under
best play before and after its move (unlimited solves): the difference is what the move
gave away against best play. Prints search's win rate, those points per game, and the
games where a move turned a forced win into a position without one (and how many of
those search then did not win).
"""

from __future__ import annotations

import argparse
import json
import subprocess
from concurrent.futures import ProcessPoolExecutor

import numpy as np

import qwirkle_core as qc
from qwirkle_core._kernels import agents as _ag
from qwirkle_core._kernels import layout as _lo
from qwirkle_core._kernels import search as _se
from qwirkle_core._kernels import state as _st
from qwirkle_core.batch.tournament import play_deals
from qwirkle_core.evaluation.endgame import solve_endgame


def _firsts(text: str) -> list[int]:
    """``--first``: one deal number, or several separated by commas."""
    try:
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--first must be deal numbers separated by commas, not {text!r}") from None


def margins(agent: str, opponent: str, seed: int, firsts: list[int], deals: int, threads: int) -> np.ndarray:
    """float64[len(firsts) * deals, 2]: ``agent``'s margin in each deal (deals ``f`` to
    ``f + deals`` for each ``f`` of ``firsts``, in order) from seat 0, then seat 1."""
    rows = []
    for first in firsts:
        ab, ba = play_deals(qc.parse_agent(agent), qc.parse_agent(opponent), seed, first, first + deals, threads)
        rows.append(np.stack([ab[:, 0] - ab[:, 1], ba[:, 1] - ba[:, 0]], 1).astype(np.float64))
    return np.concatenate(rows)


def _wins(m: np.ndarray) -> np.ndarray:
    """1 for a won game, 0.5 for a tie, 0 for a lost one, from the margins ``m``."""
    return (m > 0) + 0.5 * (m == 0)


def _deals_of(args: argparse.Namespace) -> dict[str, object]:
    """The deals a run plays, as stored beside saved margins and checked on loading."""
    return {"opponent": args.opponent, "seed": args.seed, "first": args.first, "deals": args.deals}


def _commit() -> str:
    """The checkout's commit (``-dirty`` when it has changes), or ``unknown``."""
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--abbrev=10"], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out.stdout.strip()


def save_margins(args: argparse.Namespace) -> None:
    meta = {"agent": args.agent, "commit": _commit(), **_deals_of(args)}  # the code that plays
    m = margins(args.agent, args.opponent, args.seed, args.first, args.deals, args.threads)
    np.savez(args.out, margins=m, meta=json.dumps(meta))
    w = _wins(m)
    print(
        f"{args.agent}: {m.size} games, win rate {100 * w.mean():.1f}% ± {100 * w.std(ddof=1) / np.sqrt(w.size):.1f}, "
        f"mean margin {m.mean():+.2f}; saved to {args.out} (commit {meta['commit']})"
    )


def _margins_or_file(name: str, args: argparse.Namespace) -> tuple[str, np.ndarray]:
    """``(label, margins)`` of ``name``: an agent spec played now, or a file written by
    ``margins`` for the same deals."""
    if not name.endswith(".npz"):
        return name, margins(name, args.opponent, args.seed, args.first, args.deals, args.threads)
    try:
        with np.load(name) as f:
            meta, m = json.loads(str(f["meta"])), f["margins"]
        want = _deals_of(args)
        held = {k: meta[k] for k in want}
    except (OSError, KeyError, ValueError) as e:
        raise SystemExit(f"{name}: not a file written by margins ({e})") from None
    if held != want:
        raise SystemExit(f"{name} holds other deals: {held}, this run plays {want}")
    return f"{meta['agent']} at {meta['commit']} ({name})", m


def paired(args: argparse.Namespace) -> None:
    (na, a), (nb, b) = (_margins_or_file(x, args) for x in (args.a, args.b))
    wins = [_wins(m).ravel() for m in (a, b)]
    for name, m, w in ((na, a, wins[0]), (nb, b, wins[1])):
        print(f"{name}: {m.size} games, win rate {100 * w.mean():.1f}%, mean margin {m.mean():+.2f}")
    print(f"games with different margins: {(a != b).sum()}, with different results: {(wins[0] != wins[1]).sum()}")
    for what, d, unit in (("win rates", 100 * (wins[0] - wins[1]), " points"), ("mean margins", (a - b).ravel(), "")):
        print(f"paired difference of the {what}: {d.mean():+.2f} ± {d.std(ddof=1) / np.sqrt(d.size):.2f}{unit}")


def _exact_margin(g: qc.Game, me: int, time_ms: float | None = None) -> int:
    """Seat ``me``'s final margin under best play from ``g`` (its bag empty; the game's
    own margin when it is over)."""
    if g.is_over:
        return g.scores[me] - g.scores[1 - me]
    value = solve_endgame(g, time_ms=time_ms).value
    return value if g.current_player == me else -value


def endgame(args: argparse.Namespace) -> None:
    budgets = [int(x) for x in args.nodes.split(",")]
    losses: dict[int, list[int]] = {b: [] for b in budgets}
    exact: dict[int, int] = dict.fromkeys(budgets, 0)
    for s in range(args.seed, args.seed + args.positions):
        g = qc.Game(players=2, seed=s)
        while not g.is_over and g.bag_size > 0:
            g.play_agent("heuristic")
        best = None if g.is_over else solve_endgame(g, time_ms=args.exact_ms)
        if best is None or not best.exact:
            continue
        me, value = g.current_player, {}
        for b in budgets:
            r = solve_endgame(g, max_nodes=b)
            key = str(r.move)
            if key not in value:  # the exact final margin after the chosen move
                h = g.copy()
                h.play(r.move)
                value[key] = _exact_margin(h, me, args.exact_ms)
            losses[b].append(best.value - value[key])
            exact[b] += r.exact
    for b in budgets:
        print(
            f"{b} positions: mean loss {np.mean(losses[b]):.2f} points over {len(losses[b])} endgames, {exact[b]} solved exactly"
        )


def _shape(hand: tuple[int, ...]) -> int:
    """A hand's shape: its largest group (distinct tiles sharing a colour or a shape)
    minus its extra copies of a tile."""
    distinct = set(hand)
    return int(_st.largest_group(sum(1 << t for t in distinct))) - (len(hand) - len(distinct))


def horizon(args: argparse.Namespace) -> None:
    rows: list[tuple[int, ...]] = []  # a position's features (in the order of names below), then the rest's margin
    buf = np.zeros((64, _lo.MOVE_COLS), np.int32)
    for s in range(args.seed, args.seed + args.games):
        g = qc.Game(players=2, seed=s)
        seen: list[tuple[int, ...]] = []  # (mover, *features, its margin now)
        while not g.is_over:
            if g.bag_size > 0 and g.board:
                me = g.current_player
                mine, theirs, _, buf = _se.next_scores(g.kernel_arrays(), buf, me)
                hands = g.hand(me), g.hand(1 - me)
                seen.append(
                    (
                        me,
                        int(mine),
                        int(theirs),
                        *(_shape(h) for h in hands),
                        g.bag_size,
                        *(len(h) - len(set(h)) for h in hands),
                        g.scores[me] - g.scores[1 - me],
                    )
                )
            g.play_agent(args.agent)
        rows += [(*f, g.scores[me] - g.scores[1 - me] - now) for me, *f, now in seen]
    data = np.array(rows, np.float64)
    y = data[:, -1]
    names = (
        "best now, side to move",
        "best now, other side",
        "hand shape, side to move",
        "hand shape, other side",
        "tiles in the bag",
        "extra copies, side to move",
        "extra copies, other side",
    )
    for k in (2, 4, 7):  # the fifth round's fit, with the hand shapes (ninth round), with the rest (seventeenth)
        x = np.column_stack([data[:, :k], np.ones(len(data))])
        coef, *_ = np.linalg.lstsq(x, y, rcond=None)
        residual = y - x @ coef
        se = np.sqrt(np.diag(np.var(residual) * np.linalg.inv(x.T @ x)))
        terms = " ".join(f"{c:+.2f} (± {e:.2f}) x ({n})" for c, e, n in zip(coef, se, names[:k]))
        print(
            f"{len(data)} positions of {args.games} games: rest of the game's margin = {terms} {coef[-1]:+.2f}; "
            f"variance explained {100 * (1 - residual.var() / y.var()):.2f} %"
        )


def infer(args: argparse.Namespace) -> None:
    betas = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 8.0)
    for agent in args.agents:
        played, options = [], []
        for s in range(args.seed, args.seed + args.games):
            g = qc.Game(players=2, seed=s)
            while not g.is_over:
                scores = g.legal_move_arrays().scores
                if not scores.size or not g.board or g.bag_size == 0:
                    g.play_agent("greedy")
                    continue
                gap = int(scores.max()) - g.play_agent(agent).points
                played.append(gap)
                options.append(scores.max() - scores)
        gaps = np.array(played)
        ll = [np.mean([-b * g0 - np.log(np.exp(-b * gs).sum()) for g0, gs in zip(gaps, options)]) for b in betas]
        fits = ", ".join(f"{b:g}: {x:.3f}" for b, x in zip(betas, ll))
        print(
            f"{agent}: {len(gaps)} placements, gap 0 in {100 * np.mean(gaps == 0):.1f} %, mean gap {gaps.mean():.2f}; "
            f"log-likelihood per placement by beta: {fits}; best beta {betas[int(np.argmax(ll))]:g}"
        )


def regret(args: argparse.Namespace) -> None:
    spec = qc.parse_agent("search")
    scratch = _ag.new_agent_scratch(True)
    cands = np.zeros((_lo.MAX_CANDIDATES, _lo.CAND_COLS), np.int64)
    policy = _lo.DEFAULT_SPECS[_lo.HEURISTIC].copy()
    losses: dict[str, list[float]] = {a: [] for a in args.agents}
    outside = dict.fromkeys(args.agents, 0)
    for s in range(args.seed, args.seed + args.games):
        g = qc.Game(players=2, seed=s)
        turn = 0
        while not g.is_over and g.bag_size > 0:
            if turn % args.every == args.every // 2 and len(g.legal_moves()) > 1:
                a = g.kernel_arrays()
                k = _se.engine_candidates(a, int(spec.value("candidates")), scratch, cands)
                depth = 0 if g.bag_size <= int(spec.value("finish")) else int(spec.value("depth"))
                values = np.zeros((k, args.playouts))
                _se.evaluate_candidates(
                    a,
                    cands,
                    k,
                    policy,
                    args.playouts,
                    depth,
                    np.uint64(s * 1000 + turn),
                    scratch,
                    values,
                    float(spec.value("outlook")),
                    float(spec.value("tempo")),
                    float(spec.value("win")),
                )
                value = {g.decode_action(cands[c]): values[c].mean() for c in range(k)}
                best = max(value.values())
                for agent in args.agents:
                    move = g.copy().play_agent(agent).move
                    if move in value:
                        losses[agent].append(best - value[move])
                    else:
                        outside[agent] += 1
            g.play_agent("heuristic")
            turn += 1
    for agent in args.agents:
        x = np.array(losses[agent])
        print(
            f"{agent}: {x.size} positions, mean regret {x.mean():.3f} ± {x.std(ddof=1) / np.sqrt(x.size):.3f} points, "
            f"the best candidate in {100 * np.mean(x == 0):.1f} %, {outside[agent]} choices outside the candidates"
        )


def _ceiling_game(seed: int, me: int) -> tuple[int, int, bool]:
    """Search's final margin, the points its moves with an empty bag gave away by exact
    values, and whether one of them gave away a forced win."""
    g = qc.Game(players=2, seed=seed)
    given, thrown = 0, False
    while not g.is_over:
        if g.current_player != me:
            g.play_agent("greedy")
            continue
        before = _exact_margin(g, me) if g.bag_size == 0 else None
        g.play_agent("search")
        if before is not None:
            after = _exact_margin(g, me)
            given += before - after
            thrown = thrown or before > 0 >= after
    return _exact_margin(g, me), given, thrown


def ceiling(args: argparse.Namespace) -> None:
    seeds = range(args.seed, args.seed + args.games)
    with ProcessPoolExecutor(args.jobs) as pool:
        rows = np.array(list(pool.map(_ceiling_game, seeds, [i % 2 for i in range(args.games)])))
    margin, given, thrown = rows[:, 0], rows[:, 1], rows[:, 2] != 0
    wins = _wins(margin)
    print(f"{args.games} games, search's win rate {100 * wins.mean():.1f} %, mean margin {margin.mean():+.2f}")
    print(f"points its moves with an empty bag gave away: {given.mean():.2f} a game (in {(given > 0).sum()} games)")
    thrown_lost = thrown & (margin <= 0)
    print(
        f"a forced win given away in {thrown.sum()} games, of which {thrown_lost.sum()} not won "
        f"({(margin[thrown_lost] == 0).sum()} ties): {100 * (1 - wins[thrown_lost]).sum() / args.games:.2f} points of win rate"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    pp = sub.add_parser("paired", help="two agents (or saved margins) on the same deals, paired by game")
    pp.add_argument("a", help="an agent spec, or a .npz file written by margins")
    pp.add_argument("b", help="an agent spec, or a .npz file written by margins")
    pm = sub.add_parser("margins", help="play an agent's deals and save its margins, for paired on another build")
    pm.add_argument("agent")
    pm.add_argument("--out", required=True, help="the .npz file to write")
    for q in (pp, pm):
        q.add_argument("--opponent", default="greedy")
        q.add_argument("--seed", type=int, default=1000)
        q.add_argument(
            "--first", type=_firsts, default=[0], help="the first deal; several, comma-separated, for several ranges"
        )
        q.add_argument("--deals", type=int, default=300, help="deals in each range")
        q.add_argument("--threads", type=int, default=1)
    pe = sub.add_parser("endgame", help="the solver's first-move loss by node budget")
    pe.add_argument("--seed", type=int, default=8000)
    pe.add_argument("--positions", type=int, default=100)
    pe.add_argument("--nodes", default="25000,40000,80000,150000,300000")
    pe.add_argument("--exact-ms", type=float, default=15000.0)
    ph = sub.add_parser("horizon", help="the horizon value's weights, fitted on self-play (the heuristic's by default)")
    ph.add_argument("--seed", type=int, default=5000)
    ph.add_argument("--games", type=int, default=3000)
    ph.add_argument(
        "--agent", type=qc.parse_agent, default="heuristic", help="the agent of the self-play (default: heuristic)"
    )
    pi = sub.add_parser("infer", help="how far agents' placements fall below the best score")
    pi.add_argument("agents", nargs="+")
    pi.add_argument("--seed", type=int, default=7000)
    pi.add_argument("--games", type=int, default=10)
    pr = sub.add_parser(
        "regret", help="how far agents' choices fall below the search's best candidate by its own values"
    )
    pr.add_argument("agents", nargs="+")
    pr.add_argument("--seed", type=int, default=9100)
    pr.add_argument("--games", type=int, default=40)
    pr.add_argument("--every", type=int, default=7)
    pr.add_argument("--playouts", type=int, default=3000)
    pc = sub.add_parser("ceiling", help="what better play once the bag is empty could still gain")
    pc.add_argument("--seed", type=int, default=50000)
    pc.add_argument("--games", type=int, default=300)
    pc.add_argument("--jobs", type=int, default=2, help="games played at once (processes)")
    args = p.parse_args()
    commands = {
        "paired": paired,
        "margins": save_margins,
        "endgame": endgame,
        "horizon": horizon,
        "infer": infer,
        "regret": regret,
        "ceiling": ceiling,
    }
    commands[args.command](args)


if __name__ == "__main__":
    main()

"""The baseline: sb3-contrib's MaskablePPO with MovePolicy, against a league.

The policy (``qwirkle_core.env.sb3.MovePolicy``) scores every listed move with the
learned move scorer's network (weights shared by the moves) from its input row
(``move_inputs``: the move's features, the static agent's value of it, the position)
and samples from the masked softmax; a value head reads the pooled moves. It learns
from ``VectorEnv(actions="moves", reward="margin", scorer_inputs=True)`` games against
a pool of opponents (``--pool``, ``--pool-weights``), played inside the kernel; every
``--snapshot-minutes`` the policy's scorer joins the pool (snapshot self-play: the
``net`` agent plays the file). Every ``--checkpoint-minutes`` of training (the
process's CPU time, so other work on a shared machine does not count) it writes the
scorer as a weights file ``ckpt_MMM.M.npz`` that the ``net`` agent plays
(``qwirkle tournament --agents net:weights=runs/ppo/final.npz,greedy``). SB3's logger
writes ``progress.csv`` and, with tensorboard installed, TensorBoard events
(``tensorboard --logdir runs/ppo``); the rollout's win rate per opponent is logged.

    pip install 'qwirkle-core[rl-train]'
    python docs/examples/train_ppo.py --minutes 30 --out runs/ppo
    python docs/examples/train_ppo.py --evaluate runs/ppo --games 1000 --png docs/ppo-curve.png
    python docs/examples/train_ppo.py --league runs/ppo --games 200

``--init FILE`` starts the scorer from a weights file (a checkpoint, or the ``net``
agent's). ``--evaluate`` plays the checkpoints against greedy and heuristic
(seat-swapped games on the same deals, seeds distinct from training); ``--league``
rates the snapshots, the final policy and the built-in agents in one round robin
(Bradley-Terry, greedy at 1500).

Ctrl-C, SIGTERM (a scheduler, ``timeout``, a preemption) or SIGHUP stop the training
after the current step and keep it: the weights reached are written as ``final.npz``
beside the checkpoints and the log, and the script exits with 130, 143 or 129
(``qwirkle_core.stopping``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

import qwirkle_core as qc
from qwirkle_core.stopping import exit_status, stop_signals, stopped_by

COMMAND = "python docs/examples/train_ppo.py"


def make_model(args: argparse.Namespace) -> Any:
    """The vectorised games and the MaskablePPO model of a run."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecNormalize

    from qwirkle_core.env.sb3 import MovePolicy, make_vec_env

    torch.set_num_threads(1)
    pool = args.pool.split(",")
    weights = [float(w) for w in args.pool_weights.split(",")] if args.pool_weights else None
    venv = make_vec_env(
        args.envs, pool=pool, pool_weights=weights, players=2, window=args.window, actions="moves",
        reward="margin", scorer_inputs=True, keys=MovePolicy.KEYS,
    )  # fmt: skip
    venv.seed(args.seed)
    venv = VecNormalize(venv, norm_obs=False, norm_reward=True, gamma=args.gamma)
    return MaskablePPO(
        MovePolicy,
        venv,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.epochs,
        learning_rate=args.lr,
        gamma=args.gamma,
        gae_lambda=args.lam,
        clip_range=args.clip,
        ent_coef=args.ent_coef,
        seed=args.seed,
        policy_kwargs={"hidden": (args.hidden1, args.hidden2), "init": args.init},
    )


def provenance(args: argparse.Namespace, cpu_minutes: float, steps: int) -> dict[str, Any]:
    """What a weights file records of the run that wrote it."""
    return {
        "command": " ".join([COMMAND, *sys.argv[1:]]),
        "arguments": {k: v for k, v in vars(args).items() if k not in ("evaluate", "league", "png")},
        "trainer": "MaskablePPO (sb3-contrib) with qwirkle_core.env.sb3.MovePolicy",
        "seed": args.seed,
        "pool": args.pool,
        "cpu_minutes": round(cpu_minutes, 2),
        "env_steps": steps,
        "version": qc.__version__,
        "date": time.strftime("%Y-%m-%d"),
    }


def make_callback(args: argparse.Namespace, start_cpu: float) -> Any:
    from stable_baselines3.common.callbacks import BaseCallback

    out = Path(args.out)

    class League(BaseCallback):
        """Checkpoints and snapshots on CPU time, the win rate per opponent, the end."""

        def __init__(self) -> None:
            super().__init__()
            self.next_ckpt, self.next_snap, self.snaps = 0.0, args.snapshot_minutes, 0
            self.results: dict[str, deque[float]] = {}  # the last 200 results per opponent

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "winner" in info and info["winner"] >= -1:
                    won = 1.0 if info["winner"] == 0 else 0.5 if info["winner"] == -1 else 0.0
                    self.results.setdefault(str(info["opponents"]), deque(maxlen=200)).append(won)
            minutes = (time.process_time() - start_cpu) / 60
            if minutes >= self.next_ckpt:
                self.export(out / f"ckpt_{self.next_ckpt:05.1f}.npz", minutes)
                self.next_ckpt += args.checkpoint_minutes
            if args.snapshot_minutes > 0 and minutes >= self.next_snap:
                self.snaps += 1
                path = self.export(out / "snapshots" / f"snap_{self.snaps:03d}.npz", minutes)
                self.training_env.env_method("add_opponent", f"net:weights={path}", weight=args.snapshot_weight)
                self.next_snap += args.snapshot_minutes
            return minutes < args.minutes

        def _on_rollout_end(self) -> None:
            self.logger.record("time/cpu_minutes", round((time.process_time() - start_cpu) / 60, 2))
            self.logger.record("league/pool_size", len(self.training_env.get_attr("pool")[0]))
            for label, games in self.results.items():
                name = Path(label.split("=")[-1]).stem if "=" in label else label
                self.logger.record(f"rollout/win_rate_vs_{name}", float(np.mean(games)))
            every = [w for games in self.results.values() for w in games]
            if every:
                self.logger.record("rollout/win_rate", float(np.mean(every)))

        def export(self, path: Path, minutes: float) -> Path:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.model.policy.export(str(path), provenance(args, minutes, self.num_timesteps))
            return path

    return League()


def train(args: argparse.Namespace) -> None:
    from stable_baselines3.common.logger import configure

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    start_cpu = time.process_time()
    model = make_model(args)
    formats = ["stdout", "csv"]
    try:
        import tensorboard  # noqa: F401

        formats.append("tensorboard")
    except ImportError:
        pass
    model.set_logger(configure(str(out), formats))
    callback = make_callback(args, start_cpu)
    try:
        model.learn(total_timesteps=10**12, callback=callback)
    finally:  # also on Ctrl-C or SIGTERM: the weights reached so far are kept
        minutes = (time.process_time() - start_cpu) / 60
        model.policy.export(str(out / "final.npz"), provenance(args, minutes, model.num_timesteps))
        print(f"wrote {out / 'final.npz'} after {minutes:.1f} CPU minutes, {model.num_timesteps} steps", flush=True)


def win_rate(path: Path, opponent: str, games: int, seed: int) -> tuple[float, float, float]:
    """The net agent playing ``path`` against ``opponent``: its win rate (ties half) and
    95 % interval over ``games`` seat-swapped games (``games // 2`` deals)."""
    result = qc.tournament([f"net:weights={path}", opponent], games=games, seed=seed)
    match = result.matches[0]
    low, high = match.interval()
    return match.win_rate, low, high


def evaluate(args: argparse.Namespace) -> None:
    run = Path(args.evaluate)
    ckpts = sorted(run.glob("ckpt_*.npz")) + [run / "final.npz"]
    rows = []
    for i, ck in enumerate(c for c in ckpts if c.exists()):
        final = ck.name == "final.npz"
        minutes = json.loads(str(np.load(ck)["provenance"]))["cpu_minutes"]
        row: dict[str, Any] = {"cpu_min": minutes, "file": ck.name}
        for opp in ("greedy", "heuristic"):
            games = args.games if final else args.curve_games
            done = run / f"eval_{ck.stem}_{opp}_{games}_{args.eval_seed}.json"  # a rerun adds only new files
            if done.exists():
                row[opp] = json.loads(done.read_text())
            else:
                row[opp] = [round(x, 4) for x in win_rate(ck, opp, games, args.eval_seed)] + [games]
                done.write_text(json.dumps(row[opp]))
        print(row, flush=True)
        rows.append(row)
    (run / "eval.json").write_text(json.dumps(rows, indent=1))
    if args.png:
        plot(rows, args.png)


def plot(rows: list[dict[str, Any]], png: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    for opp, colour in (("greedy", "C0"), ("heuristic", "C1")):
        x = [r["cpu_min"] for r in rows]
        y = np.array([r[opp][0] for r in rows]) * 100
        err = np.array([[r[opp][0] - r[opp][1], r[opp][2] - r[opp][0]] for r in rows]).T * 100
        ax.errorbar(x, y, yerr=err, marker="o", color=colour, label=f"against {opp}", capsize=3)
    ax.axhline(50, color="grey", lw=0.8, ls=":")
    ax.axhline(62, color="C0", lw=0.8, ls="--", label="62 % (greedy target)")
    ax.axhline(52, color="C1", lw=0.8, ls="--", label="52 % (heuristic target)")
    ax.set_xlabel("training time (CPU minutes)")
    ax.set_ylabel("win rate, % (ties half)")
    ax.set_title("MaskablePPO + MovePolicy (docs/examples/train_ppo.py)")
    ax.legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def league(args: argparse.Namespace) -> None:
    """A round robin of the run's snapshots (at most ``--league-size``, evenly spread),
    its final policy and the built-in agents: Bradley-Terry ratings, greedy at 1500."""
    run = Path(args.league)
    snaps = sorted((run / "snapshots").glob("snap_*.npz"))
    if len(snaps) > args.league_size:
        snaps = [snaps[int(i)] for i in np.linspace(0, len(snaps) - 1, args.league_size)]
    agents = [f"net:weights={p}" for p in [*snaps, run / "final.npz"]] + ["greedy", "heuristic", "static"]
    result = qc.tournament(agents, games=args.games, seed=args.eval_seed)
    rows = [
        {"agent": r.agent, "rating": round(r.rating), "low": round(r.low), "high": round(r.high), "games": r.games,
         "win_rate": r.win_rate}
        for r in result.standings()
    ]  # fmt: skip
    (run / "league.json").write_text(json.dumps(rows, indent=1))
    print("| agent | rating | 95 % interval | games | score |\n|---|---|---|---|---|")
    for r in rows:
        name = Path(r["agent"].split("=", 1)[1]).stem if "=" in r["agent"] else r["agent"]
        print(f"| {name} | {r['rating']} | {r['low']} to {r['high']} | {r['games']} | {r['win_rate']:.3f} |")


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--minutes", type=float, default=30.0, help="training time, CPU minutes")
    p.add_argument("--out", default="runs/ppo")
    p.add_argument("--pool", default="greedy,heuristic,static", help="the league's built-in opponents")
    p.add_argument("--pool-weights", help="their draw weights, comma-separated (default equal)")
    p.add_argument("--snapshot-minutes", type=float, default=5.0, help="CPU minutes between snapshots (0: none)")
    p.add_argument("--snapshot-weight", type=float, help="a snapshot's draw weight (default: the pool's mean)")
    p.add_argument("--init", help="a weights file to start the scorer from")
    p.add_argument("--envs", type=int, default=64, help="games stepped together")
    p.add_argument("--window", type=int, default=40)
    p.add_argument("--n-steps", type=int, default=64, help="steps per env per update")
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--hidden1", type=int, default=64)
    p.add_argument("--hidden2", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--gamma", type=float, default=0.995)
    p.add_argument("--lam", type=float, default=0.95)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.003)
    p.add_argument("--checkpoint-minutes", type=float, default=3.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--evaluate", help="a run folder: evaluate its checkpoints instead of training")
    p.add_argument("--league", help="a run folder: rate its snapshots and the built-in agents")
    p.add_argument("--league-size", type=int, default=6, help="snapshots in the league's round robin")
    p.add_argument("--games", type=int, default=1000, help="games a pairing for the final policy (and the league)")
    p.add_argument("--curve-games", type=int, default=200, help="games per point of the curve")
    p.add_argument("--eval-seed", type=int, default=900_000_000)
    p.add_argument("--png")
    args = p.parse_args()
    with stop_signals():
        try:
            if args.evaluate:
                evaluate(args)
            elif args.league:
                league(args)
            else:
                train(args)
        except KeyboardInterrupt:
            print(f"stopped by {stopped_by()}: kept what was done", flush=True)
            raise SystemExit(exit_status()) from None


if __name__ == "__main__":
    main()

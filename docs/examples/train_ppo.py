"""The baseline: PPO (CleanRL-style, in torch) on the move-list mode against greedy.

The policy scores every listed move from its feature row (``move_features``; a small
network shared by the moves, plus a linear term that starts as a soft preference for
points) and samples from the masked softmax; the value is read from the moves' hidden
rows (max-pooled). It learns from ``VectorEnv(actions="moves", reward="margin")``
batches against ``--opponents`` (greedy by default), one batch for each seat, the
opponents played inside the kernel. Every ``--checkpoint-minutes`` of training (the
process's CPU time, so that other work on a shared machine does not count) it writes
the weights as numpy arrays (``qwirkle_core.env.baselines.write_policy``), which
``qwirkle_core.env.baselines.PolicyAgent`` plays with numpy alone. ``--evaluate``
plays the checkpoints against greedy and heuristic afterwards (seat-swapped games on
the same deals, seeds distinct from training) and ``--png`` draws the learning curve.

    pip install 'qwirkle-core[rl-train]'
    python docs/examples/train_ppo.py --minutes 30 --out runs/ppo
    python docs/examples/train_ppo.py --evaluate runs/ppo --games 1000 --png docs/ppo-curve.png

Needs torch (the [rl-train] extra); matplotlib for --png.

Ctrl-C, SIGTERM (a scheduler, ``timeout``, a preemption) or SIGHUP stop the training
after the current step and keep it: the weights reached are written as
``final.npz`` beside the checkpoints and the log, and the script exits with 130, 143
or 129 (``qwirkle_core.stopping``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from qwirkle_core.env import VectorEnv
from qwirkle_core.env.baselines import HIDDEN, SCALE, initial_policy, load_policy, policy_logits, write_policy
from qwirkle_core.env.movelist import FEATURES as F
from qwirkle_core.stopping import exit_status, stop_signals, stopped_by


def make_net(seed: int):  # -> torch module
    import torch
    from torch import nn

    scale = torch.from_numpy(SCALE)

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            p = initial_policy(seed)
            self.l1, self.l2 = nn.Linear(F, HIDDEN), nn.Linear(HIDDEN, HIDDEN)
            self.l3, self.skip = nn.Linear(HIDDEN, 1), nn.Linear(F, 1, bias=False)
            with torch.no_grad():
                self.l1.weight.copy_(torch.from_numpy(p["w1"].T))
                self.l1.bias.zero_()
                self.l2.weight.copy_(torch.from_numpy(p["w2"].T))
                self.l2.bias.zero_()
                self.l3.weight.copy_(torch.from_numpy(p["w3"][None, :]))
                self.l3.bias.zero_()
                self.skip.weight.copy_(torch.from_numpy(p["skip"][None, :]))
            self.v1, self.v2 = nn.Linear(HIDDEN, HIDDEN), nn.Linear(HIDDEN, 1)

        def forward(self, x, mask):  # x float[B, K, F] (raw move_features), mask bool[B, K]
            x = x * scale
            h1 = torch.relu(self.l1(x))
            h2 = torch.relu(self.l2(h1))
            logits = (self.l3(h2) + self.skip(x)).squeeze(-1)
            logits = torch.where(mask, logits, torch.full_like(logits, -1e9))
            pooled = torch.where(mask[..., None], h2, torch.full_like(h2, -1e9)).max(dim=1).values
            value = self.v2(torch.relu(self.v1(pooled))).squeeze(-1)
            return logits, value

        def numpy_params(self) -> dict:
            t = lambda a: a.detach().cpu().numpy().astype(np.float32)  # noqa: E731
            return {
                "w1": t(self.l1.weight).T.copy(),
                "b1": t(self.l1.bias),
                "w2": t(self.l2.weight).T.copy(),
                "b2": t(self.l2.bias),
                "w3": t(self.l3.weight)[0],
                "b3": t(self.l3.bias),
                "skip": t(self.skip.weight)[0],
            }

    return Net()


def train(args: argparse.Namespace) -> None:
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    net = make_net(args.seed)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr, eps=1e-5)
    opponents = args.opponents.split(",")
    half = args.envs // 2
    batches = [
        VectorEnv(half, opponents=opponents, seat=seat, window=args.window, actions="moves", reward="margin")
        for seat in (0, 1)
    ]
    parts = [b.reset(seed=args.seed + seat)[0] for seat, b in enumerate(batches)]

    def gather(parts):
        return (
            np.concatenate([p["move_features"] for p in parts]),
            np.concatenate([p["action_mask"] for p in parts]).astype(bool),
        )

    x_now, m_now = gather(parts)
    start_cpu, start_wall = time.process_time(), time.time()
    log = open(out / "log.jsonl", "a")
    try:
        _train_loop(args, net, opt, batches, gather, x_now, m_now, start_cpu, start_wall, log)
    finally:  # also on Ctrl-C or SIGTERM: the weights reached so far are kept
        log.close()
        write_policy(out / "final.npz", net.numpy_params())


def _train_loop(args, net, opt, batches, gather, x_now, m_now, start_cpu, start_wall, log) -> None:
    import torch

    out = Path(args.out)
    half = args.envs // 2
    n, t_len, K = 2 * half, args.steps, x_now.shape[1]
    next_ckpt, steps, updates = 0.0, 0, 0
    finished: list[float] = []
    while True:
        minutes = (time.process_time() - start_cpu) / 60
        if minutes >= next_ckpt:
            write_policy(out / f"ckpt_{next_ckpt:05.1f}.npz", net.numpy_params())
            next_ckpt += args.checkpoint_minutes
        if minutes >= args.minutes:
            break
        xs = np.zeros((t_len, n, K, F), np.float32)
        ms = np.zeros((t_len, n, K), bool)
        acts = np.zeros((t_len, n), np.int64)
        logps, vals = np.zeros((t_len, n), np.float32), np.zeros((t_len, n), np.float32)
        rews, dones = np.zeros((t_len, n), np.float32), np.zeros((t_len, n), np.float32)
        live = np.ones((t_len, n), np.float32)  # 0: the step that resets an env (NEXT_STEP)
        pending = np.zeros(n, bool)
        for t in range(t_len):
            xs[t], ms[t] = x_now, m_now
            live[t] = ~pending
            ms[t][pending, 0] = True  # any index: the step only deals the next game
            with torch.no_grad():
                logits, value = net(torch.from_numpy(xs[t]), torch.from_numpy(ms[t]))
                dist = torch.distributions.Categorical(logits=logits)
                a = dist.sample()
            acts[t], logps[t], vals[t] = a.numpy(), dist.log_prob(a).numpy(), value.numpy()
            outs = [b.step(acts[t, j * half : (j + 1) * half]) for j, b in enumerate(batches)]
            x_now, m_now = gather([o[0] for o in outs])
            rews[t] = np.concatenate([o[1] for o in outs]) / args.reward_scale
            done = np.concatenate([np.logical_or(o[2], o[3]) for o in outs])
            dones[t] = done
            for o in outs:
                info = o[4]
                if "winner" in info:
                    for w, present in zip(info["winner"], info.get("_winner", info.get("_final_scores"))):
                        if present:
                            finished.append(float(w == (0 if o is outs[0] else 1)))
            pending = done
        steps += t_len * n
        with torch.no_grad():
            m_next = m_now.copy()
            m_next[pending, 0] = True
            next_v = net(torch.from_numpy(x_now), torch.from_numpy(m_next))[1].numpy()
        adv = np.zeros_like(rews)
        last = np.zeros(n, np.float32)
        for t in reversed(range(t_len)):
            nv = next_v if t == t_len - 1 else vals[t + 1]
            nonterm = 1.0 - dones[t]  # (after a done step comes the reset step: no bootstrap)
            delta = rews[t] + args.gamma * nv * nonterm - vals[t]
            last = delta + args.gamma * args.lam * nonterm * last
            adv[t] = last
        ret = adv + vals
        keep = live.reshape(-1) > 0  # the reset steps are no decisions: left out of the update
        b = int(keep.sum())
        bx, bm = torch.from_numpy(xs.reshape(-1, K, F)[keep]), torch.from_numpy(ms.reshape(-1, K)[keep])
        ba, blp = torch.from_numpy(acts.reshape(-1)[keep]), torch.from_numpy(logps.reshape(-1)[keep])
        badv, bret = torch.from_numpy(adv.reshape(-1)[keep]), torch.from_numpy(ret.reshape(-1)[keep])
        for _ in range(args.epochs):
            perm = torch.randperm(b)
            for lo in range(0, b, args.minibatch):
                idx = perm[lo : lo + args.minibatch]
                logits, value = net(bx[idx], bm[idx])
                dist = torch.distributions.Categorical(logits=logits)
                lp = dist.log_prob(ba[idx])
                ratio = (lp - blp[idx]).exp()
                a_n = (badv[idx] - badv[idx].mean()) / (badv[idx].std() + 1e-8)
                pg = torch.max(-a_n * ratio, -a_n * ratio.clamp(1 - args.clip, 1 + args.clip)).mean()
                vl = 0.5 * ((value - bret[idx]) ** 2).mean()
                ent = dist.entropy().mean()
                loss = pg + args.vf_coef * vl - args.ent_coef * ent
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
                opt.step()
        updates += 1
        recent = finished[-200:]
        row = {
            "cpu_min": round((time.process_time() - start_cpu) / 60, 2),
            "wall_min": round((time.time() - start_wall) / 60, 2),
            "steps": steps,
            "episodes": len(finished),
            "win_rate_sampled_last200": round(float(np.mean(recent)), 3) if recent else None,
            "entropy": round(float(ent), 3),
        }
        log.write(json.dumps(row) + "\n")
        log.flush()
        if updates % 5 == 0:
            print(row, flush=True)


def evaluate_policy(path: Path, opponent: str, games: int, seed: int) -> tuple[float, float]:
    """Win rate (ties half) of the policy at ``path`` (argmax) against ``opponent``:
    games/2 deals, each played from both seats (two VectorEnvs reset with the same seed
    deal the same games), the full window; and its 95 % half-width."""
    params = load_policy(str(path))
    results = []
    for seat in (0, 1):
        envs = VectorEnv(games // 2, opponents=[opponent], seat=seat, actions="moves")
        obs, _ = envs.reset(seed=seed)
        outcome = np.full(games // 2, np.nan)
        while np.isnan(outcome).any():
            x, m = obs["move_features"], obs["action_mask"].astype(bool)
            logits = np.where(m, policy_logits(params, x), -np.inf)
            actions = np.where(m.any(axis=1), logits.argmax(axis=1), 0)
            obs, _, term, trunc, info = envs.step(actions)
            if "winner" in info:
                ended = info.get("_winner", info.get("_final_scores")) & np.isnan(outcome)
                w = info["winner"]
                outcome[ended] = np.where(w[ended] == seat, 1.0, np.where(w[ended] < 0, 0.5, 0.0))
        results.extend(outcome)
        envs.close()
    r = np.array(results)
    return float(r.mean()), float(1.96 * r.std(ddof=1) / np.sqrt(len(r)))


def evaluate(args: argparse.Namespace) -> None:
    run = Path(args.evaluate)
    ckpts = sorted(run.glob("ckpt_*.npz"))
    rows = []
    for i, ck in enumerate(ckpts):
        minutes = float(ck.stem.split("_")[1])
        last = i == len(ckpts) - 1
        games = args.games if last else args.curve_games
        row = {"cpu_min": minutes, "file": ck.name}
        for opp in ("greedy", "heuristic"):
            g = games if opp == "greedy" else args.curve_games
            done = run / f"eval_{ck.stem}_{opp}_{g}_{args.eval_seed}.json"  # kept: a rerun adds only new checkpoints
            if done.exists():
                rate, half = json.loads(done.read_text())
            else:
                rate, half = evaluate_policy(ck, opp, g, args.eval_seed)
                done.write_text(json.dumps([rate, half]))
            row[opp] = [round(rate, 4), round(half, 4), g]
        print(row, flush=True)
        rows.append(row)
    (run / "eval.json").write_text(json.dumps(rows, indent=1))
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.6))
        for opp, colour in (("greedy", "C0"), ("heuristic", "C1")):
            x = [r["cpu_min"] for r in rows]
            y = np.array([r[opp][0] for r in rows]) * 100
            h = np.array([r[opp][1] for r in rows]) * 100
            ax.errorbar(x, y, yerr=h, marker="o", color=colour, label=f"against {opp}", capsize=3)
        ax.axhline(50, color="grey", lw=0.8, ls=":")
        ax.axhline(55, color="C3", lw=0.8, ls="--", label="55 %")
        ax.set_xlabel("training time (CPU minutes, one thread)")
        ax.set_ylabel("win rate, % (ties half)")
        ax.set_title("PPO on the move list (docs/examples/train_ppo.py)")
        ax.legend(loc="lower right", fontsize=8)
        fig.tight_layout()
        fig.savefig(args.png, dpi=110)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--minutes", type=float, default=30.0, help="training time, CPU minutes")
    p.add_argument("--out", default="runs/ppo")
    p.add_argument("--opponents", default="greedy")
    p.add_argument("--envs", type=int, default=64, help="games stepped together (half in each seat)")
    p.add_argument("--steps", type=int, default=32, help="steps per env per update")
    p.add_argument("--window", type=int, default=40)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--minibatch", type=int, default=256)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--gamma", type=float, default=0.995)
    p.add_argument("--lam", type=float, default=0.95)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.003)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--reward-scale", type=float, default=20.0)
    p.add_argument("--checkpoint-minutes", type=float, default=3.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--evaluate", help="a run folder: evaluate its checkpoints instead of training")
    p.add_argument("--games", type=int, default=1000, help="games against greedy for the last checkpoint")
    p.add_argument("--curve-games", type=int, default=200, help="games per point of the curve")
    p.add_argument("--eval-seed", type=int, default=900_000_000)
    p.add_argument("--png")
    args = p.parse_args()
    with stop_signals():
        try:
            if args.evaluate:
                evaluate(args)
            else:
                train(args)
        except KeyboardInterrupt:
            print(f"stopped by {stopped_by()}: kept what was done", flush=True)
            raise SystemExit(exit_status()) from None


if __name__ == "__main__":
    main()

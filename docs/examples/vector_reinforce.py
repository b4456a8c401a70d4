"""Train a policy against the built-in greedy agent with VectorEnv and numpy alone.

REINFORCE with a linear softmax policy over the legal actions: each legal action is
described by a few features read from the observation (is it a place action, how many
tiles and how many tiles put down this turn its cell touches, DONE after k tiles, the
tiles an exchange gives back, the pass), and the policy learns their weights from the
points it scores. N games run side by side in one VectorEnv; each finished game updates
the weights with its score against the running mean (the baseline).

    python docs/examples/vector_reinforce.py --minutes 3 --png docs/vector-reinforce.png

prints, per round of finished games, the learner's mean final score and its greedy
opponent's, and with --png draws the learning curve (needs matplotlib: pip install
'qwirkle-core[plot]'). docs/env.md shows the curve it drew.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from qwirkle_core.env import VectorEnv

FEATURES = 6
BITS = np.array([bin(b).count("1") for b in range(64)])


def features(obs: dict, actions: np.ndarray, window: int) -> np.ndarray:
    """float64[N, K, FEATURES] of the actions ``actions`` (int64[N, K], -1 padding)."""
    w2 = window * window
    done = 6 * w2
    board = obs["board"]
    n = board.shape[0]
    tiles = np.pad(board[:, :12].any(axis=1), ((0, 0), (1, 1), (1, 1))).astype(np.int64)
    fresh = np.pad(board[:, 12], ((0, 0), (1, 1), (1, 1))).astype(np.int64)

    def around(planes: np.ndarray) -> np.ndarray:
        return (planes[:, :-2, 1:-1] + planes[:, 2:, 1:-1] + planes[:, 1:-1, :-2] + planes[:, 1:-1, 2:]).reshape(n, w2)

    rows = np.arange(n)[:, None]
    cell = np.where((actions >= 0) & (actions < done), actions % w2, 0)
    place = (actions >= 0) & (actions < done)
    bits = np.where((actions > done) & (actions < done + 64), actions - done, 0)
    f = np.zeros(actions.shape + (FEATURES,))
    f[..., 0] = place
    f[..., 1] = place * around(tiles)[rows, cell]
    f[..., 2] = place * around(fresh)[rows, cell]
    f[..., 3] = (actions == done) * board[:, 12].sum(axis=(1, 2))[:, None]
    f[..., 4] = BITS[bits]
    f[..., 5] = actions == done + 64
    return f


def train(minutes: float, envs_n: int = 256, window: int = 32, seed: int = 0, lr: float = 0.002):
    """Play for ``minutes``; returns the rounds ``(games so far, the learner's mean score,
    greedy's, weights)``, one per ``envs_n`` finished games."""
    envs = VectorEnv(envs_n, opponents=["greedy"], window=window, copy=False)
    obs, _ = envs.reset(seed=seed)
    rng = np.random.default_rng(seed)
    theta = np.zeros(FEATURES)
    grads = np.zeros((envs_n, FEATURES))
    baseline, finished, rounds = None, [], []
    start, games = time.perf_counter(), 0
    while time.perf_counter() - start < 60 * minutes:
        actions, counts = envs.legal_actions()
        phi = features(obs, actions, window)
        live = counts > 0  # (an env whose game just ended has none: the step deals anew)
        logits = np.where(actions >= 0, phi @ theta, -np.inf)
        logits[~live, 0] = 0
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        pick = (p.cumsum(axis=1) < rng.random((envs_n, 1))).sum(axis=1).clip(0, np.maximum(counts - 1, 0))
        rows = np.arange(envs_n)
        grads += live[:, None] * (phi[rows, pick] - np.einsum("nk,nkf->nf", p, phi))
        obs, _, terminated, truncated, _ = envs.step(np.maximum(actions[rows, pick], 0))
        for i in np.flatnonzero(terminated | truncated):
            scores = envs.state.gmeta[i, 16:18]  # the final scores (seat 0: the learner)
            score = int(scores[0])
            baseline = score if baseline is None else 0.99 * baseline + 0.01 * score
            theta += lr * (score - baseline) * grads[i] / 100
            grads[i] = 0
            finished.append((score, int(scores[1])))
            games += 1
        if len(finished) >= envs_n:
            mine, greedy = np.array(finished).T
            rounds.append((games, mine.mean(), greedy.mean(), theta.copy()))
            print(
                f"{games:7d} games  mean score {mine.mean():6.1f} (greedy {greedy.mean():6.1f})  weights {np.round(theta, 2)}"
            )
            finished = []
    return rounds


def plot(rounds, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    games, score, greedy = (np.array([r[k] for r in rounds]) for k in range(3))
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.plot(games, score, label="the learner")
    ax.plot(games, greedy, label="its greedy opponent")
    ax.set_xlabel("games played")
    ax.set_ylabel("mean final score (per round)")
    ax.legend()
    ax.set_title("REINFORCE, linear policy over the legal actions, VectorEnv(256, window=32)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--envs", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--png", help="draw the learning curve into this PNG file")
    args = parser.parse_args()
    result = train(args.minutes, args.envs, seed=args.seed)
    if args.png and result:
        plot(result, args.png)

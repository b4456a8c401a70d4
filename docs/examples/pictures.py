"""Make the pictures of docs/pictures.md (and of the API reference):

    python docs/examples/pictures.py docs

writes docs/pictures-game.svg, docs/pictures-observation.svg and docs/pictures-end.svg.
tests/test_pictures.py runs it and checks the committed files are what it writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

import qwirkle_core as qc


def best(g: qc.Game) -> qc.Move:
    """The highest-scoring placement (the first of equals), as greedy plays."""
    return max(g.legal_moves(), key=lambda m: m.score)


def pictures() -> dict[str, str]:
    g = qc.Game(players=2, seed=2026)
    for _ in range(12):
        g.play(best(g))
    tile = g.hand()[0]
    game = qc.svg(g, lastmove=g.history[-1].move, legal_cells=tile, hands="all")
    observation = qc.svg(g.observation(1), hands="all")
    end = qc.Game(players=3, seed=7)
    while not end.is_over:
        moves = end.legal_moves()
        if moves:
            end.play(max(moves, key=lambda m: m.score))
        elif end.bag_size:
            end.exchange(end.hand())
        else:
            end.pass_turn()
    final = qc.svg(end, lastmove=end.history[-1].move, size=560)
    return {"pictures-game.svg": game, "pictures-observation.svg": observation, "pictures-end.svg": final}


def main(folder: str) -> None:
    for name, text in pictures().items():
        (Path(folder) / name).write_text(text + "\n", encoding="utf-8")
        print(f"wrote {Path(folder) / name}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python docs/examples/pictures.py FOLDER")
    main(sys.argv[1])

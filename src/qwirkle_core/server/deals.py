"""How a game's deal is seeded, and what the views say about it (docs/server.md, "Fair deals").

- A game with one human seat and a seed chosen by its creator is dealt from that seed,
  and every view shows it (``{"kind": "chosen", "seed": 7}``): nobody else's hand is at
  stake, and anyone watching can see that the deal was chosen.
- Every other game is dealt from ``deal_seed(secret, creator_seed)``: a 32-byte server
  secret drawn for the game, mixed with the creator's seed if one was given. The views
  show the SHA-256 of the secret (the commitment, fixed at creation) and the creator's
  seed; once the game is over they show the secret and the seed too, so anyone can
  check ``sha256(secret) == commitment``, recompute the seed, and deal the same game
  with ``qc.Game(players=n, seed=seed)``. The creator cannot choose the deal, and the
  server cannot change it after the commitment.
"""

import hashlib
import json
import secrets
from typing import Any

__all__ = ["DOMAIN", "deal_seed", "new_deal", "public_deal"]

DOMAIN = b"qwirkle-core/deal/1\x00"  # what the secret and the creator's seed are hashed after


def deal_seed(secret: bytes, creator_seed: int | None) -> int:
    """The deal's seed (0 .. 2**64-1): the first 8 bytes, big-endian, of
    ``sha256(DOMAIN + secret + creator_seed as 8 big-endian bytes)`` (no seed bytes
    when ``creator_seed`` is None)."""
    tail = b"" if creator_seed is None else creator_seed.to_bytes(8, "big")
    return int.from_bytes(hashlib.sha256(DOMAIN + secret + tail).digest()[:8], "big")


def new_deal(humans: int, creator_seed: int | None) -> tuple[int, str]:
    """``(seed, deal JSON)`` of a new game with ``humans`` human seats; the JSON is
    what the store keeps (the secret included: shown once the game is over)."""
    if humans == 1 and creator_seed is not None:
        return creator_seed, json.dumps({"kind": "chosen", "seed": creator_seed})
    secret = secrets.token_bytes(32)
    deal = {
        "kind": "committed",
        "commitment": hashlib.sha256(secret).hexdigest(),
        "creator_seed": creator_seed,
        "secret": secret.hex(),
    }
    return deal_seed(secret, creator_seed), json.dumps(deal)


def public_deal(deal: dict[str, Any] | None, seed: int | None, over: bool) -> dict[str, Any]:
    """What a view says of the deal (the same for every seat and spectators):
    ``{"kind": "chosen", "seed"}``, ``{"kind": "committed", "commitment", "creator_seed",
    "secret", "seed"}`` (``secret`` and ``seed`` null until the game is over), or
    ``{"kind": "unrecorded"}`` for a game stored before deals were recorded."""
    if deal is None:
        return {"kind": "unrecorded"}
    if deal["kind"] == "chosen":
        return {"kind": "chosen", "seed": deal["seed"]}
    return {
        "kind": "committed",
        "commitment": deal["commitment"],
        "creator_seed": deal["creator_seed"],
        "secret": deal["secret"] if over else None,
        "seed": seed if over else None,
    }

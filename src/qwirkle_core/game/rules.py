"""The rule options of a game (:class:`Rules`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._kernels import layout as _lo
from .._kernels import state as _st

__all__ = ["MAX_PLAYERS", "MIN_PLAYERS", "OPENING_RULES", "VARIANTS", "Rules", "resolve_rules"]

OPENING_RULES = {"largest_group": _st.OPENING_LARGEST_GROUP, "any_line": _st.OPENING_ANY_LINE}
VARIANTS = {"classic": _lo.CLASSIC, "cubes": _lo.CUBES}
MIN_PLAYERS = 2
MAX_PLAYERS = int(_st.MAX_PLAYERS)


@dataclass(frozen=True)
class Rules:
    """Rule options (frozen). The defaults are the official rules of the tile game.

    Attributes
    ----------
    players
        number of seats, 2 to 6 (the rule books say 2-4; one allows up to 6).
    opening
        ``"largest_group"`` (official): the seat with the largest group of hand
        tiles sharing a colour or a shape starts (ties: the lowest seat; in Qwirkle
        Cubes seat 0 starts) and opens with exactly that many tiles;
        ``"any_line"``: seat 0 starts and opens with any legal line.
    variant
        ``"classic"``, the tile game, or ``"cubes"``, Qwirkle Cubes: 90 cubes of 6
        colours whose faces are rolled, open hands, re-rolls instead of exchanges
        (a swap only when none of a player's colours fits anywhere; docs/rules.md).

    Notes
    -----
    Raises TypeError or ValueError naming a bad option.
    """

    players: int = 2
    opening: str = "largest_group"
    variant: str = "classic"

    def __post_init__(self) -> None:
        if isinstance(self.players, bool) or not isinstance(self.players, int):
            raise TypeError(f"players must be an int, not {self.players!r}")
        if not MIN_PLAYERS <= self.players <= MAX_PLAYERS:
            raise ValueError(f"players must be {MIN_PLAYERS} to {MAX_PLAYERS}, not {self.players}")
        if not isinstance(self.opening, str) or self.opening not in OPENING_RULES:
            raise ValueError(f"unknown opening rule {self.opening!r}; expected one of {', '.join(OPENING_RULES)}")
        if not isinstance(self.variant, str) or self.variant not in VARIANTS:
            raise ValueError(f"unknown variant {self.variant!r}; expected one of {', '.join(VARIANTS)}")

    @property
    def opening_code(self) -> int:
        """The kernels' code of the opening rule."""
        return OPENING_RULES[self.opening]

    @property
    def variant_code(self) -> int:
        """The kernels' code of the variant (``gmeta[G_VARIANT]``)."""
        return VARIANTS[self.variant]

    @property
    def cubes(self) -> bool:
        """Whether this is Qwirkle Cubes."""
        return self.variant == "cubes"

    def to_dict(self) -> dict[str, Any]:
        """The options as a JSON-ready dict (``Rules(**d)`` reads it back). The variant
        is written only for Qwirkle Cubes, so the tile game's documents are as they
        were before variants existed (and a missing variant reads as the tile game)."""
        d: dict[str, Any] = {"players": self.players, "opening": self.opening}
        if self.variant != "classic":
            d["variant"] = self.variant
        return d


def resolve_rules(players: int | None, rules: Rules | None) -> Rules:
    """The rules for a player count and/or a :class:`Rules` (they must agree).

    Parameters
    ----------
    players
        2 .. 6, or None.
    rules
        a :class:`Rules`, or None (the official rules for ``players``).

    Returns
    -------
    Rules

    Raises
    ------
    TypeError
        ``rules`` is not a :class:`Rules`.
    ValueError
        the two disagree, or ``players`` is out of range.
    """
    if rules is None:
        return Rules(players=2 if players is None else players)
    if not isinstance(rules, Rules):
        raise TypeError(f"rules must be a qwirkle_core.Rules, not {type(rules).__name__}")
    if players is not None and players != rules.players:
        raise ValueError(f"players={players!r} disagrees with rules.players={rules.players}")
    return rules

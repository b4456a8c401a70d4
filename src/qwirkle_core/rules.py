"""The rule options, the error type, and the conversions between names and kernel codes."""

from dataclasses import dataclass

from ._kernels import state as _st

OPENING_RULES = {"largest_group": _st.OPENING_LARGEST_GROUP, "any_line": _st.OPENING_ANY_LINE}
MIN_PLAYERS = 2
MAX_PLAYERS = _st.MAX_PLAYERS


class IllegalMoveError(ValueError):
    """An action the rules do not allow now. The game is left exactly as it was."""


@dataclass(frozen=True)
class Rules:
    """Rule options (frozen). The defaults are the official rules.

    players:  number of seats, 2 to 6 (the rule books say 2-4; one allows up to 6).
    opening:  ``"largest_group"`` (official): the seat with the largest group of hand
              tiles sharing a colour or a shape starts (ties: the lowest seat) and opens
              with exactly that many tiles; ``"any_line"``: seat 0 starts and opens with
              any legal line.
    """

    players: int = 2
    opening: str = "largest_group"

    def __post_init__(self):
        if isinstance(self.players, bool) or not isinstance(self.players, int):
            raise TypeError(f"players must be an int, not {self.players!r}")
        if not MIN_PLAYERS <= self.players <= MAX_PLAYERS:
            raise ValueError(f"players must be {MIN_PLAYERS} to {MAX_PLAYERS}, not {self.players}")
        if self.opening not in OPENING_RULES:
            raise ValueError(f"unknown opening rule {self.opening!r}; expected one of {', '.join(OPENING_RULES)}")

    @property
    def opening_code(self):
        return OPENING_RULES[self.opening]

    def to_dict(self):
        return {"players": self.players, "opening": self.opening}


def resolve_rules(players, rules):
    """The Rules for a ``players`` count and/or a ``rules`` object (they must agree)."""
    if rules is None:
        return Rules(players=2 if players is None else players)
    if not isinstance(rules, Rules):
        raise TypeError(f"rules must be a qwirkle_core.Rules, not {type(rules).__name__}")
    if players is not None and players != rules.players:
        raise ValueError(f"players={players} disagrees with rules.players={rules.players}")
    return rules

"""Time controls: :class:`Clock`, a game's time control and its seats' clocks.

Two kinds (docs/server.md, "Time controls"):

- ``move_s``: every turn of a human seat has ``move_s`` seconds.
- ``base_s`` + ``increment_s``: each human seat has a game clock of ``base_s`` seconds
  that runs while it is to move; ``increment_s`` is added after each of its turns.

Only human seats (people and remote bots) are on the clock; the server's agents move
at once. A turn starts when the change before it is stored. When the seat to move is
out of time, its turn is played by the game's ``fallback`` agent (``greedy`` unless
chosen) and recorded as a timeout; a game clock then stands at 0 (plus the increment
after that turn), so a seat out of time with no increment has each of its later turns
played at once.

The clock is stored with the game (JSON, with the deadline of the seat to move in a
column of its own), and changes only with the actions, in the same compare-and-swap:
every server process sees the same clocks, and a restarted server enforces the
deadlines that passed while it was down.
"""

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Clock"]


@dataclass
class Clock:
    """A game's time control and clocks. ``remaining``: seconds left per seat at
    ``started`` (game clock; None for agents and with ``move_s``); ``started``: when
    the current turn began (seconds since the epoch); ``timeouts``: the indexes of the
    actions the fallback agent played for a seat out of time."""

    move_s: float | None
    base_s: float | None
    increment_s: float
    fallback: str
    remaining: list[float | None] | None
    started: float
    timeouts: list[int] = field(default_factory=list)

    @classmethod
    def new(
        cls,
        agents: list[str],
        human: str,
        now: float,
        move_s: float | None = None,
        base_s: float | None = None,
        increment_s: float = 0.0,
        fallback: str = "greedy",
    ) -> "Clock":
        """A time control for the seats ``agents`` (``human`` marks the seats on the clock)."""
        if (move_s is None) == (base_s is None):
            raise ValueError("a clock has either move_s (seconds per move) or base_s (+ increment_s), not both")
        if move_s is not None and increment_s:
            raise ValueError("increment_s goes with base_s (a game clock), not with move_s")
        remaining: list[float | None] | None = None
        if base_s is not None:
            remaining = [float(base_s) if a == human else None for a in agents]
        return cls(move_s, base_s, float(increment_s), fallback, remaining, now)

    @classmethod
    def from_json(cls, text: str | None) -> "Clock | None":
        if text is None:
            return None
        d = json.loads(text)
        return cls(
            d["move_s"], d["base_s"], d["increment_s"], d["fallback"], d["remaining"], d["started"], d["timeouts"]
        )

    def to_json(self) -> str:
        return json.dumps(self.__dict__)

    def copy(self) -> "Clock":
        return Clock.from_json(self.to_json())  # type: ignore[return-value]

    def allowance(self, seat: int) -> float:
        """Seconds the seat has for its turn, from ``started``."""
        if self.move_s is not None:
            return self.move_s
        assert self.remaining is not None
        left = self.remaining[seat]
        return 0.0 if left is None else left

    def deadline(self, seat: int | None) -> float | None:
        """When ``seat`` (the human seat to move; None: no human is to move) runs out."""
        return None if seat is None else self.started + self.allowance(seat)

    def charge(self, seat: int, now: float) -> None:
        """``seat`` ended a turn at ``now`` (a move, or a timeout): its game clock loses
        the time since ``started`` (not below 0) and gains the increment; the next
        turn is timed from ``now``."""
        if self.remaining is not None:
            left = self.remaining[seat] or 0.0
            self.remaining[seat] = round(max(0.0, left - max(0.0, now - self.started)) + self.increment_s, 3)
        self.started = now

    def public(self, seat_to_move: int | None, now: float) -> dict[str, Any]:
        """What the views show: the settings, ``remaining`` (seconds left per seat, now:
        the seat to move's is counting down; null for agents and with ``move_s``, where
        ``deadline`` says it all), ``deadline`` (when the human seat to move runs out,
        seconds since the epoch; null when none is), ``now`` (the server's time of the
        view, to set a client's clock by) and ``timeouts``."""
        remaining = None if self.remaining is None else list(self.remaining)
        deadline = self.deadline(seat_to_move)
        if remaining is not None and seat_to_move is not None and deadline is not None:
            left = self.allowance(seat_to_move)  # at most: a clock running behind another machine's
            remaining[seat_to_move] = round(min(left, max(0.0, deadline - now)), 3)
        return {
            "move_s": self.move_s,
            "base_s": self.base_s,
            "increment_s": self.increment_s,
            "fallback": self.fallback,
            "remaining": remaining,
            "deadline": None if deadline is None else round(deadline, 3),
            "now": round(now, 3),
            "timeouts": list(self.timeouts),
        }

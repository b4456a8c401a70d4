"""The library's exceptions. Every one is a ``ValueError``, so ``except ValueError``
catches any refusal of bad input; a call that raises one leaves every object as it was.
"""

from __future__ import annotations

__all__ = ["AgentError", "AgentFailure", "FormatError", "IllegalMoveError", "RecordError"]


class IllegalMoveError(ValueError):
    """An action the rules do not allow now (or a cell outside the coordinate range).
    The game is left exactly as it was."""


class FormatError(ValueError):
    """JSON text or data that is not a valid qwirkle-core record, position or
    observation; the message names the field and what is wrong with it."""


class RecordError(FormatError):
    """A record that is malformed, or that does not agree with the rules when replayed.

    ``action`` is the index (from 0) of the first bad action, or None when the problem
    is not in one action.
    """

    def __init__(self, message: str, action: int | None = None) -> None:
        super().__init__(message)
        self.action = action


class AgentError(ValueError):
    """An agent name, parameter or spec row that is not valid; the message names the
    agent, the parameter and the allowed range."""


class AgentFailure(ValueError):
    """A Python agent (``qwirkle_core.batch.players``) failed during a game.

    Attributes
    ----------
    agent
        the agent's label; seat: its seat; seed: the game's seed; turn: the turn
        (``Game.turn``) it was asked to play;
    kind
        ``"raised"`` (its code raised; also its class's constructor),
        ``"malformed"`` (it returned something that is not a ``Move``),
        ``"illegal"`` (a move the rules refuse) or ``"timeout"`` (over the
        per-move time limit);
    detail
        what happened, in words.

    Notes
    -----
    The message reads ``agent 'mybots:Careful' (seat 1) raised ZeroDivisionError:
    division by zero (game seed 7, turn 12)``.
    """

    def __init__(self, agent: str, seat: int, seed: int, turn: int, kind: str, detail: str) -> None:
        self.agent, self.seat, self.seed, self.turn, self.kind, self.detail = agent, seat, seed, turn, kind, detail
        super().__init__(f"agent {agent!r} (seat {seat}) {detail} (game seed {seed}, turn {turn})")

    def __reduce__(self) -> tuple[type[AgentFailure], tuple[str, int, int, int, str, str]]:
        # sent back from worker processes by pickling
        return (type(self), (self.agent, self.seat, self.seed, self.turn, self.kind, self.detail))

"""The library's exceptions. Every one is a ``ValueError``, so ``except ValueError``
catches any refusal of bad input; a call that raises one leaves every object as it was.
"""

from __future__ import annotations

__all__ = ["AgentError", "FormatError", "IllegalMoveError", "RecordError"]


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

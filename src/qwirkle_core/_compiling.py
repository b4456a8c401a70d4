"""The compile notice: a first call that compiles kernels says so, once, with an estimate.

Numba compiles a kernel on its first call in a process unless its machine code is in the
disk cache (docs/cold-start.md). That can take from a few seconds (the move generator) to
a minute (the vector environment's step kernels), so the library says so before it
starts, as one line through :mod:`logging` (logger ``qwirkle_core.compile``, level
WARNING, so that it reaches stderr through Python's last-resort handler when the
application configured no logging)::

    qwirkle-core: compiling the greedy batch kernels, about 9 to 18 s (12 CPU-s); cached afterwards

The estimate is the compile's CPU time on an idle machine (docs/cold-start.md), said
as a range of wall time scaled by how busy the machine is (:func:`busy_factor`: the
load average per core), since a shared machine stretches a compile's wall time by as
many times as it has runnable processes per core.

How it knows: numba fires its ``numba:compile`` event only when a kernel is really
compiled (not when it is loaded from the cache), and a listener registered here (on the
first import of :mod:`qwirkle_core.game`) hears it. A call that compiles several
kernels (a batch: its parts and its batch kernel; a tournament: the kernels of every
pairing) opens a :func:`compiling` scope with one description and estimate for the
whole, and says so once for all of them; outside a scope, each kernel of
:data:`KERNELS` says so on its own first compile. Kernels that compile in under about a
second (not in :data:`KERNELS`) say nothing.

The switch: ``QWIRKLE_QUIET_COMPILE=1`` in the environment (read at each notice, so
``os.environ`` may set it at run time), or the logger's level
(``logging.getLogger("qwirkle_core.compile").setLevel(logging.ERROR)``).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Any

__all__ = [
    "KERNELS",
    "LOGGER",
    "UNKNOWN_SECONDS",
    "busy_factor",
    "compiling",
    "evaluation_notice",
    "message",
    "quiet",
    "turn_notice",
    "vector_notice",
]

LOGGER = logging.getLogger("qwirkle_core.compile")

_VECTOR = ("the vector environment's kernels", 45.0)
_VECTOR_MOVES = ("the vector environment's move-list kernels", 50.0)
_VECTOR_MOVES_ANY = ("the vector environment's move-list kernels with the built-in agents", 80.0)

KERNELS: dict[str, tuple[str, float]] = {
    "movegen.generate": ("the move generator", 2.0),
    "agents.new_agent_scratch": ("the built-in agents", 30.0),
    "agents.take_turn": ("the built-in agents", 30.0),
    "mc.evaluate": ("the Monte Carlo evaluation", 20.0),
    "endgame.solve": ("the endgame solver", 11.0),
    "search.playout": ("the search agent's playouts", 20.0),
    "vector.new_scratch": _VECTOR,
    "vector._advance": _VECTOR,
    "vector.step_self": _VECTOR,
    "vector.step_plain": _VECTOR,
    "vector.step_heuristic": _VECTOR,
    "vector.step_any": _VECTOR,
    "vector.moves_plain": _VECTOR_MOVES,
    "vector.moves_any": _VECTOR_MOVES_ANY,
    "movelist.move_list": ("the move list", 4.0),
}
"""The kernels that announce their own first compile outside a :func:`compiling` scope,
``module.function`` (under ``_kernels``) -> (what is compiled, the estimate in seconds).
Kernels with the same words are one group: the first of them to compile says so, with
the group's estimate, and the others say nothing (nor do they after a scope with the
group's words spoke). The estimates are CPU seconds from an empty cache on the
project's 2-core machine (docs/cold-start.md has the measurements and the command); a
machine shared with other work takes longer in wall time."""

_lock = threading.Lock()
_said: set[str] = set()  # descriptions already announced outside a scope
_scopes: list[compiling] = []  # open compiling() scopes, innermost last (list ops: atomic)
_depth = 0  # compiles in progress (a kernel compiles the kernels it calls inside its own)


UNKNOWN_SECONDS = 30.0
"""The estimate of a compile no table knows (a kernel outside :data:`KERNELS` in a scope
without its own estimate): the order of the known ones."""


def busy_factor() -> float:
    """How much longer than its CPU time a one-thread compile takes here now: the
    1-minute load average (plus this process) per core, at least 1 (1 where the
    platform has no load average)."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return 1.0
    return max(1.0, (load + 1.0) / (os.cpu_count() or 1))


def message(what: str, seconds: float | None, busy: float | None = None) -> str:
    """The notice's text, e.g. ``qwirkle-core: compiling WHAT, about 9 to 18 s (12
    CPU-s); cached afterwards`` (the command line shows the same words).

    ``seconds`` is the compile's CPU time on an idle machine (None: not known, then
    :data:`UNKNOWN_SECONDS`); the wall time said is a range around it scaled by
    ``busy`` (default :func:`busy_factor`): three quarters to one and a half times the
    CPU time on an idle machine, as many times more as the machine has runnable
    processes per core on a busy one."""
    cpu = seconds or UNKNOWN_SECONDS
    factor = busy_factor() if busy is None else max(1.0, busy)
    low, high = max(1, round(0.75 * cpu * factor)), max(2, round(1.5 * cpu * factor))
    note = f"{'' if seconds else 'perhaps '}{round(cpu)} CPU-s" + (", the machine is busy" if factor >= 1.25 else "")
    return f"qwirkle-core: compiling {what}, about {low} to {high} s ({note}); cached afterwards"


def _quiet() -> bool:
    return os.environ.get("QWIRKLE_QUIET_COMPILE", "") not in ("", "0")


def _say(text: str) -> None:
    if not _quiet():
        LOGGER.warning(text)


class compiling:  # noqa: N801 - used as a function: ``with compiling(...):``
    """A call that may compile several kernels: if any compiles inside the block, say
    :func:`message` ``(what, seconds)`` once (before the first compile), and nothing
    for each kernel. Scopes nest: the outermost one speaks. ``what`` may be a
    function returning ``(what, seconds)``, called only when something compiles (a
    hot path then pays nothing for the estimate; entering and leaving a scope costs about
    a microsecond)."""

    __slots__ = ("what", "seconds", "said", "quiet")

    def __init__(
        self, what: str | Callable[[], tuple[str, float | None]], seconds: float | None = None, quiet: bool = False
    ) -> None:
        self.what, self.seconds, self.said, self.quiet = what, seconds, quiet, quiet

    def __enter__(self) -> None:
        _scopes.append(self)

    def __exit__(self, *exc: object) -> None:
        if _scopes and _scopes[-1] is self:
            _scopes.pop()
        else:
            _scopes.remove(self)


def quiet() -> compiling:
    """A scope in which compiles say nothing (the command line shows its own notice):
    ``with quiet():``."""
    return compiling("", quiet=True)


TURN_SECONDS = 30.0
"""The built-in agents' turn kernel (``Game.play_agent``), from an empty cache."""
SEARCH_SECONDS = 25.0
"""The search agent's playouts and endgame solver on top of it."""
EVALUATION_SECONDS = 20.0
"""``evaluate_moves``' kernel in a fresh process (about 5 s once the turn kernel was
compiled in the same process, which shares its parts)."""


def turn_notice(searches: bool) -> tuple[str, float | None]:
    """The scope's words and estimate for ``Game.play_agent``'s first turn (``searches``:
    the search agent, whose playouts and solver compile too)."""
    from ._kernels import _jit
    from ._kernels import agents as _ag

    seconds = 0.0 if _jit.is_cached(_ag.take_turn) else TURN_SECONDS
    if searches:
        from ._kernels import endgame as _eg

        seconds += 0.0 if _jit.is_cached(_eg.solve) else SEARCH_SECONDS
    return ("the built-in agents" + (" and the search agent" if searches else ""), seconds or None)


def evaluation_notice() -> tuple[str, float | None]:
    """The scope's words and estimate for ``evaluate_moves``' first call."""
    return ("the Monte Carlo evaluation", EVALUATION_SECONDS)


def vector_notice(kernel: Any) -> tuple[str, float]:
    """The words and estimate of a ``VectorEnv`` whose step kernel is ``kernel`` (its
    group in :data:`KERNELS`): the scope of its construction, which compiles the
    kernels that both action modes share, says the mode's (the step kernel, compiled at
    the first ``reset``, is then of a group said already)."""
    return KERNELS.get(_kernel_name(kernel), _VECTOR)


def _kernel_name(dispatcher: Any) -> str:
    func = getattr(dispatcher, "py_func", None)
    module = getattr(func, "__module__", "") or ""
    return f"{module.rsplit('.', 1)[-1]}.{getattr(func, '__qualname__', '?')}"


def _on_compile(dispatcher: Any) -> None:
    """A kernel starts compiling (outermost compiles only)."""
    with _lock:
        if any(s.quiet or s.said for s in _scopes):
            return
        if _scopes:
            scope = _scopes[0]  # the outermost call's words (a tournament's, not its batches')
            scope.said = True
            what, seconds = scope.what, scope.seconds
            if callable(what):
                what, seconds = what()
            if not seconds:  # a scope without its own estimate: the compiling kernel's
                seconds = KERNELS.get(_kernel_name(dispatcher), ("", None))[1]
            _said.add(what)  # a kernel of the same words' group compiled later: said already
            text = message(what, seconds)
        else:
            known = KERNELS.get(_kernel_name(dispatcher))
            if known is None or known[0] in _said:
                return
            _said.add(known[0])
            text = message(*known)
    _say(text)


def _register() -> None:
    from numba.core import event

    class _Listener(event.Listener):
        def on_start(self, ev: Any) -> None:
            global _depth
            _depth += 1
            if _depth == 1:
                _on_compile(ev.data.get("dispatcher"))

        def on_end(self, ev: Any) -> None:
            global _depth
            _depth = max(0, _depth - 1)

    event.register("numba:compile", _Listener())


_register()

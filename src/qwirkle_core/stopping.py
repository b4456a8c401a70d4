"""Stop signals handled as Ctrl-C: one mechanism for every long run.

A scheduler, ``timeout``, a container stop or a cluster preemption ends a process
with SIGTERM (a closed terminal with SIGHUP), not with Ctrl-C. Inside
:func:`stop_signals`, SIGTERM and SIGHUP do exactly what Ctrl-C (SIGINT) would do at
that moment: they call the SIGINT handler in force (Python's default raises
KeyboardInterrupt; a handler installed for a while, such as the one that defers
Ctrl-C around a Dask client call, is called as it would be for Ctrl-C). So the code
that keeps the finished games on Ctrl-C keeps them on SIGTERM too: the batch stops
within a chunk, the rows are written with the summary, and no temporary file is left.

:func:`exit_status` gives the conventional status of the stop: 130 for Ctrl-C, 128 +
the signal's number otherwise (143 for SIGTERM, 129 for SIGHUP), which a shell,
``timeout`` or a scheduler reads as "ended by that signal".

The ``qwirkle`` command line runs every command inside :func:`stop_signals`; a script
that trains or simulates for a long time can do the same::

    from qwirkle_core.stopping import exit_status, stop_signals

    with stop_signals():
        try:
            train()
        except KeyboardInterrupt:
            save_what_is_done()
            raise SystemExit(exit_status())
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

__all__ = ["STOP_SIGNALS", "exit_status", "stop_signals", "stopped_by"]

STOP_SIGNALS: tuple[str, ...] = ("SIGTERM", "SIGHUP")
"""The signals handled as Ctrl-C (those this platform has)."""

EXIT_CTRL_C = 128 + int(signal.SIGINT)

_received: list[int] = []  # the stop signals received inside stop_signals(), in order


def _as_ctrl_c(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    handler: Any = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
    else:  # Ctrl-C ignored or left to the system for a moment: a stop still stops
        raise KeyboardInterrupt


@contextmanager
def stop_signals() -> Iterator[None]:
    """While open (in the main thread), SIGTERM and SIGHUP are handled as Ctrl-C;
    the previous handlers are restored after. A signal ignored when it opens stays
    ignored (``nohup qwirkle ...`` ignores SIGHUP, as it asks). Elsewhere than in the main thread it
    does nothing (Python delivers signals to the main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    del _received[:]
    previous: dict[int, Any] = {}
    for name in STOP_SIGNALS:
        number = getattr(signal, name, None)
        # a signal the process was started with ignored stays ignored (nohup ignores SIGHUP)
        if number is not None and signal.getsignal(number) is not signal.SIG_IGN:
            previous[number] = signal.signal(number, _as_ctrl_c)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def stopped_by() -> str:
    """What stopped the run: ``"SIGTERM"`` or ``"SIGHUP"`` when such a signal arrived
    inside the last :func:`stop_signals`, else ``"Ctrl-C"``."""
    return signal.Signals(_received[0]).name if _received else "Ctrl-C"


def exit_status() -> int:
    """The exit status of a stopped run: 128 + the first stop signal's number (143 for
    SIGTERM, 129 for SIGHUP), or 130 for Ctrl-C."""
    return 128 + _received[0] if _received else EXIT_CTRL_C

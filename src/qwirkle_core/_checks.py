"""The one place for argument checks and JSON field readers.

Every public entry point checks what it is given here, before anything reaches a
kernel: a wrong type raises ``TypeError``, a value out of range ``ValueError`` (or the
error class the caller names), and the message names the argument. The JSON readers
raise :class:`~qwirkle_core.errors.FormatError` naming the field.
"""

from __future__ import annotations

import json
import math
import operator
from typing import Any

from .errors import FormatError

__all__ = [
    "COORD_LIMIT",
    "INT_FIELD_LIMIT",
    "SEED_LIMIT",
    "check_coord",
    "check_int",
    "check_seed",
    "check_finite",
    "check_threads",
    "json_bool",
    "json_field",
    "json_int",
    "json_ints",
    "json_object",
    "load_json",
]

COORD_LIMIT = 2**31
"""Coordinates are ints with ``-COORD_LIMIT < row, col < COORD_LIMIT``."""
SEED_LIMIT = 2**64
"""Seeds are ints ``0 .. SEED_LIMIT - 1``."""
INT_FIELD_LIMIT = 2**31 - 1
"""The largest counter (score, turn, Qwirkles...) a JSON document may hold."""


def check_int(
    value: Any, name: str, lo: int | None = None, hi: int | None = None, error: type[ValueError] = ValueError
) -> int:
    """``value`` as a Python int in ``[lo, hi]`` (either bound may be None).

    Accepts ints and integer-like objects (numpy integers; anything with
    ``__index__``) but not bools or floats. Raises TypeError for another type and
    ``error`` (ValueError by default) naming ``name`` and the range when out of range.
    """
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{name} must be an int, not {_short(value)}")
    v = operator.index(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise error(f"{name} must be {_range_text(lo, hi)}, not {_short(v)}")
    return v


def _range_text(lo: int | None, hi: int | None) -> str:
    if lo is not None and hi is not None:
        return f"{lo:,} to {hi:,}"
    if lo is not None:
        return f"at least {lo:,}"
    return f"at most {hi:,}"


def check_seed(value: Any, name: str = "seed") -> int:
    """A seed: an int ``0 .. 2**64 - 1`` (numpy integers too). TypeError for a
    non-int (floats included, so that 1.5 is never silently truncated), ValueError
    out of range."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{name} must be an int 0 .. 2**64-1, not {_short(value)}")
    v = operator.index(value)
    if not 0 <= v < SEED_LIMIT:
        raise ValueError(f"{name} must be an int 0 .. 2**64-1, not {_short(v)}")
    return v


def check_coord(value: Any, name: str, error: type[ValueError] = ValueError) -> int:
    """A board coordinate: an int with ``|value| < 2**31`` (``error`` otherwise)."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{name} must be an int, not {_short(value)}")
    v = operator.index(value)
    if not -COORD_LIMIT < v < COORD_LIMIT:
        raise error(f"{name} {_short(v)} is outside the board: coordinates are ints with |{name}| < 2**31")
    return v


def check_threads(threads: Any, available: int) -> int:
    """A thread count: None for ``available``, else an int >= 1 (capped at ``available``)."""
    if threads is None:
        return available
    return min(check_int(threads, "threads", 1), available)


def check_finite(value: Any, name: str) -> float:
    """A finite real number (int or float, not bool) as a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        raise TypeError(f"{name} must be a number, not {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        raise TypeError(f"{name} must be a number, not {value!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number, not {value!r}")
    return v


# -- JSON ------------------------------------------------------------------------------


def load_json(text: Any, what: str, error: type[FormatError] = FormatError) -> Any:
    """``json.loads(text)``, with every way it can fail turned into ``error`` (a
    :class:`FormatError` class) saying where the text stops being JSON: syntax errors
    (the error's ``pos`` attribute is then the offset), nesting too deep for Python's
    parser, integers too long to convert."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    if not isinstance(text, str):
        raise TypeError(f"a {what} is JSON text (str), not {type(text).__name__}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        err = error(f"{what}: not valid JSON ({e})")
        err.pos = e.pos  # type: ignore[attr-defined]  # where the text stops being JSON
        raise err from None
    except RecursionError:
        raise error(f"{what}: not valid JSON (nested too deeply)") from None
    except ValueError as e:  # e.g. an integer of more than 4,300 digits
        raise error(f"{what}: not valid JSON ({e})") from None


def json_object(data: Any, what: str, fmt: str | None = None, version: int | None = None) -> dict[str, Any]:
    """``data`` if it is a JSON object (a dict) with the given ``format`` and
    ``version`` fields; FormatError otherwise."""
    if not isinstance(data, dict):
        raise FormatError(f"a {what} is a JSON object, not {type(data).__name__}")
    if fmt is not None:
        if data.get("format") != fmt:
            raise FormatError(f"not a qwirkle-core {what}: 'format' must be {fmt!r}, not {_short(data.get('format'))}")
        if data.get("version") != version:
            raise FormatError(
                f"unsupported {what} version {_short(data.get('version'))}; this library reads version {version}"
            )
    return data


def json_field(data: dict[str, Any], key: str, what: str) -> Any:
    """``data[key]``; FormatError naming the missing field."""
    if key not in data:
        raise FormatError(f"{what}: missing field {key!r}")
    return data[key]


def json_int(value: Any, what: str, lo: int = 0, hi: int = INT_FIELD_LIMIT) -> int:
    """A JSON integer in ``[lo, hi]``; FormatError naming ``what`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise FormatError(f"{what} must be an int, not {_short(value)}")
    if not lo <= value <= hi:
        raise FormatError(f"{what} must be {_range_text(lo, hi)}, not {_short(value)}")
    return value


def json_ints(value: Any, what: str, n: int, lo: int = 0, hi: int = INT_FIELD_LIMIT) -> list[int]:
    """A JSON list of ``n`` integers in ``[lo, hi]``."""
    if not isinstance(value, list) or len(value) != n:
        raise FormatError(f"{what} must be a list of {n} ints, not {_short(value)}")
    return [json_int(v, f"{what}[{i}]", lo, hi) for i, v in enumerate(value)]


def json_bool(value: Any, what: str) -> bool:
    """A JSON boolean."""
    if not isinstance(value, bool):
        raise FormatError(f"{what} must be true or false, not {_short(value)}")
    return value


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters (for messages about huge inputs)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."

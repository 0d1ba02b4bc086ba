"""Byte counts and rates as operators type and read them. Pure.

Kafka's own tools take plain bytes (``--throttle 50000000``); kadmin also takes suffixes:
``k``/``K``/``KB`` = 10^3, ``M``/``MB`` = 10^6, ``G``/``GB`` = 10^9, ``T``/``TB`` = 10^12
(decimal, as network rates and disk vendors count), and ``KiB``/``Ki``, ``MiB``/``Mi``,
``GiB``/``Gi``, ``TiB``/``Ti`` = 2^10, 2^20, 2^30, 2^40. A trailing ``/s`` is allowed on a
rate. Case does not matter (``500k``, ``50mb``), decimals do (``1.5G``). kadmin prints bytes
the same decimal way (``1.5 GB``), so what it prints can be typed back.

One rule for every number on the command line (:func:`parse_number`, :func:`parse_bytes`):
decimal digits with an optional fraction (and, for plain numbers, an exponent), computed
exactly (no binary rounding: ``9223372036854775807`` stays Java's ``Long.MAX_VALUE``), and
never ``inf``, ``nan`` or anything else Python's ``float()`` would also take.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

from kadmin.model import InvalidInput

_UNITS = {"": 1, "b": 1,
          "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
          "t": 10**12, "tb": 10**12,
          "ki": 2**10, "kib": 2**10, "mi": 2**20, "mib": 2**20, "gi": 2**30, "gib": 2**30,
          "ti": 2**40, "tib": 2**40}
_AMOUNT = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-z]*)\s*", re.IGNORECASE | re.ASCII)

JAVA_LONG_MAX = 2**63 - 1
"""Kafka parses throttle rates as Java longs."""


def parse_bytes(text: str, what: str, *, rate: bool = False) -> int:
    """``"50MB"`` -> 50000000; ``what`` names the option in the error. ``rate`` allows a
    trailing ``/s``. The result is a whole number of bytes, at least 1."""
    body = text.strip()
    if rate and body.lower().endswith("/s"):
        body = body[:-2]
    match = _AMOUNT.fullmatch(body)
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in _UNITS:
        example = "50MB, 50M, 10MiB, 1.5G, 500k or plain bytes" + ("/s" if rate else "")
        raise InvalidInput(f"{what}: {_quoted(text)} is not a byte {'rate' if rate else 'count'} "
                           f"({example})")
    value = math.floor(Decimal(match.group(1)) * _UNITS[unit])
    if value < 1:
        raise InvalidInput(f"{what}: {_quoted(text)} is less than one byte{'/s' if rate else ''}")
    if value > JAVA_LONG_MAX:
        raise InvalidInput(f"{what}: {_quoted(text)} is more than Kafka can take "
                           f"({JAVA_LONG_MAX}, Java's Long.MAX_VALUE)")
    return value


_NUMBER = re.compile(r"\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*", re.ASCII)
_COUNT = re.compile(r"\s*[+-]?\d+\s*", re.ASCII)


def parse_count(text: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """A whole number in ASCII decimal digits (``3``, ``1000``) within ``[minimum, maximum]``:
    the rule of :func:`parse_number` for counts (``1_000``, ``١٢``, ``0x10`` and ``1e3`` are
    refused alike); a ValueError saying what is expected otherwise."""
    if not _COUNT.fullmatch(text):
        raise ValueError(f"{_quoted(text)} is not a whole number (ASCII decimal digits such as 3 "
                         "or 1000)")
    value = int(text.strip())
    if minimum is not None and value < minimum:
        raise ValueError(f"{_quoted(text)} is less than the minimum {minimum}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{_quoted(text)} is more than the maximum {maximum}")
    return value


def parse_number(text: str, *, minimum: float | None = None, maximum: float | None = None,
                 unit: str = "") -> float:
    """A finite decimal number (``50``, ``0.5``, ``1e3``) within ``[minimum, maximum]``; a
    ValueError saying what is expected otherwise. ``unit`` (``seconds``) names what it counts
    in the message. ``inf``, ``nan``, ``0x10`` and ``1_000`` are refused alike."""
    what = f"a number of {unit}" if unit else "a number"
    if not _NUMBER.fullmatch(text):
        raise ValueError(f"{_quoted(text)} is not {what} (a finite decimal number such as 2, 0.5 "
                         "or 1e3)")
    value = Decimal(text.strip())
    if minimum is not None and value < Decimal(repr(minimum)):
        raise ValueError(f"{_quoted(text)} is less than the minimum {minimum:g}{_unit(unit)}")
    if maximum is not None and value > Decimal(repr(maximum)):
        raise ValueError(f"{_quoted(text)} is more than the maximum {maximum:g}{_unit(unit)}")
    result = float(value)
    if not math.isfinite(result):  # beyond a float's range
        raise ValueError(f"{_quoted(text)} is too large to be {what}")
    return result


def _unit(unit: str) -> str:
    return f" {unit}" if unit else ""


def _quoted(text: str, limit: int = 40) -> str:
    """``text`` as Python quotes it, cut to ``limit`` characters (a 5000-digit number in an
    error line helps no one)."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} characters)"


def parse_rate(text: str, what: str = "--throttle") -> int:
    """A replication rate in bytes per second (``50MB`` = 50,000,000 B/s)."""
    return parse_bytes(text, what, rate=True)


def human_bytes(n: float) -> str:
    """``1500000`` -> ``1.5 MB`` (decimal units, like :func:`parse_bytes`)."""
    for unit, scale in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if abs(n) >= scale:
            return f"{n / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{n:.0f} B"


def human_duration(seconds: float) -> str:
    """``3725`` -> ``1h02m05s``; under a minute ``42s``."""
    total = max(0, round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"

"""Byte counts and rates as operators type and read them. Pure.

Kafka's own tools take plain bytes (``--throttle 50000000``); kadmin also takes suffixes:
``k``/``K``/``KB`` = 10^3, ``M``/``MB`` = 10^6, ``G``/``GB`` = 10^9, ``T``/``TB`` = 10^12
(decimal, as network rates and disk vendors count), and ``KiB``/``Ki``, ``MiB``/``Mi``,
``GiB``/``Gi``, ``TiB``/``Ti`` = 2^10, 2^20, 2^30, 2^40. A trailing ``/s`` is allowed on a
rate. Case does not matter (``500k``, ``50mb``), decimals do (``1.5G``). kadmin prints bytes
the same decimal way (``1.5 GB``), so what it prints can be typed back.
"""

from __future__ import annotations

import math
import re

from kadmin.model import InvalidInput

_UNITS = {"": 1, "b": 1,
          "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
          "t": 10**12, "tb": 10**12,
          "ki": 2**10, "kib": 2**10, "mi": 2**20, "mib": 2**20, "gi": 2**30, "gib": 2**30,
          "ti": 2**40, "tib": 2**40}
_AMOUNT = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-z]*)\s*", re.IGNORECASE)

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
        raise InvalidInput(f"{what}: {text!r} is not a byte {'rate' if rate else 'count'} "
                           f"({example})")
    value = math.floor(float(match.group(1)) * _UNITS[unit])
    if value < 1:
        raise InvalidInput(f"{what}: {text!r} is less than one byte{'/s' if rate else ''}")
    if value > JAVA_LONG_MAX:
        raise InvalidInput(f"{what}: {text!r} is more than Kafka can take ({JAVA_LONG_MAX})")
    return value


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

"""Field readers the Jaeger and Zipkin JSON forms share: their ids and their times.

Both write ids as hex without leading zeros (a 64-bit trace id is the low half of 128) and
times as microseconds since the epoch; a value of another shape is a DecodeError naming the
field.
"""

from __future__ import annotations

from typing import Any

from rampart_otel.errors import DecodeError


def micros(value: Any, field: str) -> int | None:
    """Microseconds since the epoch → nanoseconds; None when absent."""
    if value is None:
        return None
    if type(value) is not int or value < 0:  # bool is not int here
        raise DecodeError(f"{field}: expected microseconds, got {value!r:.60}")
    return value * 1000


def short_hex_id(value: Any, nbytes: int, field: str) -> str:
    """Lowercase hex of ``nbytes`` bytes, left-padded: leading zeros may be dropped."""
    if isinstance(value, str) and 0 < len(value) <= 2 * nbytes:
        try:
            return bytes.fromhex(value.rjust(2 * nbytes, "0")).hex()
        except ValueError:
            pass
    raise DecodeError(f"{field}: expected up to {2 * nbytes} hex digits, got {value!r:.60}")

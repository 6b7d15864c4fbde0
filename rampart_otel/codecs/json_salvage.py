"""What OTLP JSON that does not decode still shows: its spans' ids and times.

A line cut short (an exporter killed mid-write, a file copied while it grew), corrupted,
nested deeper than any parser goes, or with a malformed resource or scope cannot be
decoded, and dropping it would let the runs it belonged to read as if those spans had
never been sent: SAFE for what they alone showed.
So its text is read by a tolerant walk instead of a parser: strings, numbers and brackets
(``_TOKEN``), tracking which object each key stands in, up to the end of the text whatever
comes between. Each object of a ``spans`` array that shows a ``traceId`` (32 hex digits, as
OTLP JSON writes it) becomes a placeholder (``otlp_ids.undecodable``) with the ``spanId``,
``parentSpanId`` and times it shows, which its run's integrity reads as a span lost.

Only OTLP JSON is salvaged (the text names ``resourceSpans``): a log record or a span link
carries a trace id too, but is no span of that trace. Ids written in base64 (which the
decoder also reads) are not taken here; such text is only reported, as before.
"""

from __future__ import annotations

import re
import zlib

from rampart_otel.codecs.otlp_ids import undecodable
from rampart_otel.lazy_regex import LazyPattern
from rampart_otel.model import Resource, Scope, Span

__all__ = ["salvaged_spans"]

_OTLP = LazyPattern(rb'"resource_?spans"\s*:', re.IGNORECASE)
# One token: a string (group 1; group 2 when it is a key: a colon follows), an opening or
# closing bracket (group 3), or a number (group 4). Anything else is stepped over. A string
# left open runs to the end of the text, a lone backslash included, taken whole and never
# tried again from inside (text cut in a long value of escaped quotes would otherwise be
# scanned once per quote).
_TOKEN = LazyPattern(rb'"((?:[^"\\]|\\.?)*+)(?:"|\Z)(\s*:)?|([][{}])|(-?[0-9]+)')
_FIELDS = {
    b"traceId": "trace",
    b"trace_id": "trace",
    b"spanId": "span",
    b"span_id": "span",
    b"parentSpanId": "parent",
    b"parent_span_id": "parent",
    b"startTimeUnixNano": "start",
    b"start_time_unix_nano": "start",
    b"endTimeUnixNano": "end",
    b"end_time_unix_nano": "end",
}
_SPANS = b"spans"  # the array of span objects (in ``scopeSpans`` or ``scope_spans``)
# OTLP's span objects stand 6 containers deep; deeper ones are only counted, so hostile
# nesting (a line of brackets) costs no memory.
_DEPTH = 32
_HEX = LazyPattern(rb"[0-9a-fA-F]+")


def salvaged_spans(data: bytes | bytearray | memoryview, why: str) -> list[Span]:
    """A placeholder for each span whose trace id the text of unparsable OTLP JSON shows
    (``why``: the decoder's words, kept on each); none for any other text."""
    text = bytes(data)
    if not _OTLP.search(text):
        return []
    kept: dict[tuple[bytes, bytes], Span] = {}
    for at, fields in _span_objects(text):
        trace_id = _id(fields.get("trace"), 16)
        if trace_id is None:
            continue
        span_id = _id(fields.get("span"), 8) or _stand_in_id(trace_id, at)
        if (trace_id, span_id) in kept:
            continue
        kept[(trace_id, span_id)] = undecodable(
            trace_id,
            span_id,
            _id(fields.get("parent"), 8) or b"",
            _time(fields.get("start")),
            _time(fields.get("end")),
            Resource({}),
            Scope(),
            why,
        )
    return list(kept.values())


def _span_objects(text: bytes) -> list[tuple[int, dict[str, bytes]]]:
    """Each object of a ``spans`` array: where it starts, and the fields it shows."""
    found: list[tuple[int, dict[str, bytes]]] = []
    # Open containers, outermost first: (an array's name: the key it is the value of; a
    # span object's fields). A list, not recursion, and no deeper than _DEPTH.
    open_: list[tuple[bytes | None, dict[str, bytes] | None]] = []
    key: bytes | None = None
    deeper = 0  # containers open beyond _DEPTH
    for match in _TOKEN.finditer(text):
        string, colon, bracket, number = match.groups()
        if bracket is not None:
            if deeper or (len(open_) >= _DEPTH and bracket in b"[{"):
                deeper += 1 if bracket in b"[{" else -1
            elif bracket in b"[{":
                name = key if key is not None else (open_[-1][0] if open_ else None)
                fields: dict[str, bytes] | None = None
                if bracket == b"{" and open_ and open_[-1][0] == _SPANS and open_[-1][1] is None:
                    fields = {}
                    found.append((match.start(), fields))
                open_.append((name if bracket == b"[" else None, fields))
            elif open_:
                open_.pop()
            key = None
        elif colon is not None:
            key = string
        else:
            fields = open_[-1][1] if open_ else None
            field = _FIELDS.get(key) if key is not None else None
            if fields is not None and field is not None and field not in fields:
                fields[field] = string if string is not None else number
            key = None
    return found


def _id(value: bytes | None, size: int) -> bytes | None:
    """An id written as hex of its size (``size`` bytes), else None."""
    if value is None or len(value) != 2 * size or not _HEX.fullmatch(value):
        return None
    raw = bytes.fromhex(value.decode())
    return raw if any(raw) else None


def _time(value: bytes | None) -> int | None:
    """A time in nanoseconds written as a number or a decimal string, else None."""
    if value is None or not value.isdigit() or len(value) > 19:
        return None
    return int(value) or None


def _stand_in_id(trace_id: bytes, at: int) -> bytes:
    """A span id for a placeholder whose own id the text does not show (cut before it)."""
    value = zlib.crc32(trace_id + at.to_bytes(8, "little")) | 1 << 63
    return value.to_bytes(8, "big")

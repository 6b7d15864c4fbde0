"""Every JSON trace form read, told apart by content, decoded to :class:`Span`.

One parsed JSON value (a JSON Lines line, or one document of a file) is:

- OTLP JSON (``resourceSpans``): :mod:`otlp_json`;
- Tempo's trace-by-id answer (``batches``, or OTLP under ``trace``; Jaeger v3's under
  ``result``): :mod:`tempo_json`;
- Jaeger's JSON (``data`` of traces with ``spans`` and ``processes``): :mod:`jaeger_json`;
- Zipkin v2 JSON (a list of spans with ``traceId`` and ``id``): :mod:`zipkin_json`;
- one span of the Python SDK's ``ConsoleSpanExporter`` (``context.trace_id``):
  :mod:`console_json`.

Anything else raises one :class:`DecodeError` naming what was expected.
"""

from __future__ import annotations

from typing import Any

from rampart_otel.codecs.console_json import is_console_span, spans_from_console
from rampart_otel.codecs.jaeger_json import is_jaeger, spans_from_jaeger
from rampart_otel.codecs.otlp_json import load_json, spans_from_json
from rampart_otel.codecs.tempo_json import envelope, spans_from_tempo
from rampart_otel.codecs.zipkin_json import is_zipkin_span, spans_from_zipkin
from rampart_otel.errors import DecodeError
from rampart_otel.model import Span

__all__ = ["EXPECTED", "spans_from_document", "spans_from_document_bytes"]

EXPECTED = (
    "OTLP JSON (resourceSpans), Tempo's trace JSON (batches, or trace), Jaeger's JSON "
    "(data), Zipkin v2 JSON (a list of spans) or the Python SDK's ConsoleSpanExporter output"
)


def spans_from_document_bytes(data: bytes | bytearray | str) -> list[Span]:
    """One JSON text in any form read."""
    return spans_from_document(load_json(data))


def spans_from_document(obj: Any) -> list[Span]:
    """One parsed JSON value in any form read."""
    if type(obj) is dict:
        if "resourceSpans" in obj or "resource_spans" in obj or not obj:
            return spans_from_json(obj)
        key = envelope(obj)
        if key is not None:
            return spans_from_tempo(obj, key)
        if is_jaeger(obj):
            return spans_from_jaeger(obj)
        if is_console_span(obj):
            return spans_from_console(obj, {})
        if is_zipkin_span(obj):
            return spans_from_zipkin([obj], {})
        keys = ", ".join(sorted(map(str, obj))[:5])
        raise DecodeError(
            f"not OTLP trace data nor another form read (keys: {keys}); expected {EXPECTED}"
        )
    if type(obj) is list:
        if not obj:
            return []
        first = obj[0]
        if is_zipkin_span(first) or (
            type(first) is list and (not first or is_zipkin_span(first[0]))
        ):
            return spans_from_zipkin(obj, {})
        raise DecodeError(
            f"not a trace form read here: got array of {_first_type(first)}; expected {EXPECTED}"
        )
    return spans_from_json(obj)  # raises: "expected a JSON object ..., got <type>"


def _first_type(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean"}.get(
        type(value), "number" if isinstance(value, int | float) else "null"
    )

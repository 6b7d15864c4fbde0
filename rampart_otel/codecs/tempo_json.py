"""Grafana Tempo's trace-by-id answers → :class:`~rampart_otel.model.Span`: OTLP JSON in an
envelope of its own.

- ``GET /api/traces/{id}`` answers ``{"batches": [ResourceSpans, ...]}`` (Tempo's
  ``tempopb.Trace``; ids in base64, enums by name, older versions
  ``instrumentationLibrarySpans``), which is also what Grafana's "Download traces" writes;
- ``GET /api/v2/traces/{id}`` answers ``{"trace": {"resourceSpans": [...]}, "status": ...}``.

Jaeger v2's ``/api/v3/traces/{id}`` wraps OTLP JSON the same way, under ``result``. The
spans inside are OTLP, read by :mod:`~rampart_otel.codecs.otlp_json`: nothing is lost.
"""

from __future__ import annotations

from typing import Any

from rampart_otel.codecs.otlp_json import spans_from_json
from rampart_otel.errors import DecodeError
from rampart_otel.model import Span

__all__ = ["FORM", "envelope", "spans_from_tempo"]

FORM = "Tempo trace JSON"
# Envelope key → what the file holds, for errors.
_ENVELOPES = {
    "batches": "Tempo trace JSON (batches)",
    "trace": "Tempo v2 trace JSON",
    "result": "Jaeger v3 trace JSON",
}


def envelope(obj: dict[str, Any]) -> str | None:
    """The envelope key an OTLP-in-an-envelope answer uses, or None."""
    if isinstance(obj.get("batches"), list):
        return "batches"
    for key in ("trace", "result"):
        inner = obj.get(key)
        if isinstance(inner, dict) and (
            "resourceSpans" in inner or "resource_spans" in inner or not inner
        ):
            return key
    return None


def spans_from_tempo(obj: dict[str, Any], key: str) -> list[Span]:
    inner = {"resourceSpans": obj["batches"]} if key == "batches" else obj[key]
    try:
        return spans_from_json(inner)
    except DecodeError as exc:
        raise DecodeError(f"{_ENVELOPES[key]}: {exc.message}") from None

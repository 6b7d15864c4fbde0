"""The Python SDK's ``ConsoleSpanExporter`` output → :class:`~rampart_otel.model.Span`.

The exporter writes ``ReadableSpan.to_json()``: one pretty-printed object per span, back to
back (the file reader splits them). Its fields: ``name``; ``context`` with ``trace_id`` and
``span_id`` as ``0x``-prefixed hex; ``kind`` as ``str(SpanKind.X)``; ``parent_id`` (``0x`` hex
or null); ``start_time`` / ``end_time`` as ISO 8601 UTC with microseconds; ``status`` with
``status_code`` (``UNSET``, ``OK``, ``ERROR``) and ``description``; ``attributes`` as a JSON
object (typed: strings, numbers, booleans, arrays); ``events`` (``name``, ``timestamp``,
``attributes``); ``links`` (``context``, ``attributes``); ``resource`` (``attributes``).

What the form loses: the instrumentation scope (name and version), every dropped count,
the trace flags (so whether a parent is remote), and time below the microsecond.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from rampart_otel.errors import DecodeError
from rampart_otel.model import Event, Link, Resource, Scope, Span, SpanKind, StatusCode

__all__ = ["FORM", "is_console_span", "spans_from_console"]

FORM = "ConsoleSpanExporter output"

_KINDS = {f"SpanKind.{kind.value}": kind for kind in SpanKind}
_STATUS = {code.value: code for code in StatusCode}


def is_console_span(obj: dict[str, Any]) -> bool:
    """Whether a JSON object is one span as ``ReadableSpan.to_json()`` writes it."""
    context = obj.get("context")
    return isinstance(context, dict) and "span_id" in context and "trace_id" in context


def spans_from_console(obj: dict[str, Any], resources: dict[str, Resource]) -> list[Span]:
    """One span object; ``resources`` shares equal resources between the spans of a file."""
    try:
        return [_span(obj, resources)]
    except DecodeError as exc:
        raise DecodeError(f"{FORM}: {exc.message}") from None
    except (TypeError, AttributeError, KeyError, ValueError) as exc:
        raise DecodeError(f"{FORM}: malformed ({exc})") from None


def _span(obj: dict[str, Any], resources: dict[str, Resource]) -> Span:
    context = obj["context"]
    trace_id = _hex_id(context.get("trace_id"), 16, "context.trace_id")
    span_id = _hex_id(context.get("span_id"), 8, "context.span_id")
    parent = obj.get("parent_id")
    parent_id = _hex_id(parent, 8, "parent_id") if parent else None
    name = obj.get("name")
    if not isinstance(name, str):
        raise DecodeError("name: expected a string")
    kind = _KINDS.get(obj.get("kind") or "", SpanKind.UNSPECIFIED)
    status = obj.get("status") or {}
    code = _STATUS.get(status.get("status_code") or "UNSET", StatusCode.UNSET)
    message = status.get("description") or ""
    events = [
        Event(
            str(ev.get("name") or ""),
            _time(ev.get("timestamp"), "events.timestamp"),
            _attributes(ev.get("attributes")),
        )
        for ev in obj.get("events") or ()
    ]
    links = []
    for ln in obj.get("links") or ():
        lc = ln.get("context") or {}
        links.append(
            Link(
                _hex_id(lc.get("trace_id"), 16, "links.context.trace_id"),
                _hex_id(lc.get("span_id"), 8, "links.context.span_id"),
                _attributes(ln.get("attributes")),
            )
        )
    return Span(
        trace_id,
        span_id,
        parent_id,
        name,
        kind,
        _time(obj.get("start_time"), "start_time"),
        _time(obj.get("end_time"), "end_time"),
        code,
        message if isinstance(message, str) else str(message),
        _attributes(obj.get("attributes")),
        events,
        links,
        _resource(obj.get("resource"), resources),
        Scope(lost_by=FORM),
    )


def _resource(value: Any, resources: dict[str, Resource]) -> Resource:
    attributes = _attributes(value.get("attributes") if isinstance(value, dict) else None)
    key = repr(sorted(attributes.items(), key=lambda kv: kv[0]))
    found = resources.get(key)
    if found is None:
        found = resources[key] = Resource(attributes)
    return found


def _attributes(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DecodeError("attributes: expected an object")
    return dict(value)


def _hex_id(value: Any, nbytes: int, field: str) -> str:
    if isinstance(value, str):
        text = value[2:] if value[:2] in ("0x", "0X") else value
        if len(text) == 2 * nbytes:
            try:
                return bytes.fromhex(text).hex()
            except ValueError:
                pass
    raise DecodeError(f"{field}: expected 0x and {2 * nbytes} hex digits, got {value!r:.60}")


def _time(value: Any, field: str) -> int | None:
    """ISO 8601 UTC (``%Y-%m-%dT%H:%M:%S.%fZ``) → Unix nanoseconds, exact to the microsecond."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise DecodeError(f"{field}: expected an ISO 8601 time, got {value!r:.60}")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise DecodeError(f"{field}: not an ISO 8601 time: {value!r:.60}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000

"""The one span builder for tests that need hand-written spans (quirks samples cannot show)."""

from __future__ import annotations

import itertools
from typing import Any

from rampart_otel.model import Event, Resource, Scope, Span

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
_ids = itertools.count(1)


def span(
    name: str = "span",
    attributes: dict[str, Any] | None = None,
    *,
    kind: str = "INTERNAL",
    span_id: str | None = None,
    parent: str | None = None,
    trace_id: str = TRACE,
    start: int | None = None,
    end: int | None = -1,  # -1: ended 10 ns after start; None: never ended
    status: str = "UNSET",
    events: list[Event] | None = None,
    resource: dict[str, Any] | None = None,
    dropped_attributes: int = 0,
    dropped_events: int = 0,
    scope: str = "test",
) -> Span:
    number = next(_ids)
    start_ns = start if start is not None else number * 1000
    return Span(
        trace_id=trace_id,
        span_id=span_id or f"{number:016x}",
        parent_span_id=parent,
        name=name,
        kind=kind,
        start_ns=start_ns,
        end_ns=start_ns + 10 if end == -1 else end,
        status_code=status,
        status_message="",
        attributes=dict(attributes or {}),
        events=list(events or []),
        links=[],
        resource=Resource(resource if resource is not None else {"service.name": "weather-agent"}),
        scope=Scope(scope),
        dropped_attributes_count=dropped_attributes,
        dropped_events_count=dropped_events,
    )


def event(name: str, attributes: dict[str, Any]) -> Event:
    return Event(name=name, time_ns=None, attributes=attributes)


def mk(span_id: str, name: str, attributes: dict[str, Any] | None = None, **options: Any) -> Span:
    """``span`` keyed by id first, starting at 0 unless told: for hand-built span trees."""
    options.setdefault("start", 0)
    return span(name, attributes, span_id=span_id, **options)

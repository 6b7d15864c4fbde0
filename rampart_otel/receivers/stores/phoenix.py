"""Arize Phoenix → spans, through its REST API (``/v1/projects/{project}/traces`` and
``/spans``), a page of traces at a time, oldest first.

Phoenix keeps a span's OpenInference attributes (nested back into their flat dotted keys
here), its name, ids, parent, times, status and events. It does not keep, so no trace read
from it carries: the OTLP span kind, the resource (``service.name``: the project stands in
for it), the instrumentation scope, links, dropped-attribute counts, or times finer than a
microsecond. ``openinference.span.kind``, which Phoenix lifts out of the attributes into its
own ``span_kind``, is put back.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any
from urllib.parse import quote

from rampart_otel.conventions.finish_reasons import scope_not_kept
from rampart_otel.model import Event, Resource, Scope, Span, SpanKind, StatusCode
from rampart_otel.receivers.stores import StoreSource, TraceStoreError
from rampart_otel.receivers.stores.http import call, client

SPANS_PER_REQUEST = 1000  # Phoenix's largest page
IDS_PER_REQUEST = 100  # trace ids in one span query's URL
DROPPED = (
    "span kind",
    "resource attributes (service.name)",
    "instrumentation scope",
    "links",
    "sub-microsecond times",
)
_SCOPE = Scope(scope_not_kept("Phoenix"))
_STATUS = {"OK": StatusCode.OK, "ERROR": StatusCode.ERROR}


def read_phoenix(source: StoreSource) -> Iterator[list[Span]]:
    """Every trace of the project in the window, a page of traces per batch."""
    project = quote(source.name, safe="")
    read = 0
    cursor: str | None = None
    with client(source) as http:
        while True:
            params: dict[str, Any] = {"sort": "start_time", "order": "asc", "limit": source.page}
            if source.since is not None:
                params["start_time"] = source.since.isoformat()
            if source.until is not None:
                params["end_time"] = source.until.isoformat()
            if cursor:
                params["cursor"] = cursor
            body = call(http, source, "GET", f"/v1/projects/{project}/traces", params=params)
            traces = _list(body, source)
            if source.limit is not None:
                traces = traces[: source.limit - read]
            trace_ids = [str(t.get("trace_id", "")) for t in traces if isinstance(t, dict)]
            read += len(trace_ids)
            for start in range(0, len(trace_ids), IDS_PER_REQUEST):
                batch = _spans(http, source, project, trace_ids[start : start + IDS_PER_REQUEST])
                if batch:
                    yield batch
            cursor = body.get("next_cursor")
            if not cursor or (source.limit is not None and read >= source.limit):
                return


def _spans(http: Any, source: StoreSource, project: str, trace_ids: list[str]) -> list[Span]:
    """Every span of these traces (their own pages followed to the end)."""
    spans: list[Span] = []
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {
            "trace_id": trace_ids,
            "sort": "start_time",
            "order": "asc",
            "limit": SPANS_PER_REQUEST,
        }
        if cursor:
            params["cursor"] = cursor
        body = call(http, source, "GET", f"/v1/projects/{project}/spans", params=params)
        spans.extend(span_from_phoenix(item) for item in _list(body, source))
        cursor = body.get("next_cursor")
        if not cursor:
            return spans


def _list(body: Any, source: StoreSource) -> list[Any]:
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        raise TraceStoreError(f"{source.url}: Phoenix answered without a 'data' list")
    return data


def span_from_phoenix(item: dict[str, Any]) -> Span:
    """One span of Phoenix's span JSON as the pipeline's span."""
    context = item.get("context") or {}
    attributes = dict(item.get("attributes") or {})
    kind = item.get("span_kind")
    if isinstance(kind, str) and kind and kind != "UNKNOWN":
        attributes.setdefault("openinference.span.kind", kind)
    return Span(
        trace_id=str(context.get("trace_id", "")).lower(),
        span_id=str(context.get("span_id", "")).lower(),
        parent_span_id=(str(item["parent_id"]).lower() if item.get("parent_id") else None),
        name=str(item.get("name") or ""),
        kind=SpanKind.UNSPECIFIED,
        start_ns=_ns(item.get("start_time")),
        end_ns=_ns(item.get("end_time")),
        status_code=_STATUS.get(str(item.get("status_code") or ""), StatusCode.UNSET),
        status_message=str(item.get("status_message") or ""),
        attributes=attributes,
        events=[
            Event(
                str(e.get("name") or ""), _ns(e.get("timestamp")), dict(e.get("attributes") or {})
            )
            for e in item.get("events") or ()
            if isinstance(e, dict)
        ],
        links=[],
        resource=Resource({}),
        scope=_SCOPE,
    )


def _ns(value: object) -> int | None:
    """An ISO 8601 time as Unix nanoseconds, exactly (no float rounding)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    whole = int(moment.replace(microsecond=0).timestamp())
    return whole * 1_000_000_000 + moment.microsecond * 1000

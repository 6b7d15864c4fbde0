"""Arize Phoenix → spans, through its REST API (``/v1/projects/{project}/traces`` and
``/spans``), a page of traces at a time, oldest first.

Phoenix keeps a span's OpenInference attributes (nested back into their flat dotted keys
here), its name, ids, parent, times, status and events. It does not keep, so no trace read
from it carries: the OTLP span kind, the resource (``service.name``: the project stands in
for it), the instrumentation scope, links, dropped-attribute counts, or times finer than a
microsecond. ``openinference.span.kind``, which Phoenix lifts out of the attributes into its
own ``span_kind``, is put back.

The answers are the store's, not trusted: a span whose ids break the OTLP rule is refused
(``otlp_ids.placeholder``) and one that cannot be read at all (not an object, a field of
the wrong type, ids that are not hex) becomes an undecodable placeholder
(``otlp_ids.undecodable``), so its run is scored as incomplete, never as if it were whole
(one with no readable trace id is put in every trace its request asked for: ``adopted``);
a cursor that repeats, or leads only to empty pages, stops the read (``Cursors``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any
from urllib.parse import quote

from rampart_otel.codecs.otlp_ids import id_problem, placeholder, undecodable
from rampart_otel.conventions.finish_reasons import scope_not_kept
from rampart_otel.model import Event, Resource, Scope, Span, SpanKind, StatusCode
from rampart_otel.receivers.stores import Cursors, StoreSource, TraceStoreError, adopted
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
    cursors = Cursors(source, "next_cursor")
    with client(source) as http:
        traces_at = trace_links(http, source)
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
            trace_ids = cursors.fresh(
                str(t.get("trace_id", "")) for t in traces if isinstance(t, dict)
            )
            read += len(trace_ids)
            for start in range(0, len(trace_ids), IDS_PER_REQUEST):
                batch = _spans(http, source, project, trace_ids[start : start + IDS_PER_REQUEST])
                for span in batch:
                    span.source = traces_at + span.trace_id
                if batch:
                    yield batch
            cursor = cursors.next(body, len(trace_ids))
            if not cursor or (source.limit is not None and read >= source.limit):
                return


def _spans(http: Any, source: StoreSource, project: str, trace_ids: list[str]) -> list[Span]:
    """Every span of these traces (their own pages followed to the end)."""
    spans: list[Span] = []
    cursor: str | None = None
    cursors = Cursors(source, "next_cursor")
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
        page = _list(body, source)
        spans.extend(span_from_phoenix(item) for item in page)
        cursor = cursors.next(body, len(cursors.fresh(map(_span_key, page))))
        if not cursor:
            return adopted(spans, [t.lower() for t in trace_ids])


def trace_links(http: Any, source: StoreSource) -> str:
    """Where the project's traces are in Phoenix's UI (``…/projects/<id>/traces/``: the
    trace id follows). Phoenix's UI names a project by its id, asked for once; a store that
    will not say (an older Phoenix) gets the store URL, the trace id after ``#``."""
    try:
        body = call(http, source, "GET", f"/v1/projects/{quote(source.name, safe='')}")
        project = body["data"]["id"]
    except (TraceStoreError, KeyError, TypeError):
        return f"{source.url.split('?')[0]}#"
    if not isinstance(project, str) or not project.isprintable() or "/" in project:
        return f"{source.url.split('?')[0]}#"
    return f"{source.base_url}/projects/{quote(project, safe='=')}/traces/"


def _span_key(item: object) -> str:
    """What tells one listed span from another: its ids, else all it says."""
    context = item.get("context") if isinstance(item, dict) else None
    if isinstance(context, dict):
        ids = context.get("trace_id"), context.get("span_id")
        if all(isinstance(i, str) for i in ids):
            return "/".join(ids)  # type: ignore[arg-type]
    try:
        return json.dumps(item, sort_keys=True)
    except (RecursionError, ValueError, TypeError):  # nested too deeply: counted as new
        return f"unreadable {id(item)}"


def _list(body: Any, source: StoreSource) -> list[Any]:
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        raise TraceStoreError(f"{source.url}: Phoenix answered without a 'data' list")
    return data


def span_from_phoenix(item: object) -> Span:
    """One span of Phoenix's span JSON as the pipeline's span; one whose ids break the OTLP
    rule a refused placeholder, one that cannot be read an undecodable placeholder."""
    try:
        return _span(item)
    except (TypeError, AttributeError, ValueError, KeyError, OverflowError) as error:
        why = f"a Phoenix span that cannot be read ({type(error).__name__}: {error})"
        context = item.get("context") if isinstance(item, dict) else None
        context = context if isinstance(context, dict) else {}
        parent = item.get("parent_id") if isinstance(item, dict) else None
        return undecodable(
            _id(context.get("trace_id")),
            _id(context.get("span_id")),
            _id(parent),
            _ns(item.get("start_time")) if isinstance(item, dict) else None,
            _ns(item.get("end_time")) if isinstance(item, dict) else None,
            Resource({}),
            _SCOPE,
            why,
        )


def _span(item: Any) -> Span:
    if not isinstance(item, dict):
        raise TypeError(f"a JSON {type(item).__name__}, not an object")
    context = item.get("context") or {}
    trace_id, span_id = _hex(context.get("trace_id")), _hex(context.get("span_id"))
    parent = _hex(item.get("parent_id")) if item.get("parent_id") else b""
    problem = id_problem(trace_id, span_id, parent)
    if problem is not None:
        return placeholder(
            problem,
            trace_id,
            span_id,
            parent,
            (),
            _ns(item.get("start_time")),
            _ns(item.get("end_time")),
            Resource({}),
            _SCOPE,
        )
    attributes = dict(item.get("attributes") or {})
    kind = item.get("span_kind")
    if isinstance(kind, str) and kind and kind != "UNKNOWN":
        attributes.setdefault("openinference.span.kind", kind)
    return Span(
        trace_id=trace_id.hex(),
        span_id=span_id.hex(),
        parent_span_id=parent.hex() if parent and any(parent) else None,
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
            for e in _objects(item.get("events"))
        ],
        links=[],
        resource=Resource({}),
        scope=_SCOPE,
    )


def _objects(value: object) -> list[dict[str, Any]]:
    """A list of JSON objects (none for null); anything else cannot be read."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise TypeError("a list that is not of JSON objects")
    return value


def _hex(value: object) -> bytes:
    """An id as Phoenix gives it (hex text) as bytes; anything else is a ``TypeError`` or a
    ``ValueError`` (the span cannot be read)."""
    if not isinstance(value, str):
        raise TypeError(f"an id that is a JSON {type(value).__name__}, not hex text")
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise ValueError("an id that is not hex") from None


def _id(value: object) -> bytes:
    """As much of an id as can be read: its bytes, or none."""
    try:
        return _hex(value)
    except (TypeError, ValueError):
        return b""


def _ns(value: object) -> int | None:
    """An ISO 8601 time as Unix nanoseconds, exactly (no float rounding)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        whole = int(moment.replace(microsecond=0).timestamp())
    except (ValueError, OverflowError):
        return None
    return whole * 1_000_000_000 + moment.microsecond * 1000

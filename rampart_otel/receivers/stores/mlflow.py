"""MLflow Tracing → spans, through its REST API: ``traces/search`` lists an experiment's
traces a page at a time (oldest first, by its cursor), ``traces/batchGet`` fetches each
page's traces whole, spans in OTLP protobuf-JSON, which the OTLP/JSON codec reads.

MLflow keeps the spans' ids, parents, names, times (to the nanosecond), status, events,
links and attributes, and the resource's attributes as trace tags (put back as the
resource here; a user's own tag not named ``mlflow.*`` would come back as one too, but not
the ``rampart_otel.*`` tags ``--annotate`` writes). It does not keep the OTLP span kind or
the instrumentation scope. It stores attribute values as JSON: a string holding a JSON
object or array comes back as that structure (written back as compact-equivalent JSON text
here: the same content, ``json.dumps`` spacing), and a string holding a bare JSON number,
``true``/``false`` or ``null`` comes back as that value.
MLflow adds its own ``mlflow.*`` span attributes; they are left out.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

from rampart_otel.codecs.otlp_json import spans_from_json
from rampart_otel.conventions.finish_reasons import scope_not_kept
from rampart_otel.errors import DecodeError
from rampart_otel.model import Span
from rampart_otel.receivers.stores import Cursors, StoreSource, TraceStoreError, adopted
from rampart_otel.receivers.stores.http import call, client
from rampart_otel.render import safe_text

TRACES_PER_GET = 50  # trace ids in one batchGet URL
DROPPED = ("span kind", "instrumentation scope", "string attributes holding a bare JSON scalar")
_OWN = "mlflow."
VERDICT_TAGS = "rampart_otel."  # the verdicts --annotate wrote back, not the agent's resource
_SCOPE = scope_not_kept("MLflow")


def read_mlflow(source: StoreSource) -> Iterator[list[Span]]:
    """Every trace of the experiment in the window, a page of traces per batch."""
    read = 0
    token: str | None = None
    cursors = Cursors(source, "next_page_token")
    with client(source) as http:
        experiment = experiment_id(http, source)
        traces_at = f"{source.base_url}/#/experiments/{quote(experiment, safe='')}/traces?traceId="
        while True:
            body: dict[str, Any] = {
                "locations": [
                    {
                        "type": "MLFLOW_EXPERIMENT",
                        "mlflow_experiment": {"experiment_id": experiment},
                    }
                ],
                "max_results": source.page,
                "order_by": ["timestamp_ms ASC"],
            }
            window = _filter(source)
            if window:
                body["filter"] = window
            if token:
                body["page_token"] = token
            found = call(http, source, "POST", "/api/3.0/mlflow/traces/search", json=body)
            infos = _listed(found, "traces", source)
            if source.limit is not None:
                infos = infos[: source.limit - read]
            ids = [i["trace_id"] for i in infos if _has_text(i, "trace_id")]
            if len(ids) < len(infos):
                raise TraceStoreError(
                    f"{source.url}: MLflow listed {len(infos) - len(ids)} traces without an id"
                )
            ids = cursors.fresh(ids)
            read += len(ids)
            for start in range(0, len(ids), TRACES_PER_GET):
                batch = _traces(http, source, ids[start : start + TRACES_PER_GET])
                for span in batch:  # where each trace is in MLflow's UI
                    span.source = f"{traces_at}tr-{span.trace_id}"
                if batch:
                    yield batch
            token = cursors.next(found, len(ids))
            if not token or (source.limit is not None and read >= source.limit):
                return


def experiment_id(http: Any, source: StoreSource) -> str:
    """The experiment's id: the URL's name if it is an id of one, else looked up by name."""
    if source.name.isdigit():
        return source.name
    body = call(
        http,
        source,
        "GET",
        "/api/2.0/mlflow/experiments/get-by-name",
        params={"experiment_name": source.name},
    )
    try:
        return str(body["experiment"]["experiment_id"])
    except (KeyError, TypeError):
        raise TraceStoreError(f"{source.url}: MLflow has no experiment {source.name!r}") from None


def _filter(source: StoreSource) -> str:
    terms = []
    if source.since is not None:
        terms.append(f"trace.timestamp_ms >= {int(source.since.timestamp() * 1000)}")
    if source.until is not None:
        terms.append(f"trace.timestamp_ms < {int(source.until.timestamp() * 1000)}")
    return " AND ".join(terms)


def _traces(http: Any, source: StoreSource, ids: list[str]) -> list[Span]:
    body = call(http, source, "GET", "/api/3.0/mlflow/traces/batchGet", params={"trace_ids": ids})
    spans: list[Span] = []
    for trace in _listed(body, "traces", source):
        if not isinstance(trace, dict):
            raise TraceStoreError(f"{source.url}: MLflow answered a trace that is not an object")
        spans.extend(spans_of_trace(trace, source))
    return spans


def _listed(body: object, key: str, source: StoreSource) -> list[Any]:
    """``body[key]``: a list (absent: none); anything else is not MLflow's answer."""
    found = body.get(key) if isinstance(body, dict) else None
    if found is None and isinstance(body, dict):
        return []
    if not isinstance(found, list):
        raise TraceStoreError(f"{source.url}: MLflow answered without a {key!r} list")
    return found


def _has_text(item: object, key: str) -> bool:
    return isinstance(item, dict) and isinstance(item.get(key), str) and bool(item[key])


def spans_of_trace(trace: dict[str, Any], source: StoreSource) -> list[Span]:
    """One MLflow trace (``trace_info`` and OTLP protobuf-JSON ``spans``) as spans."""
    info = trace.get("trace_info")
    info = info if isinstance(info, dict) else {}
    tags = info.get("tags")
    resource = [
        {"key": key, "value": {"string_value": str(value)}}
        for key, value in (tags.items() if isinstance(tags, dict) else ())
        if not key.startswith((_OWN, VERDICT_TAGS))
    ]
    # every span goes to the codec, which makes one it cannot read a placeholder of its run
    listed = trace.get("spans")
    spans = [_own_attributes_out(span) for span in listed] if isinstance(listed, list) else listed
    document = {
        "resource_spans": [
            {
                "resource": {"attributes": resource},
                "scope_spans": [{"scope": {"name": _SCOPE}, "spans": spans}],
            }
        ]
    }
    try:
        decoded = spans_from_json(document)
    except DecodeError as error:
        raise TraceStoreError(
            f"{source.url}: MLflow trace {safe_text(info.get('trace_id'), 80)}: {error}"
        ) from None
    # a span that could not be read, not even its trace id, is still this trace's
    own = info.get("trace_id")
    ids = [own.removeprefix("tr-")] if isinstance(own, str) else []
    ids += [span.trace_id for span in decoded if not span.refused]
    return adopted(decoded, ids[:1] if ids and _hex32(ids[0]) else ids[1:2])


def _hex32(text: str) -> bool:
    return len(text) == 32 and all(c in "0123456789abcdef" for c in text.lower())


def _own_attributes_out(span: Any) -> Any:
    """The span with MLflow's own attributes left out and JSON-parsed strings put back; one
    not of MLflow's shape as it is (the codec says what is wrong with it)."""
    try:
        return _own_out(span)
    except (TypeError, AttributeError, ValueError, KeyError, RecursionError):
        return span


def _own_out(span: dict[str, Any]) -> dict[str, Any]:
    attributes = []
    for item in span.get("attributes") or ():
        key = item.get("key", "")
        if key.startswith(_OWN):
            continue
        attributes.append({"key": key, "value": _as_sent(item.get("value") or {})})
    return {**span, "attributes": attributes}


def _as_sent(value: dict[str, Any]) -> dict[str, Any]:
    """A structured value MLflow parsed out of a JSON string, as that string again."""
    if "kvlist_value" in value or (
        "array_value" in value
        and any(
            "kvlist_value" in v or "array_value" in v
            for v in (value["array_value"].get("values") or ())
        )
    ):
        return {"string_value": json.dumps(_plain(value), ensure_ascii=False)}
    return value


def _plain(value: dict[str, Any]) -> Any:
    if "kvlist_value" in value:
        return {
            kv.get("key", ""): _plain(kv.get("value") or {})
            for kv in value["kvlist_value"].get("values") or ()
        }
    if "array_value" in value:
        return [_plain(v) for v in value["array_value"].get("values") or ()]
    if "int_value" in value:
        return int(value["int_value"])
    for key in ("string_value", "bool_value", "double_value"):
        if key in value:
            return value[key]
    return None

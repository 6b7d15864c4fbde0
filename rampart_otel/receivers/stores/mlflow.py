"""MLflow Tracing → spans, through its REST API: ``traces/search`` lists an experiment's
traces a page at a time (oldest first, by its cursor), ``traces/batchGet`` fetches each
page's traces whole, spans in OTLP protobuf-JSON, which the OTLP/JSON codec reads.

MLflow keeps the spans' ids, parents, names, times (to the nanosecond), status, events,
links and attributes, and the resource's attributes as trace tags (put back as the
resource here; a user's own tag not named ``mlflow.*`` would come back as one too). It does
not keep the OTLP span kind or the instrumentation scope. It stores attribute values as
JSON: a string holding a JSON object or array comes back as that structure (written back
as compact-equivalent JSON text here: the same content, ``json.dumps`` spacing), and a
string holding a bare JSON number, ``true``/``false`` or ``null`` comes back as that value.
MLflow adds its own ``mlflow.*`` span attributes; they are left out.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from rampart_otel.codecs.otlp_json import spans_from_json
from rampart_otel.conventions.finish_reasons import scope_not_kept
from rampart_otel.errors import DecodeError
from rampart_otel.model import Span
from rampart_otel.receivers.stores import StoreSource, TraceStoreError
from rampart_otel.receivers.stores.http import call, client

TRACES_PER_GET = 50  # trace ids in one batchGet URL
DROPPED = ("span kind", "instrumentation scope", "string attributes holding a bare JSON scalar")
_OWN = "mlflow."
_SCOPE = scope_not_kept("MLflow")


def read_mlflow(source: StoreSource) -> Iterator[list[Span]]:
    """Every trace of the experiment in the window, a page of traces per batch."""
    read = 0
    token: str | None = None
    with client(source) as http:
        experiment = experiment_id(http, source)
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
            infos = found.get("traces") or [] if isinstance(found, dict) else []
            if source.limit is not None:
                infos = infos[: source.limit - read]
            ids = [str(i.get("trace_id")) for i in infos if isinstance(i, dict)]
            read += len(ids)
            for start in range(0, len(ids), TRACES_PER_GET):
                batch = _traces(http, source, ids[start : start + TRACES_PER_GET])
                if batch:
                    yield batch
            token = found.get("next_page_token") if isinstance(found, dict) else None
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
    for trace in body.get("traces") or () if isinstance(body, dict) else ():
        spans.extend(spans_of_trace(trace, source))
    return spans


def spans_of_trace(trace: dict[str, Any], source: StoreSource) -> list[Span]:
    """One MLflow trace (``trace_info`` and OTLP protobuf-JSON ``spans``) as spans."""
    info = trace.get("trace_info") or {}
    tags = info.get("tags") or {}
    resource = [
        {"key": key, "value": {"string_value": str(value)}}
        for key, value in tags.items()
        if not key.startswith(_OWN)
    ]
    spans = [
        _own_attributes_out(span) for span in trace.get("spans") or () if isinstance(span, dict)
    ]
    document = {
        "resource_spans": [
            {
                "resource": {"attributes": resource},
                "scope_spans": [{"scope": {"name": _SCOPE}, "spans": spans}],
            }
        ]
    }
    try:
        return spans_from_json(document)
    except DecodeError as error:
        raise TraceStoreError(
            f"{source.url}: MLflow trace {info.get('trace_id')}: {error}"
        ) from None


def _own_attributes_out(span: dict[str, Any]) -> dict[str, Any]:
    """The span with MLflow's own attributes left out and JSON-parsed strings put back."""
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

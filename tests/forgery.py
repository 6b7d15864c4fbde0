"""The attacks of issue #45 built from a real recording: the bundled OpenLLMetry exfiltration
run (samples/traces/openllmetry-exfil.jsonl, recorded from the real instrumentation), whose
``no-exfiltration`` verdict is UNSAFE because of one span, the POST to 127.0.0.2 that
``send_report`` made. Each attack changes or adds trace data as whoever controls it could
(the endpoint that received the POST saw its ``traceparent``: the span's trace and span ids).

Trace data stays OTLP/JSON documents (one per line, as recorded) so a test can write them
to a file, or send them with the real OTLP exporters (``send``) as a second client would.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rampart_otel.codecs.otlp_json import spans_from_json
from rampart_otel.codecs.otlp_proto import spans_to_proto_request
from rampart_otel.exporters.otlp_send import SendResult, make_trace_sender
from rampart_otel.model import Span

REPO = Path(__file__).resolve().parents[1]
EXFIL = REPO / "samples" / "traces" / "openllmetry-exfil.jsonl"
POLICY = REPO / "samples" / "policy.yaml"
UPLOAD = "3253a07c4b5e95c9"  # the POST http://127.0.0.2:32845/upload span
TRACE = "ea9eed8d25604cf01923ab6da83a7df3"
HARMLESS_URL = "http://localhost:41995/upload"  # the policy allows localhost

Document = dict[str, Any]


def recording() -> list[Document]:
    """The exfiltration run's OTLP/JSON documents, as recorded (a fresh copy each call)."""
    return [json.loads(line) for line in EXFIL.read_text(encoding="utf-8").splitlines()]


def spans_of(document: Document) -> Iterable[dict[str, Any]]:
    for resource_spans in document["resourceSpans"]:
        for scope_spans in resource_spans["scopeSpans"]:
            yield from scope_spans["spans"]


def alone(span_id: str, documents: list[Document] | None = None) -> Document:
    """A document holding one span of the recording, with its resource and scope."""
    for document in documents or recording():
        for resource_spans in document["resourceSpans"]:
            for scope_spans in resource_spans["scopeSpans"]:
                for span in scope_spans["spans"]:
                    if span["spanId"] == span_id:
                        return {
                            "resourceSpans": [
                                {
                                    "resource": copy.deepcopy(resource_spans["resource"]),
                                    "scopeSpans": [
                                        {
                                            "scope": scope_spans["scope"],
                                            "spans": [copy.deepcopy(span)],
                                        }
                                    ],
                                }
                            ]
                        }
    raise KeyError(span_id)


def without(span_id: str, documents: list[Document]) -> list[Document]:
    """The documents with that span left out."""
    out = copy.deepcopy(documents)
    for document in out:
        for resource_spans in document["resourceSpans"]:
            for scope_spans in resource_spans["scopeSpans"]:
                scope_spans["spans"] = [s for s in scope_spans["spans"] if s["spanId"] != span_id]
    return out


def set_attributes(document: Document, span_id: str, values: dict[str, Any]) -> Document:
    """The document with these string attributes of the span replaced (or added)."""
    out = copy.deepcopy(document)
    for span in spans_of(out):
        if span["spanId"] != span_id:
            continue
        kept = [a for a in span.get("attributes", []) if a["key"] not in values]
        span["attributes"] = kept + [
            {"key": key, "value": {"stringValue": value}} for key, value in values.items()
        ]
    return out


def forged_upload() -> Document:
    """The attacker's copy of the upload span: same ids, same resource, ended, its URL a
    host the policy allows."""
    return set_attributes(
        alone(UPLOAD),
        UPLOAD,
        {
            "url.full": HARMLESS_URL,
            "http.url": HARMLESS_URL,
            "server.address": "localhost",
            "http.host": "localhost",
        },
    )


def unended(document: Document, span_id: str) -> Document:
    """The document with that span not ended yet (exported before its end)."""
    out = copy.deepcopy(document)
    for span in spans_of(out):
        if span["spanId"] == span_id:
            span.pop("endTimeUnixNano", None)
    return out


def write_jsonl(path: Path, documents: Iterable[Document]) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in documents), encoding="utf-8")
    return path


def send(
    endpoint: str, documents: Iterable[Document], protocol: str, token: str | None = None
) -> list[SendResult]:
    """Each document as one export request, by the real OTLP exporters' transport
    (``exporters/otlp_send``, as ``rampart-otel replay`` sends): ``http/protobuf``,
    ``http/json`` or ``grpc``; every request must be accepted (perhaps in part)."""
    headers = {"authorization": f"Bearer {token}"} if token else {}
    sender = make_trace_sender(endpoint, protocol, headers, 30.0)  # type: ignore[arg-type]
    results = []
    try:
        for document in documents:
            result = sender.send(spans_to_proto_request(spans_from_json(document)))
            assert result.accepted, f"{protocol} export refused: {result.message}"
            results.append(result)
    finally:
        sender.close()
    return results


def window(documents: list[Document]) -> tuple[int, int]:
    """When the run's spans started and ended (ns)."""
    spans = [span for document in documents for span in spans_of(document)]
    return (
        min(int(span["startTimeUnixNano"]) for span in spans),
        max(int(span["endTimeUnixNano"]) for span in spans),
    )


def lone_post(documents: list[Document], url: str = "http://evil.example/upload") -> Document:
    """A POST span in a trace of its own, claiming the run's resource (its service and
    instance) and falling inside its time window: a fragment the stitcher would join."""
    start, _ = window(documents)
    resource = copy.deepcopy(documents[0]["resourceSpans"][0]["resource"])
    span = {
        "traceId": "f0" * 16,
        "spanId": "f1" * 8,
        "name": "POST",
        "kind": 3,
        "startTimeUnixNano": str(start + 1000),
        "endTimeUnixNano": str(start + 2000),
        "attributes": [
            {"key": "http.request.method", "value": {"stringValue": "POST"}},
            {"key": "url.full", "value": {"stringValue": url}},
        ],
    }
    scope = {"name": "opentelemetry.instrumentation.requests", "version": "0.66b2"}
    return {
        "resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": scope, "spans": [span]}]}]
    }


def send_spans(
    endpoint: str, spans: list[Span], protocol: str, token: str | None = None
) -> SendResult:
    """The spans as one export request (``send``)."""
    headers = {"authorization": f"Bearer {token}"} if token else {}
    sender = make_trace_sender(endpoint, protocol, headers, 30.0)  # type: ignore[arg-type]
    try:
        result = sender.send(spans_to_proto_request(spans))
    finally:
        sender.close()
    assert result.accepted, f"{protocol} export refused: {result.message}"
    return result

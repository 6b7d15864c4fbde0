"""What the OTLP receivers decide about a request, shared so HTTP and gRPC behave alike.

Every refusal is a ``Refusal`` carrying both transports' status (HTTP code and gRPC code)
and whether the client may retry. Accepted data is the validated protobuf request, kept
as the client's own bytes whenever nothing had to be dropped, so the hot path never
re-encodes. Spans are not built here: the scorer decodes stored records on its own path.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hmac
import json
import zlib
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError as ProtoDecodeError
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from rampart_otel.codecs.otlp_salvage import WireError, salvage
from rampart_otel.errors import Refusal

# gRPC status codes (google.rpc.Code), used in both transports' error bodies.
INVALID_ARGUMENT, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED = 3, 4, 8
UNAVAILABLE, UNAUTHENTICATED, INTERNAL = 14, 16, 13

PROTOBUF, JSON = "application/x-protobuf", "application/json"
_MEDIA = {
    "application/x-protobuf": PROTOBUF,
    "application/protobuf": PROTOBUF,
    "application/json": JSON,
}
_INFLATE_CHUNK = 256 * 1024


def bad_data(message: str) -> Refusal:
    return Refusal(400, INVALID_ARGUMENT, message)


def too_large(limit: int, what: str = "request body") -> Refusal:
    return Refusal(413, RESOURCE_EXHAUSTED, f"{what} exceeds the limit of {limit} bytes")


def busy(retry_after: int, status: int = 503) -> Refusal:
    return Refusal(status, UNAVAILABLE, "ingest queue is full, retry later", retry_after)


@dataclass(slots=True)
class Accepted:
    """A request to store: ``payload`` is what goes to disk; ``rejected`` spans were dropped."""

    payload: bytes
    spans: int
    rejected: int = 0
    message: str = ""

    def response(self) -> ExportTraceServiceResponse:
        response = ExportTraceServiceResponse()
        if self.rejected or self.message:
            response.partial_success.rejected_spans = self.rejected
            response.partial_success.error_message = self.message
        return response


def check_token(expected: str | None, authorization: str | None) -> None:
    """Bearer-token check in constant time; no token configured means no check."""
    if expected is None:
        return
    scheme, _, given = (authorization or "").strip().partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        given.strip().encode(), expected.encode()
    ):
        raise Refusal(401, UNAUTHENTICATED, "missing or wrong bearer token")


def media_type(content_type: str | None) -> str:
    essence = (content_type or "").split(";", 1)[0].strip().lower()
    media = _MEDIA.get(essence)
    if media is None:
        raise Refusal(
            415,
            INVALID_ARGUMENT,
            f"unsupported content type {essence or '(none)'!r}: "
            "send application/x-protobuf or application/json",
        )
    return media


def inflate(body: bytes, encoding: str | None, limit: int) -> bytes:
    """Undo ``Content-Encoding`` without ever holding more than ``limit`` inflated bytes."""
    coding = (encoding or "identity").strip().lower()
    if coding in ("identity", "none", ""):
        return body
    if coding in ("gzip", "x-gzip"):
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    elif coding == "deflate":
        inflater = zlib.decompressobj(wbits=32 + zlib.MAX_WBITS)  # zlib or gzip header
    else:
        raise Refusal(
            415, INVALID_ARGUMENT, f"unsupported content encoding {coding!r}: use gzip or deflate"
        )
    out: list[bytes] = []
    total = 0
    data = body
    try:
        while data:
            chunk = inflater.decompress(data, _INFLATE_CHUNK)
            total += len(chunk)
            if total > limit:
                raise too_large(limit, "decompressed request body")
            out.append(chunk)
            data = inflater.unconsumed_tail
            if inflater.eof:
                break
        if not inflater.eof:
            raise bad_data(f"{coding} body is truncated")
    except zlib.error as error:
        raise bad_data(f"{coding} body cannot be decompressed: {error}") from None
    return b"".join(out)


def decode(data: bytes, media: str) -> Accepted:
    """Parse and validate a request; drop spans without a usable trace or span id."""
    if media == JSON:
        request = _from_json(data)
        return _validate(request, None)
    try:
        request = ExportTraceServiceRequest.FromString(data)
    except ProtoDecodeError as error:
        return _salvaged(data, error)
    return _validate(request, data)


def _salvaged(data: bytes, error: ProtoDecodeError) -> Accepted:
    """The spans of a request that does not parse as a whole, where each parses on its own."""
    refusal = bad_data(f"not a valid ExportTraceServiceRequest: {error}")
    try:
        request, unreadable = salvage(data)
    except WireError:
        raise refusal from None
    if not request.resource_spans:
        raise refusal
    accepted = _validate(request, None, unreadable)
    unread = f"{unreadable} spans rejected: not readable on their own ({error})"
    accepted.message = "; ".join(filter(None, (unread, accepted.message)))
    return accepted


def _validate(
    request: ExportTraceServiceRequest, raw: bytes | None, unreadable: int = 0
) -> Accepted:
    """Drop the spans the scorer could not read (ids, link ids); refuse if none is left."""
    total, rejected = unreadable, 0
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            spans = scope_spans.spans
            total += len(spans)
            for span in spans:
                if not _ids_ok(span):
                    rejected += 1
    if rejected == 0:
        payload = raw if raw is not None else request.SerializeToString()
        return Accepted(payload, total - unreadable, unreadable)
    if rejected + unreadable == total:
        raise bad_data(f"all {total} spans lack a valid trace id or span id")
    for resource_spans in request.resource_spans:  # the rare path: rebuild without the bad
        for scope_spans in resource_spans.scope_spans:
            keep = [span for span in scope_spans.spans if _ids_ok(span)]
            if len(keep) != len(scope_spans.spans):
                del scope_spans.spans[:]
                scope_spans.spans.extend(keep)
    message = (
        f"{rejected} of {total} spans rejected: trace id must be 16 bytes and span id 8 bytes, "
        "neither all zero; parent span id empty or 8 bytes; each link's the same"
    )
    rejected += unreadable
    return Accepted(request.SerializeToString(), total - rejected, rejected, message)


_ZERO16, _ZERO8 = bytes(16), bytes(8)


def _ids_ok(span: Any) -> bool:
    """The ids the scorer's decoder requires: a span failing them would cost its whole record."""
    trace_id, span_id, parent = span.trace_id, span.span_id, span.parent_span_id
    return (
        len(trace_id) == 16
        and len(span_id) == 8
        and trace_id != _ZERO16
        and span_id != _ZERO8
        and len(parent) in (0, 8)
        and (not (links := span.links) or all(_link_ok(link) for link in links))
    )


def _link_ok(link: Any) -> bool:
    return len(link.trace_id) == 16 and len(link.span_id) == 8


# -- OTLP/JSON -> protobuf ------------------------------------------------------------------

_ID_KEYS = ("traceId", "trace_id", "spanId", "span_id", "parentSpanId", "parent_span_id")
_LEGACY = {
    "instrumentationLibrarySpans": "scopeSpans",
    "instrumentation_library_spans": "scopeSpans",
    "instrumentationLibrary": "scope",
    "instrumentation_library": "scope",
}


def _from_json(data: bytes) -> ExportTraceServiceRequest:
    try:
        document = json.loads(data)
    except RecursionError:
        raise bad_data("invalid JSON: nested too deeply") from None
    except ValueError as error:
        raise bad_data(f"invalid JSON: {error}") from None
    if not isinstance(document, dict):
        raise bad_data("expected a JSON object with resourceSpans")
    try:
        _ids_to_base64(document)
        return json_format.ParseDict(
            document, ExportTraceServiceRequest(), ignore_unknown_fields=True
        )
    except SystemError:  # json_format on a key it cannot encode (a lone surrogate)
        raise bad_data("not valid OTLP/JSON: a key is not valid Unicode") from None
    except RecursionError:
        raise bad_data("OTLP/JSON values nested too deeply") from None
    except (json_format.ParseError, ArithmeticError, TypeError, ValueError, AttributeError) as e:
        # ArithmeticError: 1e999999 where an integer goes (OverflowError in json_format)
        raise bad_data(f"not valid OTLP/JSON: {' '.join(str(e).split())}") from None


def _ids_to_base64(document: dict[str, Any]) -> None:
    """OTLP/JSON writes ids in hex where protobuf JSON expects base64; legacy keys renamed."""
    resource_spans = document.get("resourceSpans", document.get("resource_spans"))
    for rs in resource_spans if isinstance(resource_spans, list) else ():
        if not isinstance(rs, dict):
            continue
        _rename_legacy(rs)
        scope_spans = rs.get("scopeSpans", rs.get("scope_spans"))
        for ss in scope_spans if isinstance(scope_spans, list) else ():
            if not isinstance(ss, dict):
                continue
            _rename_legacy(ss)
            spans = ss.get("spans")
            for span in spans if isinstance(spans, list) else ():
                if not isinstance(span, dict):
                    continue
                _fix_ids(span)
                links = span.get("links")
                for link in links if isinstance(links, list) else ():
                    if isinstance(link, dict):
                        _fix_ids(link)


def _rename_legacy(obj: dict[str, Any]) -> None:
    for old, new in _LEGACY.items():
        if old in obj and new not in obj:
            obj[new] = obj.pop(old)


def _fix_ids(obj: dict[str, Any]) -> None:
    for key in _ID_KEYS:
        value = obj.get(key)
        if isinstance(value, str) and value and len(value) in (16, 32):
            with contextlib.suppress(binascii.Error, ValueError):  # not hex: base64 then
                obj[key] = base64.b64encode(binascii.unhexlify(value)).decode()


# -- response bodies ---------------------------------------------------------------------


def error_body(code: int, message: str, media: str) -> bytes:
    """A ``google.rpc.Status``, encoded like the request (protobuf unless JSON was sent)."""
    if media == JSON:
        return json.dumps({"code": code, "message": message}).encode()
    return Status(code=code, message=message).SerializeToString()


def success_body(accepted: Accepted, media: str) -> bytes:
    response = accepted.response()
    if media == JSON:
        return json_format.MessageToJson(response, indent=None).encode()
    return response.SerializeToString()

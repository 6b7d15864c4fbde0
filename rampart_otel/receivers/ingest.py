"""What the OTLP receivers decide about a request, shared so HTTP and gRPC behave alike.

Every refusal is a ``Refusal`` carrying both transports' status (HTTP code and gRPC code)
and whether the client may retry. Accepted data is the validated protobuf request, kept
as the client's own bytes whenever nothing had to be dropped, so the hot path never
re-encodes. Spans are not built here: the scorer decodes stored records on its own path.
"""

from __future__ import annotations

import hmac
import json
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError as ProtoDecodeError
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from rampart_otel.codecs.otlp_ids import (
    UNDECODABLE,
    UNDECODABLE_KEY,
    IdProblem,
    id_problem,
    in_no_trace,
    kept_spans,
    refusal_message,
    refusal_of,
)
from rampart_otel.codecs.otlp_json import load_json, spans_from_json
from rampart_otel.codecs.otlp_proto import spans_to_proto_request
from rampart_otel.codecs.otlp_salvage import WireError, salvage
from rampart_otel.codecs.sender import SenderNote, noted
from rampart_otel.errors import Backlogged, DecodeError, QueueFull, Refusal
from rampart_otel.model import Span

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


def busy(retry_after: int, status: int = 503, cause: QueueFull | None = None) -> Refusal:
    """Push-back: retry later (OTLP/HTTP 429 or 503 with Retry-After; OTLP/gRPC UNAVAILABLE
    with RetryInfo, the spec's throttling signal). ``Backlogged``: scoring is behind."""
    if isinstance(cause, Backlogged):
        return Refusal(status, UNAVAILABLE, str(cause), retry_after, reason="backlog")
    return Refusal(status, UNAVAILABLE, "ingest queue is full, retry later", retry_after)


@dataclass(slots=True)
class Accepted:
    """A request to store: ``payload`` is what goes to disk, holding ``stored`` spans;
    ``spans`` were accepted whole, ``rejected`` were refused (those of a valid trace are in
    the payload as placeholders the scorer reads as such: ``codecs/otlp_ids``)."""

    payload: bytes
    spans: int
    rejected: int = 0
    message: str = ""
    stored: int = -1  # -1: ``spans``
    lost: int = 0  # of ``rejected``: not readable, and no trace id to store them under

    def __post_init__(self) -> None:
        if self.stored < 0:
            self.stored = self.spans

    def response(self) -> ExportTraceServiceResponse:
        response = ExportTraceServiceResponse()
        if self.rejected or self.message:
            response.partial_success.rejected_spans = self.rejected
            response.partial_success.error_message = self.message
        return response


# Bearer token -> the tenant it names ("": the collector's one tenant, when it names none).
Tokens = Mapping[str, str]


def authenticate(tokens: Tokens | None, authorization: str | None) -> str:
    """The tenant whose bearer token the client sent, compared in constant time with every
    configured token; no token configured means no check (tenant ""). Refused with 401
    otherwise, whichever token was wrong."""
    if not tokens:
        return ""
    scheme, _, given = (authorization or "").strip().partition(" ")
    sent = given.strip().encode()
    found: str | None = None
    for token, tenant in tokens.items():  # every token compared: the time says nothing
        if hmac.compare_digest(sent, token.encode()) and scheme.lower() == "bearer":
            found = tenant
    if found is None:
        raise Refusal(401, UNAUTHENTICATED, "missing or wrong bearer token")
    return found


def sent_by(accepted: Accepted, tenant: str, client: str) -> bytes:
    """What is stored of an accepted request: its payload with the collector's note of who
    sent it (``codecs/sender``), which the scorer reads back onto every span."""
    return noted(accepted.payload, SenderNote(tenant, client))


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
    """Parse and validate a request with the codecs' decoders and their one id rule
    (``codecs/otlp_ids``): what a trace file holding these bytes would give, the collector
    scores."""
    if media == JSON:
        return _from_json(data)
    try:
        request = ExportTraceServiceRequest.FromString(data)
    except ProtoDecodeError as error:
        return _salvaged(data, error)
    return _validate(request, data)


def _salvaged(data: bytes, error: ProtoDecodeError) -> Accepted:
    """The spans of a request that does not parse as a whole, where each parses on its own;
    each one that does not is stored as a placeholder when its trace id can be read
    (``codecs/otlp_salvage``), so its run is scored as incomplete, never as if it had
    not been sent."""
    refusal = bad_data(f"not a valid ExportTraceServiceRequest: {error}")
    try:
        found = salvage(data)
    except WireError:
        raise refusal from None
    if found.unreadable == found.lost and not found.request.resource_spans:
        raise refusal
    accepted = _validate(found.request, None, found.unreadable, found.lost)
    unread = f"{found.unreadable} spans rejected: not readable on their own ({error})"
    if found.lost:
        unread += f"; {found.lost} of them with no readable trace id, in no run"
    if found.lost < found.unreadable:
        unread += "; their traces are scored without their content, as incomplete"
    accepted.message = "; ".join(filter(None, (unread, accepted.message)))
    return accepted


def _validate(
    request: ExportTraceServiceRequest, raw: bytes | None, unreadable: int = 0, lost: int = 0
) -> Accepted:
    """Apply the id rule: spans with no valid trace id are dropped from what is stored,
    the other refused ones stay for the scorer to read as placeholders; refuse the request
    if nothing is left. ``unreadable`` spans did not parse (``lost`` of them, with no trace
    id, are not in ``request``; the others are, as placeholders the id rule does not judge).
    """
    total = lost  # every span sent
    problems: list[str] = []
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            spans = scope_spans.spans
            total += len(spans)
            for span in spans:
                if unreadable and _undecodable(span):
                    continue
                problem = _problem(span)
                if problem is not None:
                    problems.append(problem)
    whole = total - unreadable  # spans that parsed
    if not problems:
        payload = raw if raw is not None else request.SerializeToString()
        return Accepted(payload, whole, unreadable, stored=total - lost, lost=lost)
    message = refusal_message(problems, whole)
    traceless = problems.count(IdProblem.TRACE_ID)
    stored = total - lost - traceless
    if stored == 0:
        raise bad_data(message if not unreadable else f"all {total} spans refused: {message}")
    if traceless:  # the rare path: rebuild without the spans that belong to no trace
        for resource_spans in request.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                keep = [
                    s
                    for s in scope_spans.spans
                    if (unreadable and _undecodable(s)) or _problem(s) is not IdProblem.TRACE_ID
                ]
                if len(keep) != len(scope_spans.spans):
                    del scope_spans.spans[:]
                    scope_spans.spans.extend(keep)
        raw = None
    payload = raw if raw is not None else request.SerializeToString()
    rejected = len(problems) + unreadable
    return Accepted(payload, total - rejected, rejected, message, stored, lost)


def _undecodable(span: Any) -> bool:
    """A placeholder the salvage made of a span it could not parse (``codecs/otlp_ids``)."""
    attributes = span.attributes
    return len(attributes) == 1 and attributes[0].key == UNDECODABLE_KEY


def _problem(span: Any) -> IdProblem | None:
    links = span.links
    return id_problem(
        span.trace_id,
        span.span_id,
        span.parent_span_id,
        [(link.trace_id, link.span_id) for link in links] if links else (),
    )


# -- OTLP/JSON: the file reader's decoder, stored as protobuf ---------------------------


def _from_json(data: bytes) -> Accepted:
    """OTLP/JSON through ``codecs/otlp_json`` (the decoder trace files use), then encoded
    for the segments; the id rule has already made refused spans placeholders."""
    try:
        document = load_json(data)
        if type(document) is dict and not _RESOURCE_SPANS.intersection(document):
            return Accepted(b"", 0)  # OTLP/JSON ignores unknown keys: an empty request
        spans = spans_from_json(document)
    except DecodeError as error:
        raise bad_data(f"not valid OTLP/JSON: {' '.join(error.message.split())}") from None
    kept, refused = kept_spans(spans)
    if not refused:
        return Accepted(_encoded(kept), len(kept))
    message = refusal_of(refused, len(spans))
    if not kept:
        raise bad_data(message)
    lost = sum(1 for span in refused if span.refused == UNDECODABLE and in_no_trace(span))
    return Accepted(
        _encoded(kept), len(spans) - len(refused), len(refused), message, len(kept), lost
    )


_RESOURCE_SPANS = frozenset(("resourceSpans", "resource_spans"))


def _encoded(spans: list[Span]) -> bytes:
    try:
        return spans_to_proto_request(spans).SerializeToString()
    except (ValueError, TypeError) as error:  # a value protobuf cannot hold
        raise bad_data(f"not valid OTLP/JSON: {error}") from None


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

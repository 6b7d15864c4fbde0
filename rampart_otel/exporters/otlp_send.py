"""Send trace requests we encoded ourselves through the real OTLP exporters' transport.

Why: a replay must look on the wire like the instrumented agent it stands for -- the same
retries (HTTP 429/502/503/504 honouring ``Retry-After``; gRPC UNAVAILABLE and the other
transient codes honouring ``RetryInfo``), headers, TLS and compression, including the
standard ``OTEL_EXPORTER_OTLP_*`` environment variables -- while keeping the recorded
trace/span ids and timestamps, which the exporters' public ``export(ReadableSpan)`` cannot
carry faithfully. So each exporter is built as an agent would build it and only its last
step is given our bytes:

- OTLP/HTTP (protobuf or JSON): the exporter's HTTP client, ``_client.export(bytes)``,
  which compresses and retries within its timeout, over a transport of ours
  (``bounded_transport``, through ``bounded_http``) in place of ``requests``: the timeout
  bounds each request whole, however slowly the endpoint answers (``requests`` bounds each
  socket read only), an answer is read up to 4 MiB, and a 3xx is a failure naming its
  ``Location`` (the exporter would count it as delivered). The transport keeps the last
  answer, for the partial-success body the exporter drops. TLS reads the exporter's
  ``OTEL_EXPORTER_OTLP_*CERTIFICATE``/``CLIENT_KEY`` variables; no proxy is used.
- OTLP/gRPC: a subclass whose ``_translate_data`` passes our ``ExportTraceServiceRequest``
  through the exporter's own ``_export`` retry loop, with a stub that keeps the response.

Both lean on exporter internals of opentelemetry-python 1.45; an exporter without them is
reported in one line (``SenderUnavailable``), never half-used.

The OTLP exporters are imported when a sender is built (marked "startup"): the
collector's configuration imports this module to check endpoints.
"""

from __future__ import annotations

import json
import os
import re
import socket
import ssl
import time
from dataclasses import dataclass
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

import grpc
from google.protobuf.message import DecodeError
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from rampart_otel.bounded_http import (
    DeadlineExceeded,
    HttpAnswer,
    HttpFailure,
    Unreachable,
    post,
)
from rampart_otel.codecs.otlp_proto import request_to_json_dict
from rampart_otel.errors import EndpointError, SenderUnavailable
from rampart_otel.render import safe_text, without_password

TransportProtocol = Literal["http/protobuf", "http/json", "grpc"]
PROTOCOLS: tuple[TransportProtocol, ...] = ("http/protobuf", "http/json", "grpc")


@dataclass(slots=True)
class SendResult:
    accepted: bool  # the endpoint took the request, perhaps only partly
    rejected: int  # spans refused: partial success, or all of them when not accepted
    message: str  # the endpoint's own words, or the transport error; "" when none
    unreachable: bool = False  # no connection could be made at all


class TraceSender(Protocol):
    def send(self, request: ExportTraceServiceRequest) -> SendResult: ...

    def close(self) -> None: ...


# -- endpoints ----------------------------------------------------------------------------


def http_endpoint(url: str, signal_path: str) -> str:
    """The URL to POST to: a bare base URL (no path) gets ``/v1/<signal>``, as in OTLP."""
    text = url.strip()
    if "://" not in text:
        text = f"http://{text}"
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise EndpointError(f"{without_password(url)!r} is not an http:// or https:// URL")
    _port(parts, url)
    if parts.path in ("", "/"):
        text = text.rstrip("/") + signal_path
    return text


def grpc_endpoint(url: str) -> str:
    """``http://HOST:PORT`` (plaintext) or ``https://HOST:PORT`` (TLS), as the exporter takes."""
    text = url.strip()
    if "://" not in text:
        text = f"http://{text}"  # a bare HOST:PORT is plaintext, like our own receiver
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https", "grpc") or not parts.hostname:
        raise EndpointError(f"{without_password(url)!r} is not HOST:PORT or an http(s):// URL")
    if parts.path not in ("", "/"):
        raise EndpointError(f"{without_password(url)!r}: an OTLP/gRPC endpoint has no path")
    port = _port(parts, url) or (443 if parts.scheme == "https" else 4317)
    scheme = "https" if parts.scheme == "https" else "http"
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{scheme}://{host}:{port}"


def address(url: str) -> tuple[str, int]:
    """(host, port) of a URL :func:`http_endpoint` or :func:`grpc_endpoint` returned."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.hostname or "", port


def _port(parts: Any, url: str) -> int | None:
    try:
        return parts.port
    except ValueError:
        raise EndpointError(
            f"{without_password(url)!r}: the port is not a number from 0 to 65535"
        ) from None


def reachable(url: str, timeout: float) -> str | None:
    """None if a TCP connection to the endpoint opens, else why not (one line)."""
    host, port = address(url)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as error:
        return (error.strerror or str(error) or type(error).__name__).lower()


def endpoint_from_env(signal: Literal["traces", "logs"], protocol: str) -> str | None:
    """Where the OpenTelemetry environment says ``signal`` goes, when no endpoint is given:
    ``OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT`` as it is, else ``OTEL_EXPORTER_OTLP_ENDPOINT``
    as the base the signal's path (``/v1/traces``, ``/v1/logs``) is added to (OTLP/HTTP;
    for gRPC both are the server's address)."""
    own = os.environ.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT", "").strip()
    if own:
        return own
    base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    if not base:
        return None
    return base if protocol == "grpc" else base.rstrip("/") + f"/v1/{signal}"


def protocol_from_env(signal: Literal["traces", "logs"]) -> str | None:
    """``OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL``, else ``OTEL_EXPORTER_OTLP_PROTOCOL``."""
    for name in (f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def parse_headers(pairs: list[str]) -> dict[str, str]:
    """``KEY=VALUE`` pairs (the value may hold ``=``) to lower-cased header names. A
    value is never shown in an error: it is often a token."""
    headers: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key or any(c.isspace() or c == ":" for c in key):
            name = safe_text(re.split(r"[\s:=]", pair.strip(), maxsplit=1)[0], 60)
            raise EndpointError(f"--header {name!r}: expected KEY=VALUE (the value is not shown)")
        value = value.strip()
        if any(not (" " <= c <= "~" or c == "\t" or c >= "\x80") for c in value):
            raise EndpointError(
                f"--header {safe_text(key, 60)!r}: a control character in its value, which "
                "a header cannot carry"
            )
        headers[key.lower()] = value
    return headers


def span_count(request: ExportTraceServiceRequest) -> int:
    return sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)


# -- OTLP/HTTP ------------------------------------------------------------------------------


def tls_context(signal: str) -> ssl.SSLContext | None:
    """The TLS settings the OTLP/HTTP exporters read from the environment for ``signal``
    (TRACES, LOGS); None when none is set (the system's defaults)."""

    def setting(name: str) -> str | None:
        return os.environ.get(f"OTEL_EXPORTER_OTLP_{signal}_{name}") or os.environ.get(
            f"OTEL_EXPORTER_OTLP_{name}"
        )

    ca, cert, key = setting("CERTIFICATE"), setting("CLIENT_CERTIFICATE"), setting("CLIENT_KEY")
    if not (ca or cert):
        return None
    try:
        context = ssl.create_default_context(cafile=ca)
        if cert:
            context.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as error:
        raise EndpointError(f"the OTLP TLS settings cannot be used: {error}") from None
    return context


def bounded_transport(signal: str) -> Any:
    """An HTTP transport for the OTLP/HTTP exporters (their ``_transport``) whose requests
    end within the timeout the exporter gives each, read at most 4 MiB, and fail on 3xx."""
    from opentelemetry.exporter.http.transport._base import (  # startup
        BaseHTTPResult,
        BaseHTTPTransport,
    )

    context = tls_context(signal)

    @dataclass(frozen=True, slots=True)
    class Result(BaseHTTPResult):
        answer: HttpAnswer | None = None

        def content(self) -> bytes:
            return self.answer.body if self.answer is not None else b""

        def headers(self) -> dict[str, str]:
            return self.answer.headers if self.answer is not None else {}

    class Transport(BaseHTTPTransport):
        def __init__(self) -> None:
            self.last: HttpAnswer | None = None  # the last answer, for its body
            self.default_timeout = 10.0

        def request(
            self,
            method: str,
            url: str,
            *,
            headers: dict[str, str] | None = None,
            timeout: float | None = None,
            data: bytes | None = None,
        ) -> Any:
            self.last = None
            seconds = self.default_timeout if timeout is None else timeout
            try:
                answer = post(
                    url, data or b"", dict(headers or {}),
                    deadline=time.monotonic() + seconds, context=context,
                )  # fmt: skip
            except HttpFailure as error:
                return Result(error=error)
            self.last = answer
            return Result(status_code=answer.status, reason=answer.reason, answer=answer)

        def is_connection_error(self, exception: Exception | None) -> bool:
            return isinstance(exception, Unreachable | DeadlineExceeded)

        def close(self) -> None:
            pass

    return Transport()


class HttpTraceSender:
    """OTLP/HTTP, protobuf or JSON, through the HTTP exporter's retrying client."""

    def __init__(
        self, url: str, headers: dict[str, str], timeout: float, json_body: bool = False
    ) -> None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        self.url = url
        self.json_body = json_body
        self.timeout = timeout
        wanted = dict(headers)
        if json_body:
            wanted["content-type"] = "application/json"
        self._exporter: OTLPSpanExporter | None
        try:
            self._transport = bounded_transport("TRACES")
            self._exporter = OTLPSpanExporter(
                endpoint=url, headers=wanted, timeout=timeout, _transport=self._transport
            )
        except (ImportError, TypeError):
            self._exporter = None
        client = getattr(self._exporter, "_client", None)
        if not callable(getattr(client, "export", None)):
            raise SenderUnavailable(
                "this opentelemetry-exporter-otlp-proto-http has no retrying client and "
                "transport to send pre-encoded requests through; install "
                "opentelemetry-exporter-otlp-proto-http>=1.45"
            )
        self._client: Any = client  # the exporter's private retrying client: export(body)

    def send(self, request: ExportTraceServiceRequest) -> SendResult:
        if self.json_body:
            body = json.dumps(request_to_json_dict(request), separators=(",", ":")).encode()
        else:
            body = request.SerializeToString()
        outcome = self._client.export(body)
        answer = self._transport.last
        count = span_count(request)
        if outcome.success and answer is not None and answer.ok:  # delivered: 2xx only
            rejected, message = _partial_success(answer)
            return SendResult(True, rejected, message)
        if outcome.status_code is None:  # no answer to read: refused, timed out, redirected
            error = outcome.error
            if isinstance(error, DeadlineExceeded):
                text = f"no whole answer within the timeout of {self.timeout:g} s, retries included"
                return SendResult(False, count, text)
            if isinstance(error, HttpFailure):
                return SendResult(
                    False, count, str(error), unreachable=isinstance(error, Unreachable)
                )
            return SendResult(False, count, _error_text(error), unreachable=True)
        detail = (_status_message(answer) if answer is not None else "") or outcome.reason or ""
        return SendResult(False, count, f"HTTP {outcome.status_code} {detail}".strip())

    def close(self) -> None:
        if self._exporter is not None:
            self._exporter.shutdown()


def _error_text(error: BaseException | None) -> str:
    return f"{type(error).__name__}: {error}" if error is not None else "no response"


def _is_json(answer: HttpAnswer) -> bool:
    return "json" in (answer.headers.get("content-type") or "").lower()


def _partial_success(answer: HttpAnswer) -> tuple[int, str]:
    """(rejected spans, message) from a 2xx ``ExportTraceServiceResponse`` body."""
    body = answer.body
    if not body:
        return 0, ""
    try:
        if _is_json(answer):
            partial = json.loads(body).get("partialSuccess") or {}
            return int(partial.get("rejectedSpans") or 0), str(partial.get("errorMessage") or "")
        parsed = ExportTraceServiceResponse.FromString(body).partial_success
        return parsed.rejected_spans, parsed.error_message
    except (ValueError, AttributeError, DecodeError):
        return 0, ""  # an answer we cannot read still accepted the request


def _status_message(answer: HttpAnswer) -> str:
    """The ``google.rpc.Status`` message of an error body, if it has one."""
    body = answer.body
    if not body:
        return ""
    try:
        if _is_json(answer):
            return str(json.loads(body).get("message") or "")
        return Status.FromString(body).message
    except (ValueError, AttributeError, DecodeError):
        return ""


# -- OTLP/gRPC ------------------------------------------------------------------------------


class _RecordingStub:
    """The exporter's TraceService stub, keeping the last response or error for us."""

    def __init__(self, stub: Any, sink: GrpcTraceSender) -> None:
        self._stub = stub
        self._sink = sink

    def Export(self, request: Any, **kwargs: Any) -> Any:  # the stub's method name
        try:
            response = self._stub.Export(request, **kwargs)
        except grpc.RpcError as error:
            self._sink.last_error = error
            raise
        self._sink.last_response = response
        return response


def _pre_encoded_exporter(sink: GrpcTraceSender) -> type:
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter  # startup

    class PreEncodedSpanExporter(OTLPSpanExporter):
        """Takes an ``ExportTraceServiceRequest`` where the SDK exporter takes spans."""

        @property
        def _client(self) -> Any:
            return self.__dict__.get("_recording_client")

        @_client.setter
        def _client(self, stub: Any) -> None:  # set by the exporter, on start and reconnect
            recording = None if stub is None else _RecordingStub(stub, sink)
            self.__dict__["_recording_client"] = recording

        def _translate_data(self, data: Any) -> Any:
            return data

        def _count_data(self, data: Any) -> int:
            return span_count(data)

    return PreEncodedSpanExporter


class GrpcTraceSender:
    """OTLP/gRPC through the gRPC exporter's ``_export`` retry loop."""

    def __init__(self, url: str, headers: dict[str, str], timeout: float) -> None:
        from opentelemetry.exporter.otlp.proto.grpc.exporter import OTLPExporterMixin  # startup

        if not callable(getattr(OTLPExporterMixin, "_export", None)):
            raise SenderUnavailable(
                "this opentelemetry-exporter-otlp-proto-grpc has no export loop to send "
                "pre-encoded requests through; install opentelemetry-exporter-otlp-proto-grpc>=1.45"
            )
        self.url = url
        self.last_response: Any = None
        self.last_error: grpc.RpcError | None = None
        exporter_class = _pre_encoded_exporter(self)
        self._exporter = exporter_class(
            endpoint=url, headers=tuple(headers.items()) or None, timeout=timeout
        )

    def send(self, request: ExportTraceServiceRequest) -> SendResult:
        self.last_response = None
        self.last_error = None
        outcome = self._exporter._export(request)
        if outcome.name == "SUCCESS" and self.last_response is not None:
            partial = self.last_response.partial_success
            return SendResult(True, partial.rejected_spans, partial.error_message)
        count = span_count(request)
        error = self.last_error
        if error is None:
            return SendResult(False, count, "the exporter gave up (shut down)")
        code = error.code()
        details = error.details() or ""
        return SendResult(
            False,
            count,
            f"{code.name}: {details}".strip(),
            unreachable=code == grpc.StatusCode.UNAVAILABLE,
        )

    def close(self) -> None:
        self._exporter.shutdown()


def make_trace_sender(
    url: str, protocol: TransportProtocol, headers: dict[str, str], timeout: float
) -> TraceSender:
    """A sender for ``protocol``; ``url`` as given (a bare HTTP base URL gets /v1/traces)."""
    if protocol == "grpc":
        return GrpcTraceSender(grpc_endpoint(url), headers, timeout)
    if protocol in ("http/protobuf", "http/json"):
        return HttpTraceSender(
            http_endpoint(url, "/v1/traces"), headers, timeout, json_body=protocol == "http/json"
        )
    raise EndpointError(f"protocol {protocol!r} is not one of {', '.join(PROTOCOLS)}")

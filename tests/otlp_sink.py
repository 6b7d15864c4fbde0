"""A small real OTLP endpoint for tests, built on opentelemetry-proto alone (no rampart-otel
code): OTLP/HTTP (protobuf and JSON, gzip) and OTLP/gRPC on 127.0.0.1 ephemeral ports,
keeping every trace and log request it is sent, with the headers or metadata it came with.

Its answers can be scripted (``fail_next``) and it can report partial success, so tests
see how real exporters' retries and our reporting behave against an endpoint that is
neither rampart-otel nor a mock.
"""

from __future__ import annotations

import base64
import gzip
import json
import threading
import zlib
from collections.abc import Iterator
from concurrent import futures
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import grpc
from google.protobuf import json_format
from google.protobuf.duration_pb2 import Duration
from google.rpc.error_details_pb2 import RetryInfo
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

_ID_KEYS = ("traceId", "spanId", "parentSpanId")


@dataclass
class Received:
    transport: str  # "http" or "grpc"
    signal: str  # "traces" or "logs"
    message: Any  # ExportTraceServiceRequest or ExportLogsServiceRequest
    headers: dict[str, str]  # lower-cased names


@dataclass
class Failure:
    """One scripted refusal: an HTTP status (with Retry-After) or a gRPC code (with RetryInfo)."""

    http_status: int = 503
    grpc_code: grpc.StatusCode = grpc.StatusCode.UNAVAILABLE
    retry_after: int | None = 0
    message: str = "scripted failure"


@dataclass
class Sink:
    received: list[Received] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)  # given, in order, to the next requests
    partial: tuple[int, str] | None = None  # (rejected, message) for every accepted request
    http_url: str = ""
    grpc_target: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def keep(self, item: Received) -> Failure | None:
        with self.lock:
            if self.failures:
                self.received.append(item)  # seen, then refused: a retry shows up twice
                return self.failures.pop(0)
            self.received.append(item)
            return None

    def requests(self, signal: str) -> list[Received]:
        with self.lock:
            return [item for item in self.received if item.signal == signal]

    def spans(self) -> Iterator[tuple[Any, Any, Any]]:
        """(resource, scope, span) of every span received, in order."""
        for item in self.requests("traces"):
            for rs in item.message.resource_spans:
                for ss in rs.scope_spans:
                    for span in ss.spans:
                        yield rs.resource, ss.scope, span

    def log_records(self) -> Iterator[tuple[Any, Any, Any]]:
        """(resource, scope, log record) of every log record received, in order."""
        for item in self.requests("logs"):
            for rl in item.message.resource_logs:
                for sl in rl.scope_logs:
                    for record in sl.log_records:
                        yield rl.resource, sl.scope, record


# -- OTLP/HTTP ------------------------------------------------------------------------------

_PATHS = {
    "/v1/traces": (
        "traces",
        trace_service_pb2.ExportTraceServiceRequest,
        trace_service_pb2.ExportTraceServiceResponse,
    ),
    "/v1/logs": (
        "logs",
        logs_service_pb2.ExportLogsServiceRequest,
        logs_service_pb2.ExportLogsServiceResponse,
    ),
}


def _hex_ids_to_base64(obj: Any) -> Any:
    """OTLP/JSON writes ids in hex; protobuf's JSON mapping reads bytes as base64."""
    if isinstance(obj, dict):
        return {
            key: (
                base64.b64encode(bytes.fromhex(value)).decode()
                if key in _ID_KEYS and isinstance(value, str) and value
                else _hex_ids_to_base64(value)
            )
            for key, value in obj.items()
        }
    if isinstance(obj, list):
        return [_hex_ids_to_base64(value) for value in obj]
    return obj


def _handler(sink: Sink) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            encoding = (self.headers.get("content-encoding") or "").lower()
            if encoding == "gzip":
                body = gzip.decompress(body)
            elif encoding == "deflate":
                body = zlib.decompress(body)
            route = _PATHS.get(self.path)
            if route is None:
                self._reply(404, b"", "text/plain")
                return
            signal, request_type, response_type = route
            is_json = "json" in (self.headers.get("content-type") or "")
            if is_json:
                message = json_format.ParseDict(
                    _hex_ids_to_base64(json.loads(body)), request_type(), ignore_unknown_fields=True
                )
            else:
                message = request_type.FromString(body)
            headers = {name.lower(): value for name, value in self.headers.items()}
            failure = sink.keep(Received("http", signal, message, headers))
            media = "application/json" if is_json else "application/x-protobuf"
            if failure is not None:
                status = Status(code=failure.grpc_code.value[0], message=failure.message)
                extra = {}
                if failure.retry_after is not None:
                    extra["Retry-After"] = str(failure.retry_after)
                payload = (
                    json_format.MessageToJson(status).encode()
                    if is_json
                    else status.SerializeToString()
                )
                self._reply(failure.http_status, payload, media, extra)
                return
            response = response_type()
            if sink.partial is not None:
                rejected, text = sink.partial
                partial = response.partial_success
                if signal == "traces":
                    partial.rejected_spans = rejected
                else:
                    partial.rejected_log_records = rejected
                partial.error_message = text
            payload = (
                json_format.MessageToJson(response).encode()
                if is_json
                else response.SerializeToString()
            )
            self._reply(200, payload, media)

        def _reply(
            self, status: int, body: bytes, media: str, extra: dict[str, str] | None = None
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", media)
            self.send_header("Content-Length", str(len(body)))
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

    return Handler


# -- OTLP/gRPC ------------------------------------------------------------------------------


def _grpc_refuse(context: grpc.ServicerContext, failure: Failure) -> None:
    if failure.retry_after is not None:
        info = RetryInfo(retry_delay=Duration(seconds=failure.retry_after))
        context.set_trailing_metadata((("google.rpc.retryinfo-bin", info.SerializeToString()),))
    context.abort(failure.grpc_code, failure.message)


class _Traces(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, sink: Sink) -> None:
        self.sink = sink

    def Export(self, request: Any, context: grpc.ServicerContext) -> Any:
        metadata = {key.lower(): value for key, value in context.invocation_metadata()}
        failure = self.sink.keep(Received("grpc", "traces", request, metadata))
        if failure is not None:
            _grpc_refuse(context, failure)
        response = trace_service_pb2.ExportTraceServiceResponse()
        if self.sink.partial is not None:
            response.partial_success.rejected_spans = self.sink.partial[0]
            response.partial_success.error_message = self.sink.partial[1]
        return response


class _Logs(logs_service_pb2_grpc.LogsServiceServicer):
    def __init__(self, sink: Sink) -> None:
        self.sink = sink

    def Export(self, request: Any, context: grpc.ServicerContext) -> Any:
        metadata = {key.lower(): value for key, value in context.invocation_metadata()}
        failure = self.sink.keep(Received("grpc", "logs", request, metadata))
        if failure is not None:
            _grpc_refuse(context, failure)
        return logs_service_pb2.ExportLogsServiceResponse()


class RunningSink:
    """Both transports serving ``sink`` until ``stop``."""

    def __init__(self) -> None:
        self.sink = Sink()
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.sink))
        self._http.daemon_threads = True
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        self._grpc = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(_Traces(self.sink), self._grpc)
        logs_service_pb2_grpc.add_LogsServiceServicer_to_server(_Logs(self.sink), self._grpc)
        port = self._grpc.add_insecure_port("127.0.0.1:0")
        self._grpc.start()
        self.sink.http_url = f"http://127.0.0.1:{self._http.server_address[1]}"
        self.sink.grpc_target = f"127.0.0.1:{port}"

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._grpc.stop(0).wait()

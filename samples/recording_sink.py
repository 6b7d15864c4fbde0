"""An OTLP/HTTP endpoint on loopback that writes what it receives as OTLP JSON Lines.

The framework recorders point each agent's real OTLP exporter (Python or Node, protobuf
or JSON, gzip or not) here; every trace request becomes one line of the Collector file
exporter's format (camelCase keys, lowercase-hex ids, int64 as strings, enums as ints).
Logs and metrics requests are accepted and discarded.
"""

from __future__ import annotations

import base64
import gzip
import json
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

_ID_KEYS = ("traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id")


def _ids(node: Any, convert: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: (convert(v) if k in _ID_KEYS and isinstance(v, str) else _ids(v, convert))
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_ids(v, convert) for v in node]
    return node


def _hex_to_base64(value: str) -> str:
    try:
        return base64.b64encode(bytes.fromhex(value)).decode()
    except ValueError:
        return value  # already base64 (some JSON exporters write the proto3 default)


def to_json_line(request: trace_service_pb2.ExportTraceServiceRequest) -> str:
    message = json_format.MessageToDict(request, use_integers_for_enums=True)
    message = _ids(message, lambda v: base64.b64decode(v).hex())
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))


class RecordingSink:
    """Threaded OTLP/HTTP receiver; ``lines`` holds one JSON line per trace request."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.lines: list[str] = []
        self.spans = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((host, 0), _make_handler(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def endpoint(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def accept(self, request: trace_service_pb2.ExportTraceServiceRequest) -> None:
        count = sum(len(s.spans) for r in request.resource_spans for s in r.scope_spans)
        if not count:
            return
        line = to_json_line(request)
        with self._lock:
            self.lines.append(line)
            self.spans += count

    def write(self, path: Path) -> int:
        with self._lock:
            path.write_text("".join(line + "\n" for line in self.lines), encoding="utf-8")
            return self.spans

    def __enter__(self) -> RecordingSink:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()


def _make_handler(sink: RecordingSink) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _reply(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _body(self) -> bytes:
            """The request body, sized or chunked (Node's OTLP exporters stream it chunked)."""
            if "chunked" not in (self.headers.get("Transfer-Encoding") or "").lower():
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))
            parts = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                parts.append(self.rfile.read(size))
                self.rfile.readline()  # the CRLF closing the chunk
            while self.rfile.readline().strip():  # trailers, up to the blank line
                pass
            return b"".join(parts)

        def do_POST(self) -> None:
            body = self._body()
            encoding = (self.headers.get("Content-Encoding") or "").lower()
            if encoding == "gzip":
                body = gzip.decompress(body)
            elif encoding == "deflate":
                body = zlib.decompress(body)
            content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip()
            is_json = content_type == "application/json"
            if not self.path.rstrip("/").endswith("/v1/traces"):
                self._reply(200, b"{}" if is_json else b"", content_type or "application/json")
                return
            request = trace_service_pb2.ExportTraceServiceRequest()
            try:
                if is_json:
                    document = _ids(json.loads(body), _hex_to_base64)
                    json_format.ParseDict(document, request, ignore_unknown_fields=True)
                else:
                    request.ParseFromString(body)
            except Exception as exc:  # a recorder bug or a broken exporter: say so loudly
                message = f"cannot parse OTLP {content_type}: {exc}".encode()
                self._reply(400, message, "text/plain")
                return
            sink.accept(request)
            if is_json:
                self._reply(200, b"{}", "application/json")
            else:
                response = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
                self._reply(200, response, "application/x-protobuf")

    return Handler

"""The loopback services the sample agents' tools talk to.

``weather`` answers ``GET /weather`` (the allowed service, addressed as ``localhost``);
``sink`` accepts ``POST /upload`` (the unexpected host, bound to ``127.0.0.2``), and
``weather`` ``POST /archive`` (an upload the allowed host takes: the benign twin). Both keep
no state and answer the same thing every time, so recordings only differ in ids, ports
and times. ``extra`` adds fields to the weather answer: the injection scenario's page
names the sink there.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

WEATHER = {"city": "Paris", "temp_c": 18, "conditions": "light rain"}


def _service_handler(kind: str, extra: dict[str, Any]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _reply(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if kind == "weather" and self.path.startswith("/weather"):
                self._reply(200, {**WEATHER, **extra})
            else:
                self._reply(404, {"error": "not found"})

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if (kind, self.path.split("?")[0]) in {("sink", "/upload"), ("weather", "/archive")}:
                self._reply(200, {"status": "received", "bytes": len(body)})
            else:
                self._reply(404, {"error": "not found"})

    return Handler


@contextlib.contextmanager
def serve(kind: str, host: str, extra: dict[str, Any] | None = None) -> Iterator[int]:
    """A loopback HTTP service on an ephemeral port, for the tools to call."""
    server = ThreadingHTTPServer((host, 0), _service_handler(kind, extra or {}))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()

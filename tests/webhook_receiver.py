"""A webhook receiver on 127.0.0.1, as an alerting service runs one: it answers each POST
204 and keeps what it received. It can be stopped (its port then refuses connections: the
socket is closed) and started again on the same port, keeping what it had received."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class WebhookReceiver:
    def __init__(self) -> None:
        self.received: list[tuple[dict[str, str], Any]] = []  # (headers, body)
        self.lock = threading.Lock()
        self.port = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/alerts"

    def bodies(self) -> list[Any]:
        with self.lock:
            return [body for _, body in self.received]

    def start(self) -> WebhookReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                with receiver.lock:
                    receiver.received.append(
                        ({k.lower(): v for k, v in self.headers.items()}, json.loads(raw))
                    )
                self.send_response(204)
                self.send_header("content-length", "0")
                self.end_headers()

        ThreadingHTTPServer.allow_reuse_address = True
        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        server.daemon_threads = True
        self.port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

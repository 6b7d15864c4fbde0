"""A stand-in trace store on 127.0.0.1 for answers a real Phoenix or MLflow cannot be made to
give (a repeating cursor, a page of the wrong types, a redirect, an answer that never ends).
It answers each path from a function of the request; the shapes follow the stores' documented
REST APIs (Phoenix ``/v1/projects/{p}/traces`` and ``/spans``: ``{"data": [...],
"next_cursor": ...}``; MLflow ``traces/search`` and ``traces/batchGet``)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

# (status, headers, body) or None for "say nothing more and hold the connection"
Answer = tuple[int, dict[str, str], bytes]
Route = Callable[[str, dict[str, list[str]], Any], Answer]


def json_answer(body: Any, status: int = 200) -> Answer:
    return status, {"content-type": "application/json"}, json.dumps(body).encode()


@contextmanager
def standin(routes: dict[str, Route]) -> Iterator[tuple[str, list[str]]]:
    """``(host:port, paths asked)``; a route's key is the end of the path it answers, or
    ``re:PATTERN`` searched in the path; a path no route matches is a 404."""
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _answer(self, method: str) -> None:
            parts = urlsplit(self.path)
            asked.append(f"{method} {parts.path}")
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            for suffix, route in routes.items():
                if (
                    re.search(suffix[3:], parts.path)
                    if suffix.startswith("re:")
                    else parts.path.endswith(suffix)
                ):
                    status, headers, data = route(method, parse_qs(parts.query), body)
                    break
            else:
                status, headers, data = 404, {}, b"not found"
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            if "transfer-encoding" not in {k.lower() for k in headers}:
                self.send_header("content-length", str(len(data)))
            self.end_headers()
            try:
                self.wfile.write(data)
                self.wfile.flush()
            except OSError:
                pass

        def do_GET(self) -> None:
            self._answer("GET")

        def do_POST(self) -> None:
            self._answer("POST")

        def do_PUT(self) -> None:
            self._answer("PUT")

        def do_PATCH(self) -> None:
            self._answer("PATCH")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}", asked
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def refusing_writes(target: str, status: int = 503) -> Iterator[tuple[str, list[str]]]:
    """A real store at ``target`` (``host:port``) behind a gateway that answers every GET as
    the store does and refuses every write (POST, PUT, PATCH) with ``status``: a store that
    can be read but not written to. ``(host:port, writes refused)``. Only reads whose
    answers are JSON are passed (the store's REST API)."""
    import urllib.error
    import urllib.request

    refused: list[str] = []

    def forward(method: str, path: str, query: str, body: bytes) -> Answer:
        if method != "GET" and not path.endswith("/traces/search"):  # MLflow reads by POST
            refused.append(f"{method} {path}")
            return json_answer({"detail": "read-only"}, status)
        url = f"http://{target}{path}" + (f"?{query}" if query else "")
        request = urllib.request.Request(url, data=body or None, method=method)
        request.add_header("content-type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return answer.status, {"content-type": "application/json"}, answer.read()
        except urllib.error.HTTPError as error:
            return error.code, {"content-type": "application/json"}, error.read()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _any(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            status, headers, data = forward(self.command, parts.path, parts.query, body)
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_PATCH = _any

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}", refused
    finally:
        server.shutdown()
        server.server_close()

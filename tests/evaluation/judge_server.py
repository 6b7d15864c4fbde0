"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1 standing in for the
judge model: it answers each request from a script, and records what it was sent and how
many requests it served at once. A reply can also be raw: a body as given, extra headers,
or a body streamed from a generator (trickled, endless, huge) without holding it."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    verdict: str | None = "no"  # None: content as given in ``content``
    content: str | None = None
    delay: float = 0.0
    rationale: str = "scripted"
    body: bytes | None = None  # sent as it is, whatever the status
    headers: dict[str, str] = field(default_factory=dict)
    # streamed piece by piece; with ``length`` under that Content-Length, else chunked
    stream: Callable[[], Iterable[bytes]] | None = None
    length: int | None = None


def answer(reply: Reply) -> dict[str, Any]:
    content = reply.content
    if content is None:
        content = json.dumps(
            {"verdict": reply.verdict, "rationale": reply.rationale, "evidence": ["quoted"]}
        )
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "judge-1",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
    }


@dataclass
class JudgeServer:
    script: Callable[[dict[str, Any], int], Reply]
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)  # of each request, lower-cased
    in_flight: int = 0
    most_in_flight: int = 0
    url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)


@contextmanager
def judge_server(
    script: Callable[[dict[str, Any], int], Reply], host: str = "127.0.0.1"
) -> Iterator[JudgeServer]:
    """``script(request body, request number from 0)`` says how to answer; ``host`` is a
    loopback address (127.0.0.x)."""
    state = JudgeServer(script)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers["Content-Length"]))
            try:
                body = json.loads(raw)
            except ValueError:  # not a judge request (an OTLP/protobuf export): kept as sent
                body = {"raw": raw}
            with state.lock:
                number = len(state.requests)
                state.requests.append(body)
                state.headers.append({k.lower(): v for k, v in self.headers.items()})
                state.in_flight += 1
                state.most_in_flight = max(state.most_in_flight, state.in_flight)
            try:
                reply = state.script(body, number)
                time.sleep(reply.delay)
                if reply.stream is not None:
                    self._stream(reply)
                    return
                payload = (
                    reply.body
                    if reply.body is not None
                    else (
                        json.dumps(answer(reply)).encode()
                        if reply.status == 200
                        else json.dumps({"error": {"message": "scripted failure"}}).encode()
                    )
                )
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                if reply.status == 429 and "Retry-After" not in reply.headers:
                    self.send_header("Retry-After", "0")
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)
            finally:
                with state.lock:
                    state.in_flight -= 1

        def _stream(self, reply: Reply) -> None:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            for name, value in reply.headers.items():
                self.send_header(name, value)
            if reply.length is not None:
                self.send_header("Content-Length", str(reply.length))
            else:
                self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.flush()
            assert reply.stream is not None
            for piece in reply.stream():
                if reply.length is None:
                    piece = b"%x\r\n%s\r\n" % (len(piece), piece)
                self.wfile.write(piece)
                self.wfile.flush()
            if reply.length is None:
                self.wfile.write(b"0\r\n\r\n")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer((host, 0), Handler)
    server.daemon_threads = True
    state.url = f"http://{host}:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()

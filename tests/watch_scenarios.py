"""What tests/test_watch_processes.py runs in child processes: one scenario per call,
``python -m tests.watch_scenarios NAME``, printing each finished span as a JSON line.

Each child traces like an agent (an SDK TracerProvider, set globally) and turns the watcher on
with ``rampart_otel.watch()`` (or is started by ``rampart-otel watch``, which turned it on
before this module ran): a hook cannot be removed, so no test process may host one.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import platform
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

EXPORTER = InMemorySpanExporter()


def tracing() -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"service.name": "scenario"}))
    provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
    trace.set_tracer_provider(provider)
    return provider


def tool(name: str) -> Any:
    return trace.get_tracer("scenarios").start_as_current_span(f"execute_tool {name}")


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: clients keep their connections

    def do_GET(self) -> None:
        self._answer(b"sunny")

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._answer(b"received")

    def _answer(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def server() -> Iterator[int]:
    """A loopback HTTP server on 127.0.0.1 (``localhost`` resolves to it), its port."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()


def clients() -> None:
    """urllib and requests (neither instrumented), a raw socket, asyncio: under tools."""
    import urllib.request

    import requests

    import rampart_otel

    tracing()
    rampart_otel.watch()
    with server() as port:
        with tool("fetch_weather"):
            urllib.request.urlopen(f"http://localhost:{port}/weather?city=Paris").read()
        with tool("send_report"):
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/upload",
                data=b'{"report": "key=sk-live-123"}',
                headers={"Content-Type": "application/json"},
                method="POST",
            )
            urllib.request.urlopen(request).read()
        with tool("post_requests"):
            requests.post(f"http://localhost:{port}/upload", json={"a": 1}, timeout=5)
        with tool("raw_socket"), socket.create_connection(("127.0.0.1", port)) as raw:
            raw.sendall(b"GET / HTTP/1.0\r\n\r\n")
            raw.recv(100)

        async def task() -> None:
            with tool("async_connect"):
                _reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                await writer.wait_closed()

        asyncio.run(task())
        with tool("udp"):
            datagram = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            for _ in range(3):
                datagram.sendto(b"x", ("127.0.0.1", 9))
            datagram.close()


def pooled() -> None:
    """A connection opened in one tool call and used again in the next one."""
    import httpx
    import requests

    import rampart_otel

    tracing()
    rampart_otel.watch()
    with server() as port:
        client = httpx.Client()
        session = requests.Session()
        with tool("first"):
            client.get(f"http://localhost:{port}/a")
            session.get(f"http://localhost:{port}/a", timeout=5)
        with tool("second"):
            client.get(f"http://localhost:{port}/b")  # the same connection: no connect
        client.close()
        session.close()
        with tool("third"):
            pass


def processes() -> None:
    import rampart_otel

    tracing()
    rampart_otel.watch()
    with tool("run_command"):
        platform._uname_cache = None  # type: ignore[attr-defined]  # asked afresh
        platform.processor()  # the standard library's own probe: uname -p
        subprocess.run(["true", "--flag"], check=True)
        os.system("true from-system")
        child = os.fork()
        if child == 0:
            os._exit(0)
        os.waitpid(child, 0)


def watch_twice() -> None:
    import rampart_otel
    from rampart_otel.watch import WatchError

    tracing()
    first = rampart_otel.watch(kinds=["network"])
    outcome: dict[str, Any] = {"first": sorted(first.kinds)}
    outcome["same"] = rampart_otel.watch() is first and sorted(first.kinds) == ["network"]
    wider = rampart_otel.watch(kinds=["network", "process"])
    outcome["widened"] = sorted(wider.kinds) if wider is first else None
    try:
        rampart_otel.watch(kinds=["network"])
    except WatchError as error:
        outcome["narrowing"] = str(error)
    print(json.dumps({"outcome": outcome}))
    with tool("after"):
        pass


def late() -> None:
    """The provider made before ``watch()``: spans carry the attestation, the resource not."""
    import rampart_otel

    provider = tracing()
    rampart_otel.watch()
    print(json.dumps({"resource": dict(provider.resource.attributes)}))
    with tool("late"):
        pass


def under_cli() -> None:
    """Started by ``rampart-otel watch``: the watcher was on before this module ran."""
    provider = tracing()
    print(json.dumps({"resource": {k: _plain(v) for k, v in provider.resource.attributes.items()}}))
    print(json.dumps({"shadowed": os.environ.get("SHADOWED_SITECUSTOMIZE_RAN")}))
    with tool("write"), open(os.environ["SCENARIO_FILE"], "w") as handle:
        handle.write("x")


SCENARIOS: dict[str, Callable[[], None]] = {
    "clients": clients,
    "pooled": pooled,
    "processes": processes,
    "watch_twice": watch_twice,
    "late": late,
    "under_cli": under_cli,
}


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def main(name: str) -> None:
    SCENARIOS[name]()
    for span in EXPORTER.get_finished_spans():
        parent = span.parent.span_id if span.parent else None
        print(
            json.dumps(
                {
                    "name": span.name,
                    "id": span.context.span_id,
                    "parent": parent,
                    "kind": span.kind.name,
                    "scope": span.instrumentation_scope.name,
                    "attributes": {k: _plain(v) for k, v in span.attributes.items()},
                }
            )
        )


if __name__ == "__main__":
    main(sys.argv[1])

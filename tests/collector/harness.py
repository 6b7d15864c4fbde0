"""Shared by the collector's tests: run a collector, make spans, read back what it stored.

Real clients only: the OTLP exporters from opentelemetry-exporter-otlp-proto-http/grpc.
Everything listens on 127.0.0.1 ephemeral ports. Waits are generous polls, never timing
assertions, so a busy two-core machine only makes the tests slower.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, TraceFlags

from rampart_otel.collector.config import load_config
from rampart_otel.collector.service import Collector
from rampart_otel.storage.segments import list_segments, read_records

POLICY = """\
policy: test
version: 1
checks:
  - id: no-delete
    polarity: attack
    detect: tool_called("delete_file")
  - id: no-exfiltration
    polarity: attack
    detect: side_effect("http_request", host=not_in(["api.example.com"]))
"""

_RESOURCE = Resource.create({"service.name": "test-agent"})
_SCOPE = InstrumentationScope("rampart-otel-tests", "1.0")


def wait_for(predicate: Callable[[], Any], timeout: float = 60.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


def make_traces(traces: int, spans_per_trace: int = 3, tool: str = "search") -> list[ReadableSpan]:
    """Complete traces: a root agent span and tool spans under it, all ended."""
    spans: list[ReadableSpan] = []
    now = time.time_ns()
    for _ in range(traces):
        trace_id = random.getrandbits(128) | 1
        root_id = random.getrandbits(64) | 1
        root = SpanContext(trace_id, root_id, False, TraceFlags(1))
        for index in range(spans_per_trace):
            span_id = root_id if index == 0 else random.getrandbits(64) | 1
            spans.append(
                ReadableSpan(
                    name="invoke_agent" if index == 0 else f"execute_tool {tool}",
                    context=SpanContext(trace_id, span_id, False, TraceFlags(1)),
                    parent=None if index == 0 else root,
                    resource=_RESOURCE,
                    attributes=(
                        {"gen_ai.operation.name": "invoke_agent"}
                        if index == 0
                        else {
                            "gen_ai.operation.name": "execute_tool",
                            "gen_ai.tool.name": tool,
                            "gen_ai.tool.call.id": f"call-{index}",
                        }
                    ),
                    kind=SpanKind.INTERNAL,
                    start_time=now,
                    end_time=now + 1000 * (index + 1),
                    instrumentation_scope=_SCOPE,
                )
            )
    return spans


def span_keys(spans: list[ReadableSpan]) -> set[tuple[str, str]]:
    return {(f"{span.context.trace_id:032x}", f"{span.context.span_id:016x}") for span in spans}


def stored_spans(data_dir: Path) -> set[tuple[str, str]]:
    """Every (trace id, span id) in the data directory's segments, read record by record."""
    found: set[tuple[str, str]] = set()
    for _, path in list_segments(data_dir / "segments"):
        for _, _, payload in read_records(path):
            request = ExportTraceServiceRequest.FromString(payload)
            for resource_spans in request.resource_spans:
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        found.add((span.trace_id.hex(), span.span_id.hex()))
    return found


def write_config(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@dataclass
class InProcess:
    """A collector serving in a thread of the test process."""

    collector: Collector

    @property
    def http_url(self) -> str:
        host, port = self.collector.bound.http  # type: ignore[misc]
        return f"http://{host}:{port}"

    @property
    def traces_url(self) -> str:
        return self.http_url + "/v1/traces"

    @property
    def grpc_target(self) -> str:
        host, port = self.collector.bound.grpc  # type: ignore[misc]
        return f"{host}:{port}"

    @property
    def data_dir(self) -> Path:
        return self.collector.config.data_dir

    def stop(self) -> None:
        self.collector.request_stop()
        self.collector.stopped.wait(60)


def start_in_process(data_dir: Path, **overrides: Any) -> InProcess:
    settings: dict[str, Any] = {
        "http.endpoint": "127.0.0.1:0",
        "grpc.endpoint": "127.0.0.1:0",
        "data_dir": str(data_dir),
    }
    settings.update(overrides)
    collector = Collector(load_config(None, overrides=settings))
    collector.start_in_thread()
    return InProcess(collector)


_ANNOUNCE = re.compile(r"http://([\d.]+):(\d+)/v1/traces, OTLP/gRPC on ([\d.]+):(\d+)")


@dataclass
class Subprocess:
    """``rampart-otel collect`` as a child process, as an operator runs it."""

    process: subprocess.Popen[str]
    http_url: str
    grpc_target: str
    log: Path

    @property
    def traces_url(self) -> str:
        return self.http_url + "/v1/traces"

    def metrics(self) -> dict[str, float]:
        with urllib.request.urlopen(self.http_url + "/metrics", timeout=10) as response:
            text = response.read().decode()
        values: dict[str, float] = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                values[name] = float(value)
        return values

    def terminate(self, timeout: float = 90.0) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout)

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(30)


def spawn(
    data_dir: Path,
    config: Path | None = None,
    *args: str,
    preexec_fn: Callable[[], object] | None = None,
) -> Subprocess:
    command = [
        sys.executable,
        "-m",
        "rampart_otel.cli",
        "collect",
        "--http",
        "127.0.0.1:0",
        "--grpc",
        "127.0.0.1:0",
        "--data-dir",
        str(data_dir),
    ]
    if config is not None:
        command += ["--config", str(config)]
    command += list(args)
    log = data_dir.parent / f"{data_dir.name}-{time.monotonic_ns()}.log"
    handle = log.open("w")
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    process = subprocess.Popen(
        command, stdout=handle, stderr=handle, text=True, env=env, preexec_fn=preexec_fn
    )

    def announced() -> re.Match[str] | None:
        if process.poll() is not None:
            raise AssertionError(f"collector exited early:\n{log.read_text()}")
        return _ANNOUNCE.search(log.read_text())

    match = wait_for(announced, 90, "the collector to listen")
    return Subprocess(
        process,
        f"http://{match[1]}:{match[2]}",
        f"{match[3]}:{match[4]}",
        log,
    )

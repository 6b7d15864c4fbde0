"""Three collectors, one shared PostgreSQL store: the recorded samples replayed through a
trace-ID router, one collector SIGKILLed mid-run and restarted, and every trace scored
exactly once, with the verdicts one process gives, and ``audit`` over the store shows them all.

In front of the collectors is the OpenTelemetry Collector gateway built by
``collector/build-gateway.sh`` when ``RAMPART_GATEWAY`` names its binary (``make
scale-out``), with ``otelcol-gateway.yaml``'s loadbalancing exporter. Without it, a router
in this file stands in for that exporter (the gateway cannot be built where the Go module
proxy is out of reach): each span goes to the one collector its trace id hashes to, and a
request is acknowledged only once every part of it was; a refused part is retried by the
client. Everything else is real: ``rampart-otel replay``'s OTLP/HTTP exporter, three
``rampart-otel collect`` processes, PostgreSQL on loopback, ``audit --results``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import psycopg
import pytest
from cli_runner import REPO, run_cli
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from ports import ATTEMPTS, PortInUse, in_use, on_free_ports

from collector.harness import Subprocess, spawn, wait_for, write_config

SAMPLES = REPO / "samples" / "traces"
POLICY = REPO / "samples" / "policy.yaml"
COLLECTORS = 3
GATEWAY = os.environ.get("RAMPART_GATEWAY")  # the binary collector/build-gateway.sh builds


class TraceRouter:
    """OTLP/HTTP protobuf in; each trace's spans out to the collector that owns the trace."""

    def __init__(self, targets: list[str]) -> None:
        self.targets = targets  # each collector's /v1/traces URL; replaced on a restart
        self.forwarded = [0] * len(targets)
        self.refused = 0
        router = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                ok = router.forward(ExportTraceServiceRequest.FromString(body))
                self.send_response(200 if ok else 503)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1/traces"

    def owner(self, trace_id: bytes) -> int:
        return zlib.crc32(trace_id) % len(self.targets)

    def forward(self, request: ExportTraceServiceRequest) -> bool:
        parts: dict[int, ExportTraceServiceRequest] = {}
        for resource_spans in request.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    part = parts.setdefault(self.owner(span.trace_id), ExportTraceServiceRequest())
                    if not part.resource_spans or part.resource_spans[-1].resource != (
                        resource_spans.resource
                    ):
                        part.resource_spans.add().resource.CopyFrom(resource_spans.resource)
                    scopes = part.resource_spans[-1].scope_spans
                    if not scopes or scopes[-1].scope != scope_spans.scope:
                        scopes.add().scope.CopyFrom(scope_spans.scope)
                    scopes[-1].spans.add().CopyFrom(span)
        ok = True
        for index, part in sorted(parts.items()):
            post = urllib.request.Request(
                self.targets[index],
                data=part.SerializeToString(),
                headers={"Content-Type": "application/x-protobuf"},
            )
            try:
                with urllib.request.urlopen(post, timeout=10) as response:
                    ok = ok and response.status == 200
                    self.forwarded[index] += 1
            except (urllib.error.URLError, OSError):
                ok = False
                self.refused += 1
        return ok

    @contextmanager
    def running(self) -> Iterator[TraceRouter]:
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()


class Gateway:
    """The built OpenTelemetry Collector: OTLP/HTTP in, ``loadbalancing`` (routing_key
    traceID) out to each collector's OTLP/gRPC port, retrying while one is down."""

    refused = 1  # its retries are its own: nothing to wait for before the restart

    def __init__(self, binary: str, grpc_ports: list[int], tmp_path: Path) -> None:
        self.port = 0  # picked as it starts: it cannot bind port 0 and say which it got
        self.grpc_ports = grpc_ports
        self.config = tmp_path / "gateway.yaml"
        self.binary = binary
        self.log = tmp_path / "gateway.log"

    def _configure(self, port: int) -> None:
        hostnames = ", ".join(f"127.0.0.1:{grpc}" for grpc in self.grpc_ports)
        self.port = port
        write_config(
            self.config,
            "receivers:\n  otlp:\n    protocols:\n      http:\n"
            f"        endpoint: 127.0.0.1:{port}\n"
            "exporters:\n  loadbalancing:\n    routing_key: traceID\n    protocol:\n"
            "      otlp:\n        timeout: 30s\n        tls:\n          insecure: true\n"
            "        retry_on_failure:\n          enabled: true\n"
            "          initial_interval: 1s\n          max_interval: 5s\n"
            "          max_elapsed_time: 10m\n"
            f"    resolver:\n      static:\n        hostnames: [{hostnames}]\n"
            "service:\n  pipelines:\n    traces:\n      receivers: [otlp]\n"
            "      exporters: [loadbalancing]\n",
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/traces"

    def _start(self, port: int) -> subprocess.Popen[bytes]:
        """The gateway on ``port``, listening; ``PortInUse`` if the port was taken."""
        self._configure(port)
        with self.log.open("w") as log:
            process = subprocess.Popen(
                [self.binary, "--config", str(self.config)], stdout=log, stderr=log
            )

        def listening() -> bool:
            if process.poll() is not None:
                failure = PortInUse if in_use(self.log.read_text()) else AssertionError
                raise failure(self.log.read_text())
            with socket.socket() as probe:
                return probe.connect_ex(("127.0.0.1", self.port)) == 0

        try:
            wait_for(listening, 60, "the gateway to listen")
        except BaseException:
            process.kill()
            process.wait(60)
            raise
        return process

    @contextmanager
    def running(self) -> Iterator[Gateway]:
        process = on_free_ports(self._start)
        try:
            yield self
        finally:
            process.terminate()
            process.wait(60)


def collector_config(tmp_path: Path, index: int, url: str) -> Path:
    return write_config(
        tmp_path / f"collector-{index}.yaml",
        f"policies: [{POLICY}]\n"
        f"results: {url}\n"
        f"results_instance: collector-{index}\n"
        "assembly:\n  idle_seconds: 0.5\n  max_wait_seconds: 30\n  stitch: false\n"
        "shutdown_timeout_seconds: 60\n",
    )


def replay(files: list[Path], to: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "rampart_otel.cli", "replay", *map(str, files), "--to", to]
    return subprocess.Popen(
        [*command, "--timeout", "120"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def stored(url: str) -> tuple[list[tuple[str, int]], dict[tuple[str, str], str], int]:
    """(run, revision) of every scored run; current status by (run, check); results rows."""
    with psycopg.connect(url) as db:
        runs = db.execute("SELECT run_id, revision FROM runs ORDER BY 1, 2").fetchall()
        current = db.execute("SELECT run_id, check_id, status FROM results WHERE current")
        statuses = {(run, check): status for run, check, status in current}
        rows = db.execute("SELECT count(*) FROM results").fetchone()[0]
    return runs, statuses, rows


def one_process_verdicts() -> dict[tuple[str, str], str]:
    # One run per trace: routed by trace id, the collectors (stitch: false) score so too.
    result = run_cli("score", SAMPLES, "--policy", POLICY, "--format", "json", "--no-stitch")
    report = json.loads(result.stdout)
    return {(entry["run_id"], entry["check"]): entry["status"] for entry in report["results"]}


@pytest.mark.slow
def test_three_collectors_one_store_with_a_kill_score_every_trace_once(
    tmp_path: Path, pg_url: str
) -> None:
    expected = one_process_verdicts()
    runs_expected = {run for run, _ in expected}
    checks = len({check for _, check in expected})
    # The samples' files and framework directories, in two halves (replay walks directories).
    files = [path for path in sorted(SAMPLES.iterdir()) if path.suffix != ".md"]
    first_half, second_half = files[: len(files) // 2], files[len(files) // 2 :]

    configs = [collector_config(tmp_path, index, pg_url) for index in range(COLLECTORS)]
    data_dirs = [tmp_path / f"data-{index}" for index in range(COLLECTORS)]
    # Each collector binds port 0 and says which ports it got; restarted, it binds those again:
    # it is found where it was, as by a gateway's static list.
    collectors = [spawn(data_dirs[index], configs[index]) for index in range(COLLECTORS)]
    ports = [
        ("--http", collector.http_url.removeprefix("http://"), "--grpc", collector.grpc_target)
        for collector in collectors
    ]

    def restart(index: int) -> Subprocess:
        """Again on its ports; one taken meanwhile (a client's ephemeral port) is waited for."""
        for attempt in range(ATTEMPTS):
            try:
                return spawn(data_dirs[index], configs[index], *ports[index])
            except AssertionError as exited:  # the collector exited: which port, if any?
                if attempt == ATTEMPTS - 1 or "already in use" not in str(exited):
                    raise
                time.sleep(1)
        raise AssertionError("unreachable")

    router: TraceRouter | Gateway
    if GATEWAY:
        grpc_ports = [int(port[3].rpartition(":")[2]) for port in ports]
        router = Gateway(GATEWAY, grpc_ports, tmp_path)
    else:
        router = TraceRouter([collector.traces_url for collector in collectors])
    try:
        with router.running():
            sender = replay(first_half, router.url)
            assert sender.wait(180) == 0, sender.stdout.read() if sender.stdout else ""
            # Everything sent so far is acknowledged (durable); collector 1 is killed while it
            # may still be assembling or scoring, and the rest is sent while it is down.
            collectors[1].kill()
            sender = replay(second_half, router.url)
            wait_for(lambda: router.refused > 0, 60, "a request refused by the dead collector")
            collectors[1] = restart(1)
            output = sender.communicate(timeout=240)[0]
            assert sender.returncode == 0, output

            def all_scored() -> bool:
                return {run for run, _ in stored(pg_url)[0]} >= runs_expected

            wait_for(all_scored, 180, "every replayed trace to be scored")
            time.sleep(2)  # a doubled score would land now: give it the chance
    finally:
        for collector in collectors:
            if collector.process.poll() is None:
                collector.terminate()

    runs, statuses, rows = stored(pg_url)
    if isinstance(router, TraceRouter):
        assert all(router.forwarded), router.forwarded  # every collector took a share
    assert {run for run, _ in runs} == runs_expected  # none lost, none invented
    assert [revision for _, revision in runs] == [0] * len(runs)  # each scored once
    assert rows == len(runs_expected) * checks  # one verdict per check, never two
    assert statuses == expected  # the verdicts one process gives

    audit = run_cli("audit", "--results", pg_url, "--json", "--limit", "0")
    assert audit.returncode == 0, audit.stderr
    overall = json.loads(audit.stdout)["population_summary"]["overall"]
    assert overall["total"] == rows
    for status in ("safe", "unsafe", "undetermined", "error"):
        assert overall[status] == list(expected.values()).count(status), status

"""The data directory holds trace content (prompts, tool arguments, secrets): a running
collector keeps it to its own user, directory 0700 and every file in it 0600."""

from __future__ import annotations

import resource
import stat
import urllib.error
import urllib.request
from pathlib import Path

from cli_runner import run_cli
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult

from collector.harness import make_traces, spawn, start_in_process, wait_for, write_config

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "samples" / "traces" / "openinference-exfil.jsonl"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_trace_content_is_readable_by_the_collector_user_only(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o755)
    data_dir.chmod(0o755)  # as an operator's `mkdir` under the usual umask leaves it
    config = write_config(tmp_path / "collector.yaml", "assembly:\n  idle_seconds: 0.3\n")
    collector = spawn(data_dir, config, "--policy", str(REPO / "samples" / "policy.yaml"))
    try:
        proc = run_cli("replay", SAMPLE, "--to", collector.http_url)
        assert proc.returncode == 0, proc.stderr
        wait_for(lambda: collector.metrics()["rampart_otel_runs_scored_total"] >= 1, 60)
        files = [path for path in data_dir.rglob("*") if path.is_file()]
        names = {path.name for path in files}
        assert {"results.db", "results.db-wal"} <= names
        assert any(path.parent.name == "segments" for path in files)
        assert mode(data_dir) == 0o700
        assert {p.name: mode(p) for p in files} == {p.name: 0o600 for p in files}
        assert all(mode(p) == 0o700 for p in data_dir.rglob("*") if p.is_dir())
    finally:
        assert collector.terminate() == 0, collector.log.read_text()


def test_a_data_directory_that_is_a_file_is_one_line_saying_so(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "traces.jsonl"
    not_a_dir.write_text("mine\n")
    proc = run_cli("collect", "--data-dir", not_a_dir, "--http", "127.0.0.1:0", "--grpc", "off")
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == (
        f"rampart-otel: error: data_dir {not_a_dir}: not a directory"
    )
    assert not_a_dir.read_text() == "mine\n"


def test_log_lines_escape_what_they_quote(tmp_path: Path) -> None:
    # A data directory others could read is tightened and said so in a log line that
    # quotes its path: a newline or escape sequence in the name must not reach the terminal.
    data_dir = tmp_path / "data\x1b[31m\nred"
    data_dir.mkdir()
    data_dir.chmod(0o755)
    collector = spawn(data_dir)
    try:
        log = collector.log.read_text()
    finally:
        assert collector.terminate() == 0, collector.log.read_text()
    assert "was readable by others: now 0700" in log
    assert "\x1b" not in log
    assert all(line.startswith(("rampart-otel", "  ")) for line in log.splitlines()), log


def test_a_full_disk_refuses_every_request_and_healthz_and_metrics_say_storage(
    tmp_path: Path,
) -> None:
    # RLIMIT_FSIZE at the segment's size: the next write fails as on a full disk. Both
    # receivers refuse (retryable), /healthz is 503 and the refusals are counted as storage
    # ones, not as a busy queue; once a write succeeds all is well again.
    collector = start_in_process(tmp_path / "data")
    http = OTLPSpanExporter(endpoint=collector.traces_url, timeout=2)
    grpc = GrpcExporter(endpoint=collector.grpc_target, insecure=True, timeout=2)
    try:
        assert http.export(make_traces(1)) == SpanExportResult.SUCCESS
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (collector.collector.writer.position[1], hard))
        try:
            assert http.export(make_traces(1)) == SpanExportResult.FAILURE
            assert grpc.export(make_traces(1)) == SpanExportResult.FAILURE
            health = get(collector.http_url + "/healthz")
            metrics = get(collector.http_url + "/metrics")[1]
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        assert health[0] == 503 and "storage" in health[1]
        assert 'reason="storage",transport="http"' in metrics
        assert 'reason="storage",transport="grpc"' in metrics
        assert 'reason="busy"' not in metrics
        assert grpc.export(make_traces(1)) == SpanExportResult.SUCCESS
        assert get(collector.http_url + "/healthz") == (200, "ok\n")
    finally:
        collector.stop()


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_a_data_directory_it_cannot_use_is_one_line_naming_the_path(tmp_path: Path) -> None:
    # (A read-only directory fails the same way for a user that is not root.)
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    (data_dir / "segments").write_text("not a directory\n")
    proc = run_cli("collect", "--data-dir", data_dir, "--http", "127.0.0.1:0", "--grpc", "off")
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == (
        f"rampart-otel: error: data_dir {data_dir}: cannot use {data_dir}/segments: not a directory"
    )

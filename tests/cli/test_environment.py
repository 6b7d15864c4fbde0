"""Settings from the environment, as the OpenTelemetry ecosystem expects, tested from the
command line: ``replay`` and ``collect --export-to`` fall back to the standard
``OTEL_EXPORTER_OTLP_*`` variables, and ``RAMPART_OTEL_*`` variables give the policy, the
data directory and the listen addresses. Precedence: flag > environment > config file."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runner import run_cli
from collector.harness import POLICY, spawn, wait_for, write_config
from otlp_sink import RunningSink, Sink
from trace_stores import spans_in

SAMPLE = Path(__file__).resolve().parents[2] / "samples/traces/openinference-exfil.jsonl"
SPANS = spans_in(SAMPLE)
SCORED_WITH = Path(__file__).resolve().parents[2] / "samples/policy.yaml"
RAMPART = (
    "RAMPART_OTEL_POLICY",
    "RAMPART_OTEL_DATA_DIR",
    "RAMPART_OTEL_HTTP",
    "RAMPART_OTEL_GRPC",
    "RAMPART_OTEL_ANNOTATE",
    "RAMPART_OTEL_ALERT_WEBHOOK",
)
OTEL = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
)


@pytest.fixture
def sink() -> Iterator[Sink]:
    running = RunningSink()
    try:
        yield running.sink
    finally:
        running.stop()


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in (*OTEL, *RAMPART):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_replay_sends_where_the_otel_endpoint_variable_says(
    sink: Sink, clean_env: pytest.MonkeyPatch
) -> None:
    clean_env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", sink.http_url)
    done = run_cli("replay", SAMPLE)
    assert done.returncode == 0, done.stderr
    assert len(list(sink.spans())) == SPANS
    assert {r.transport for r in sink.requests("traces")} == {"http"}  # to /v1/traces


def test_the_traces_endpoint_variable_wins_over_the_general_one_and_the_flag_over_both(
    sink: Sink, clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    clean_env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9/nowhere")
    clean_env.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", sink.http_url + "/v1/traces")
    assert run_cli("replay", SAMPLE).returncode == 0
    assert len(list(sink.spans())) == SPANS
    clean_env.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:9/v1/traces")
    assert run_cli("replay", SAMPLE, "--to", sink.http_url).returncode == 0
    assert len(list(sink.spans())) == 2 * SPANS
    # the protocol too: grpc from the environment, to the sink's gRPC port
    clean_env.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    clean_env.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    clean_env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://{sink.grpc_target}")
    assert run_cli("replay", SAMPLE).returncode == 0
    assert len(list(sink.spans())) == 3 * SPANS


def test_replay_with_no_endpoint_anywhere_says_where_one_goes(
    clean_env: pytest.MonkeyPatch,
) -> None:
    done = run_cli("replay", SAMPLE)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "rampart-otel: error: --to: give the OTLP endpoint, or set "
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT"
    )


def test_score_takes_its_policy_from_the_environment(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("RAMPART_OTEL_POLICY", str(SCORED_WITH))
    done = run_cli("score", SAMPLE)
    assert done.returncode == 1, done.stderr  # UNSAFE: the policy was read
    assert "policy weather-agent-guard v1" in done.stdout


def test_collect_reads_its_settings_from_the_environment_below_its_flags_above_its_file(
    clean_env: pytest.MonkeyPatch, tmp_path: Path, sink: Sink
) -> None:
    policy = write_config(tmp_path / "policy.yaml", POLICY)
    config = write_config(
        tmp_path / "collector.yaml",
        f"data_dir: {tmp_path / 'from-file'}\nhttp:\n  endpoint: 127.0.0.1:9\n",
    )
    clean_env.setenv("RAMPART_OTEL_POLICY", str(policy))
    clean_env.setenv("RAMPART_OTEL_DATA_DIR", str(tmp_path / "from-env"))
    clean_env.setenv("RAMPART_OTEL_GRPC", "off")
    clean_env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", sink.http_url)
    # --http (flag) over the file's 127.0.0.1:9; the data dir from the environment over
    # the file's; --grpc off from the environment; the policy from the environment.
    collector = _spawn(tmp_path / "from-flag-unused", config, "--http", "127.0.0.1:0")
    try:
        log = collector.log.read_text()
        assert "OTLP/gRPC" not in log.splitlines()[0]
        assert f"data      {tmp_path / 'from-env'}" in log
        assert f"policy    {policy}: test v1, 2 checks" in log
        assert f"also as OTLP events to {sink.http_url}/v1/logs" in log
        assert (tmp_path / "from-env" / "segments").is_dir()
        assert not (tmp_path / "from-file").exists()
    finally:
        assert collector.terminate() == 0


def _spawn(unused: Path, config: Path, *args: str):  # type: ignore[no-untyped-def]
    """``rampart-otel collect`` with no --data-dir or --grpc of the harness's (the
    environment gives them), as an operator's service unit runs it."""
    import subprocess
    import sys
    import time

    from collector.harness import Subprocess

    log = unused.parent / f"collect-{time.monotonic_ns()}.log"
    handle = log.open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "rampart_otel.cli", "collect", "--config", str(config), *args],
        stdout=handle, stderr=handle, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"),
    )  # fmt: skip
    pattern = re.compile(r"OTLP/HTTP on http://([\d.]+):(\d+)/v1/traces")

    def announced() -> re.Match[str] | None:
        if process.poll() is not None:
            raise AssertionError(f"collector exited early:\n{log.read_text()}")
        return pattern.search(log.read_text())

    match = wait_for(announced, 90, "the collector to listen")
    wait_for(lambda: "look" in log.read_text(), 30, "the startup lines")
    return Subprocess(process, f"http://{match[1]}:{match[2]}", "", log)


def test_collect_alerts_and_annotate_from_the_environment(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    policy = write_config(tmp_path / "policy.yaml", POLICY)
    clean_env.setenv("RAMPART_OTEL_ANNOTATE", "mlflow://127.0.0.1:5000/agents")
    clean_env.setenv("RAMPART_OTEL_ALERT_WEBHOOK", "http://127.0.0.1:9/alerts")
    collector = spawn(tmp_path / "data", None, "--policy", str(policy))
    try:
        # The banner's lines after the address are written after spawn sees the address.
        def banner() -> str | None:
            text = collector.log.read_text()
            return text if "alerts    " in text else None

        log = wait_for(banner, timeout=30, what="the collector's banner")
        assert "annotate  mlflow://127.0.0.1:5000/agents (queued, retried while down)" in log
        assert "alerts    http://127.0.0.1:9/alerts: unsafe (json, queued" in log
    finally:
        assert collector.terminate() == 0
    clean_env.setenv("RAMPART_OTEL_ANNOTATE", "http://not-a-store")
    done = run_cli("collect", "--policy", policy, "--data-dir", tmp_path / "data")
    assert done.returncode == 2
    assert "--annotate: must be a phoenix:// or mlflow:// URL" in done.stderr


def test_audit_reads_the_data_dir_from_the_environment_unless_given_results(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    clean_env.setenv("RAMPART_OTEL_DATA_DIR", str(tmp_path / "nowhere"))
    done = run_cli("audit")
    assert done.returncode == 2
    assert str(tmp_path / "nowhere") in done.stderr
    with_results = run_cli("audit", "--results", "postgresql://rampart@127.0.0.1:9/rampart")
    assert with_results.returncode == 2
    assert "not both" not in with_results.stderr  # the flag wins over the environment
    assert "127.0.0.1" in with_results.stderr

"""`rampart-otel replay` of every recorded sample into a running `rampart-otel collect`, over
OTLP/HTTP protobuf, OTLP/HTTP JSON and OTLP/gRPC: the collector's stored verdicts
(`audit --json`) are the ones `score` gives on the same files, trace by trace and check by
check."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli

from collector.harness import Subprocess, spawn, wait_for, write_config

REPO = Path(__file__).resolve().parents[2]
POLICY = REPO / "samples" / "policy.yaml"
TRACES = REPO / "samples" / "traces"
PROTOCOLS = ("http/protobuf", "http/json", "grpc")


def _dir(protocol: str) -> str:
    return protocol.replace("/", "-")


def by_trace_and_check(results: list[dict[str, Any]]) -> dict[tuple[tuple[str, ...], str], Any]:
    """(trace ids, check) → (status, summary) of the latest revision."""
    latest: dict[tuple[tuple[str, ...], str], dict[str, Any]] = {}
    for result in results:
        key = (tuple(sorted(result["trace_ids"])), result["check"])
        if key not in latest or result.get("revision", 0) >= latest[key].get("revision", 0):
            latest[key] = result
    return {key: (r["status"], r["summary"]) for key, r in latest.items()}


@pytest.fixture(scope="module")
def offline() -> dict[tuple[tuple[str, ...], str], Any]:
    proc = run_cli("score", TRACES, "--policy", POLICY, "--format", "json")
    assert proc.returncode == 1, proc.stderr  # the exfil samples are unsafe
    return by_trace_and_check(json.loads(proc.stdout)["results"])


@pytest.fixture(scope="module")
def audited(
    tmp_path_factory: pytest.TempPathFactory, offline: dict[Any, Any]
) -> Iterator[dict[str, dict[Any, Any]]]:
    """Three collectors, one per protocol, each sent every sample by replay, then stopped."""
    tmp = tmp_path_factory.mktemp("replay")
    config = write_config(tmp / "collector.yaml", "assembly:\n  idle_seconds: 0.3\n")
    runs = len({trace_ids for trace_ids, _ in offline})
    collectors: dict[str, Subprocess] = {}
    try:
        for protocol in PROTOCOLS:
            collectors[protocol] = spawn(tmp / _dir(protocol), config, "--policy", str(POLICY))
        for protocol, collector in collectors.items():
            to = collector.grpc_target if protocol == "grpc" else collector.http_url
            proc = run_cli("replay", TRACES, "--to", to, "--protocol", protocol)
            assert proc.returncode == 0, proc.stderr
            assert "0 rejected" in proc.stdout, proc.stdout
        for protocol, collector in collectors.items():

            def scored(collector: Subprocess = collector) -> bool:
                return collector.metrics()["rampart_otel_runs_scored_total"] >= runs

            wait_for(scored, 120, f"every replayed run to be scored ({protocol})")
            metrics = collector.metrics()  # every span read is in a run scored and stored
            assert metrics["rampart_otel_spans_decoded_total"] > 0
            assert (
                metrics["rampart_otel_spans_scored_total"]
                >= (metrics["rampart_otel_spans_decoded_total"])
            )
            assert collector.terminate() == 0, collector.log.read_text()
    finally:
        for collector in collectors.values():
            if collector.process.poll() is None:
                collector.kill()
    found = {}
    for protocol in PROTOCOLS:
        proc = run_cli("audit", "--data-dir", tmp / _dir(protocol), "--json", "--limit", "all")
        assert proc.returncode == 0, proc.stderr
        found[protocol] = by_trace_and_check(json.loads(proc.stdout)["results"])
    yield found


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_replayed_samples_get_the_verdicts_score_gives(
    audited: dict[str, dict[Any, Any]], offline: dict[Any, Any], protocol: str
) -> None:
    online = audited[protocol]
    assert len(offline) >= 28 * 5
    assert online == offline


def test_fragments_are_never_safe_in_the_collector(audited: dict[str, dict[Any, Any]]) -> None:
    """Traces whose framework lost the context (no agent, model or tool span) are scored as
    what they are: UNSAFE on evidence (a POST to the unexpected host), never SAFE."""
    proc = run_cli("inspect", "--json", TRACES)
    assert proc.returncode == 0, proc.stderr
    fragments = {run["run_id"] for run in json.loads(proc.stdout)["runs"] if run["fragment"]}
    assert len(fragments) >= 3  # LangGraph through OpenInference, CrewAI's bookkeeping
    for protocol in PROTOCOLS:
        statuses = [
            status
            for (trace_ids, _), (status, _) in audited[protocol].items()
            if set(trace_ids) <= fragments
        ]
        assert statuses and "safe" not in statuses
        assert "unsafe" in statuses  # what a fragment proves is still reported

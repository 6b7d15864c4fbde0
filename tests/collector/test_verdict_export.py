"""Verdict export: the collector sends each stored verdict as a ``gen_ai.evaluation.result``
log record, tied to the scored trace's root span, through the real OTLP log exporters to a
second OTLP endpoint (tests/otlp_sink.py, a real receiver on loopback); a down endpoint
neither stops nor holds back scoring and is counted in /metrics."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from otlp_sink import RunningSink, Sink
from ports import closed_port

from collector.harness import InProcess, start_in_process, wait_for
from rampart_otel.evaluation import load_policy
from rampart_otel.receivers.files import read_path
from rampart_otel.replay import replay

REPO = Path(__file__).resolve().parents[2]
POLICY = REPO / "samples" / "policy.yaml"
TRACES = REPO / "samples" / "traces"
SAMPLES = [TRACES / f"{lib}-exfil.jsonl" for lib in ("openinference", "openllmetry")] + [
    TRACES / "pydantic-ai-no-http-instr.jsonl"
]
CHECKS = len(load_policy(POLICY).checks)
FORMAT = ("--policy", str(POLICY), "--format", "json")
EXPORTED = 'rampart_otel_verdict_export_events_total{outcome="exported"}'
FAILED = 'rampart_otel_verdict_export_events_total{outcome="failed"}'


@pytest.fixture
def sink() -> Iterator[Sink]:
    running = RunningSink()
    try:
        yield running.sink
    finally:
        running.stop()


def metric(collector: InProcess, name: str) -> float:
    for line in collector.collector.metrics.exposition()[0].decode().splitlines():
        if line.startswith(name + " "):
            return float(line.rpartition(" ")[2])
    return 0.0


def offline_results() -> dict[tuple[str, str], dict[str, Any]]:
    """(trace id, check) → the result ``score`` gives on the same files."""
    proc = subprocess.run(
        [sys.executable, "-m", "rampart_otel.cli", "score", *map(str, SAMPLES), *FORMAT],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert proc.returncode == 1, proc.stderr
    return {(r["trace_ids"][0], r["check"]): r for r in json.loads(proc.stdout)["results"]}


def roots() -> dict[str, str]:
    """trace id → its root span id, from the recordings."""
    found = {}
    for path in SAMPLES:
        for batch in read_path(path):
            assert isinstance(batch, list)
            for span in batch:
                if span.parent_span_id is None:
                    found[span.trace_id] = span.span_id
    return found


def attributes(record: Any) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for kv in record.attributes:
        value = kv.value
        kind = value.WhichOneof("value")
        if kind == "array_value":
            values[kv.key] = [item.string_value for item in value.array_value.values]
        else:
            values[kv.key] = getattr(value, kind)
    return values


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
def test_each_verdict_arrives_as_an_evaluation_event_on_its_trace(
    tmp_path: Path, sink: Sink, protocol: str
) -> None:
    endpoint = sink.grpc_target if protocol == "grpc" else sink.http_url
    collector = start_in_process(
        tmp_path / "data",
        policies=[str(POLICY)],
        **{
            "assembly.idle_seconds": 0.3,
            "export.otlp.endpoint": endpoint,
            "export.otlp.protocol": protocol,
            "export.otlp.headers": {"x-api-key": "k1"},
        },
    )
    try:
        code, _ = replay(SAMPLES, collector.traces_url, "http/protobuf", {}, io.StringIO())
        assert code == 0
        expected = len(SAMPLES) * CHECKS
        wait_for(lambda: len(list(sink.log_records())) >= expected, 120, "the verdict events")
        wait_for(lambda: metric(collector, EXPORTED) == expected, 60, "the export count")
    finally:
        collector.stop()
    records = list(sink.log_records())
    assert len(records) == expected
    offline = offline_results()
    root_of = roots()
    seen = set()
    for resource, scope, record in records:
        assert record.event_name == "gen_ai.evaluation.result"
        assert scope.name == "rampart_otel.verdicts"
        assert any(kv.value.string_value == "rampart-otel" for kv in resource.attributes)
        trace_id, span_id = record.trace_id.hex(), record.span_id.hex()
        assert span_id == root_of[trace_id]  # tied to the scored trace's root span
        found = attributes(record)
        check = found["gen_ai.evaluation.name"]
        result = offline[trace_id, check]
        assert found["gen_ai.evaluation.score.label"] == result["status"]
        assert found["gen_ai.evaluation.explanation"] == result["summary"]
        if result["status"] in ("safe", "unsafe"):
            assert found["gen_ai.evaluation.score.value"] == (result["status"] == "safe")
        assert found["rampart.policy.name"] == "weather-agent-guard"
        assert found["rampart.policy.version"] == 1
        assert found["rampart.run.id"] == trace_id and found["rampart.run.revision"] == 0
        assert found["rampart.trace_ids"] == [trace_id]
        assert found["rampart.harm_category"] == result["harm_category"]
        assert found["rampart.observability_level"] == result["observability_level"]
        assert found["rampart.check.polarity"] == result["polarity"]
        severity = {"safe": "INFO", "unsafe": "WARN", "undetermined": "WARN"}[result["status"]]
        assert record.severity_text == severity
        seen.add((trace_id, check))
    assert seen == set(offline)
    assert all(r.headers.get("x-api-key") == "k1" for r in sink.requests("logs"))
    assert {r.transport for r in sink.requests("logs")} == {protocol.split("/")[0]}


def test_a_down_endpoint_neither_stops_nor_holds_back_scoring(tmp_path: Path) -> None:
    with closed_port() as port:  # nothing listens on it, for the whole test
        collector = start_in_process(
            tmp_path / "data",
            policies=[str(POLICY)],
            **{
                "assembly.idle_seconds": 0.3,
                "export.otlp.endpoint": f"http://127.0.0.1:{port}",
                "export.otlp.timeout_seconds": 1,
            },
        )
        expected = len(SAMPLES) * CHECKS
        try:
            code, _ = replay(SAMPLES, collector.traces_url, "http/protobuf", {}, io.StringIO())
            assert code == 0
            scored = "rampart_otel_runs_scored_total"
            wait_for(lambda: metric(collector, scored) == len(SAMPLES), 120)
            wait_for(lambda: metric(collector, FAILED) == expected, 120, "the failures counted")
            assert metric(collector, EXPORTED) == 0
            verdicts = sum(
                metric(collector, f'rampart_otel_verdicts_total{{status="{status}"}}')
                for status in ("safe", "unsafe", "undetermined", "error")
            )
            assert verdicts == expected  # every verdict stored all the same
        finally:
            collector.stop()

"""The ``gen_ai.evaluation.result`` mapping: which span a verdict is tied to, and the
attributes of the statuses the live collector test does not meet (error, session runs)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from evaluation.judge_server import Reply, judge_server
from span_factory import mk

from rampart_otel.channels import CoverageSource
from rampart_otel.evaluation import CheckResult, SafetyStatus
from rampart_otel.exporters.otlp_verdicts import (
    VerdictExporter,
    evaluation_attributes,
    make_log_exporter,
    verdict_events,
)
from rampart_otel.model import Run
from rampart_otel.sinks import Scored

T1, T2 = "1" * 32, "2" * 32
RUN = Run("conv-1", [T1], [], "conv-1", 2)


def row(status: str, result: dict) -> CheckResult:
    return CheckResult(
        "conv-1",
        [T1],
        "no-shell",
        "",
        SafetyStatus(status),
        result.get("summary", ""),
        service="agent",
        error=result.get("error"),
        assumed_channels={
            key: CoverageSource(source)
            for key, source in result.get("assumed_channels", {}).items()
        },
        policy="guard",
        policy_version=result.get("policy", {}).get("version"),
    )


def test_a_session_run_is_tied_to_its_earliest_root_and_names_every_trace() -> None:
    spans = [
        mk("b" * 16, "invoke_agent", trace_id=T2, start=200),
        mk("c" * 16, "execute_tool", trace_id=T2, parent="b" * 16, start=210),
        mk("a" * 16, "invoke_agent", {"gen_ai.response.id": "resp-9"}, trace_id=T1, start=100),
    ]
    run = Run("conv-1", [T1, T2], spans, "conv-1", 2)
    (event,) = verdict_events(
        run, [row("safe", {"summary": "ok", "policy": {"version": "3"}})], scored_at=1.5
    )
    assert (event.trace_id, event.span_id) == (T1, "a" * 16)
    assert event.timestamp_ns == 1_500_000_000 and event.severity == "INFO"
    assert event.attributes == {
        "gen_ai.evaluation.name": "no-shell",
        "gen_ai.evaluation.score.label": "safe",
        "gen_ai.evaluation.score.value": 1.0,
        "gen_ai.evaluation.explanation": "ok",
        "gen_ai.response.id": "resp-9",
        "rampart.policy.name": "guard",
        "rampart.policy.version": "3",
        "rampart.run.id": "conv-1",
        "rampart.run.revision": 2,
        "rampart.trace_ids": [T1, T2],
        "rampart.service.name": "agent",
    }


def test_an_error_verdict_has_a_low_cardinality_error_type_and_no_score_value() -> None:
    failed = evaluation_attributes(
        row("error", {"summary": "Run could not be read: KeyError: 'x'", "error": "KeyError: 'x'"}),
        RUN,
    )
    assert failed["error.type"] == "KeyError"
    assert "gen_ai.evaluation.score.value" not in failed
    odd = evaluation_attributes(row("error", {"summary": "the evaluator crashed (3 times)"}), RUN)
    assert odd["error.type"] == "_OTHER"
    undetermined = evaluation_attributes(
        row("undetermined", {"summary": "gap", "assumed_channels": {"side_effects.x": "assumed"}}),
        RUN,
    )
    assert "gen_ai.evaluation.score.value" not in undetermined
    assert undetermined["rampart.assumed_channels"] == ["side_effects.x"]


def _export(url: str, timeout: float) -> tuple[dict[str, int], float]:
    """Three verdicts through the real HTTP log exporter to ``url``: the counts, the seconds."""
    exporter = VerdictExporter(make_log_exporter(url, "http/protobuf", {}, timeout))
    results = [row(status, {"summary": status}) for status in ("safe", "unsafe", "error")]
    started = time.monotonic()
    exporter.submit([Scored(RUN, results, scored_at=1.0)])
    exporter.close(timeout=30)
    return exporter.report(), time.monotonic() - started


def test_a_redirect_is_a_failed_export_and_nothing_goes_elsewhere() -> None:
    with judge_server(lambda body, n: Reply(), host="127.0.0.2") as elsewhere:
        moved = Reply(status=307, body=b"", headers={"Location": elsewhere.url})
        with judge_server(lambda body, n: moved) as server:
            report, _ = _export(server.url, timeout=5)
    assert report["exported"] == 0 and report["failed"] == 3, report
    assert len(server.requests) == 1 and elsewhere.requests == []
    with judge_server(lambda body, n: Reply(body=b"")) as server:  # a 200: delivered
        report, _ = _export(server.url, timeout=5)
    assert report["exported"] == 3 and report["failed"] == 0, report


@pytest.mark.parametrize("status", [200, 503])
def test_the_timeout_bounds_an_export_to_a_trickling_endpoint(status: int) -> None:
    def trickle() -> Iterator[bytes]:  # 20 bytes, one each 0.5 s: 10 s for the answer
        for _ in range(20):
            yield b" "
            time.sleep(0.5)

    reply = Reply(status=status, stream=trickle, length=20, headers={"Retry-After": "0"})
    with judge_server(lambda body, n: reply) as server:
        report, seconds = _export(server.url, timeout=2)
    assert report["exported"] == 0 and report["failed"] == 3, report
    assert seconds < 2 + 3, seconds  # the timeout holds, retries included

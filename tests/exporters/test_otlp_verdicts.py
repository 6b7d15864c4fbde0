"""The ``gen_ai.evaluation.result`` mapping: which span a verdict is tied to, and the
attributes of the statuses the live collector test does not meet (error, session runs)."""

from __future__ import annotations

from span_factory import mk

from rampart_otel.channels import CoverageSource
from rampart_otel.evaluation import CheckResult, SafetyStatus
from rampart_otel.exporters.otlp_verdicts import evaluation_attributes, verdict_events
from rampart_otel.model import Run

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

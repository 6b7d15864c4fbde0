"""What a verdict written back to a trace store says (the stores themselves: the
phoenix:// and mlflow:// tests in tests/receivers/stores/)."""

from __future__ import annotations

from rampart_otel.evaluation import CheckResult, SafetyStatus
from rampart_otel.evaluation.outcome import Evidence
from rampart_otel.exporters.store_annotations import (
    EVIDENCE_ITEMS,
    EXPLANATION_CHARS,
    explanation,
    identifier,
    metadata,
)
from rampart_otel.model import Run


def _result(**fields: object) -> CheckResult:
    base: dict = {
        "run_id": "r1",
        "trace_ids": ["t1"],
        "check_id": "no-exfiltration",
        "polarity": "attack",
        "status": SafetyStatus.UNSAFE,
        "summary": "Attack detected: POST http://evil/upload",
        "policy": "guard",
        "policy_version": 3,
    }
    return CheckResult(**{**base, **fields})  # type: ignore[arg-type]


def test_the_explanation_is_the_reason_then_the_evidence() -> None:
    evidence = [Evidence("t1", f"s{i}", f"POST {i}") for i in range(EVIDENCE_ITEMS + 2)]
    text = explanation(_result(evidence=evidence))
    assert text.splitlines()[:3] == [
        "Attack detected: POST http://evil/upload",
        "Evidence:",
        "- POST 0",
    ]
    assert text.splitlines()[-1] == "- and 2 more"
    assert len(explanation(_result(summary="x" * 10_000))) == EXPLANATION_CHARS


def test_a_new_policy_version_is_a_new_identifier() -> None:
    assert identifier(_result()) == "rampart-otel:guard@v3"
    assert identifier(_result(policy_version=4)) != identifier(_result())


def test_metadata_is_strings_and_names_the_scoring() -> None:
    run = Run(run_id="r1", trace_ids=["t1", "t2"], spans=[])
    data = metadata(_result(harm_category=None), run)
    assert all(isinstance(value, str) for value in data.values())
    assert data["policy_version"] == "3" and data["trace_ids"] == "t1,t2"
    assert "harm_category" not in data

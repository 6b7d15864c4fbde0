"""What a verdict written back to a trace store says (the stores themselves: the
phoenix:// and mlflow:// tests in tests/receivers/stores/)."""

from __future__ import annotations

import pytest
from span_factory import TRACE, mk

from rampart_otel.evaluation import CheckResult, SafetyStatus
from rampart_otel.evaluation.outcome import Evidence
from rampart_otel.exporters.store_annotations import (
    EVIDENCE_ITEMS,
    EXPLANATION_CHARS,
    MlflowAnnotations,
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


@pytest.mark.parametrize(
    "answer",
    [
        ["not an object"],
        {"trace": "not an object"},
        {"trace": {"trace_info": {"assessments": "not a list"}}},
        {"trace": {"trace_info": {"assessments": ["x", {"source": "x"}, 7]}}},
        {  # ours by name and source, but no id to update or override
            "trace": {
                "trace_info": {
                    "assessments": [
                        {
                            "assessment_name": "rampart:no-exfiltration",
                            "source": {"source_id": "rampart-otel"},
                            "metadata": {"identifier": "rampart-otel:guard@v3"},
                        },
                        {
                            "assessment_name": "rampart:no-exfiltration",
                            "source": {"source_id": "rampart-otel"},
                            "metadata": "not an object",
                            "assessment_id": ["not text"],
                        },
                    ]
                }
            }
        },
    ],
)
def test_mlflow_assessments_of_the_wrong_shape_are_written_anew(answer: object) -> None:
    """What the store answers about a trace's assessments is the store's: read what is of
    MLflow's shape, and write a new assessment rather than fail on the rest."""
    sent: list[tuple[str, str, dict]] = []

    def send(method: str, path: str, **kwargs: object) -> object:
        sent.append((method, path, kwargs))
        return answer if method == "GET" else {}

    run = Run(run_id="r1", trace_ids=[TRACE], spans=[mk("00000000000000aa", "agent")])
    assert MlflowAnnotations(send).write(run, [_result()]) == 1
    assert [method for method, _, _ in sent] == ["GET", "POST"]
    assert "overrides" not in sent[1][2]["json"]["assessment"]  # type: ignore[index]

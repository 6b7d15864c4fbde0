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
    AnnotationSink,
    MlflowAnnotations,
    PhoenixAnnotations,
    RunAnnotation,
    explanation,
    identifier,
    metadata,
    run_annotation,
    worst,
)
from rampart_otel.model import Run
from rampart_otel.receivers.stores import TraceStoreError
from rampart_otel.sinks import Scored


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

    assert MlflowAnnotations(send).write(_annotation([_result()])) == 1
    assert [method for method, _, _ in sent] == ["GET", "POST", "POST", "PATCH", "PATCH"]
    assert "overrides" not in sent[1][2]["json"]["assessment"]  # type: ignore[index]


def _run() -> Run:
    return Run(run_id="r1", trace_ids=[TRACE], spans=[mk("00000000000000aa", "agent")])


def _annotation(results: list[CheckResult], **options: bool) -> RunAnnotation:
    annotation = run_annotation(Scored(_run(), results), **options)
    assert annotation is not None
    return annotation


def _checks() -> list[CheckResult]:
    return [
        _result(check_id="answers", status=SafetyStatus.SAFE, summary="Expected behaviour"),
        _result(check_id="no-db", status=SafetyStatus.UNDETERMINED, summary="Undetermined"),
        _result(),
        _result(check_id="no-shell", status=SafetyStatus.ERROR, summary="Error: boom"),
    ]


def test_the_rollup_is_the_worst_verdict_and_names_the_failing_checks() -> None:
    rollup = _annotation(_checks()).rollup
    assert (rollup.name, rollup.verdict, rollup.identifier) == ("rampart", "unsafe", "rampart-otel")
    assert rollup.explanation.splitlines() == [
        "UNSAFE: no-exfiltration (1 of 4 checks)",
        "- no-exfiltration: Attack detected: POST http://evil/upload",
        "- no-shell: Error: boom",
    ]
    assert rollup.metadata["failing_checks"] == "no-exfiltration,no-shell"
    assert worst(["safe", "undetermined"]) == "undetermined"
    assert worst(["safe", "error", "undetermined"]) == "error"
    safe = _annotation([_result(status=SafetyStatus.SAFE, summary="Attack not detected")])
    assert (safe.rollup.verdict, safe.rollup.explanation) == ("safe", "SAFE: all 1 checks")


def test_an_annotation_survives_json_as_the_collector_queues_it() -> None:
    import json

    annotation = _annotation(_checks(), session=True)
    again = RunAnnotation.from_json(json.loads(json.dumps(annotation.as_json())))
    assert again == annotation


def test_secrets_are_masked_unless_shown() -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    evidence = [Evidence("t1", "s1", f"send_report(token={token})")]
    masked = _annotation([_result(evidence=evidence)])
    shown = _annotation([_result(evidence=evidence)], show_secrets=True)
    assert token not in masked.checks[0].explanation and "masked" in masked.checks[0].explanation
    assert token in shown.checks[0].explanation


def test_phoenix_gets_trace_annotations_under_configs_that_colour_them() -> None:
    sent: list[tuple[str, str, dict]] = []

    def send(method: str, path: str, **kwargs: object) -> object:
        sent.append((method, path, kwargs))
        return {}

    writer = PhoenixAnnotations(send, "my project")
    assert writer.write(_annotation(_checks())) == 4
    configs = [kw["json"] for method, path, kw in sent if path == "/v1/annotation_configs"]
    assert [c["name"] for c in configs] == [
        "rampart",
        "rampart:answers",
        "rampart:no-db",
        "rampart:no-exfiltration",
        "rampart:no-shell",
    ]
    scores = {v["label"]: v["score"] for v in configs[0]["values"]}
    assert scores == {"unsafe": 0.0, "error": 0.25, "undetermined": 0.5, "safe": 1.0}
    assigned = [path for method, path, _ in sent if method == "PUT"]
    assert assigned[0] == "/v1/projects/my%20project/annotation_configs/rampart"
    ((_, _, posted),) = [item for item in sent if item[1] == "/v1/trace_annotations"]
    data = posted["json"]["data"]
    assert [d["name"] for d in data][:2] == ["rampart", "rampart:answers"]
    assert {d["trace_id"] for d in data} == {TRACE}
    assert [(d["result"]["label"], d["result"]["score"]) for d in data] == [
        ("unsafe", 0.0), ("safe", 1.0), ("undetermined", 0.5), ("unsafe", 0.0), ("error", 0.25)
    ]  # fmt: skip
    # The configs are made once per writer; a conversation is annotated as a session too.
    sent.clear()
    run = _run()
    run.session_id = "conversation-1"
    conversation = run_annotation(Scored(run, _checks()), session=True)
    assert conversation is not None
    writer.write(conversation)
    assert [path for _, path, _ in sent] == ["/v1/trace_annotations", "/v1/session_annotations"]
    assert {d["session_id"] for d in sent[1][2]["json"]["data"]} == {"conversation-1"}


def test_a_phoenix_config_that_exists_is_used() -> None:
    def send(method: str, path: str, **kwargs: object) -> object:
        if path == "/v1/annotation_configs":
            raise TraceStoreError("phoenix://x/default: Phoenix answered POST with HTTP 409: taken")
        return {}

    assert PhoenixAnnotations(send, "default").write(_annotation([_result()])) == 1


def test_mlflow_values_are_the_ones_it_colours_and_the_rollup_comes_last() -> None:
    sent: list[tuple[str, str, dict]] = []

    def send(method: str, path: str, **kwargs: object) -> object:
        sent.append((method, path, kwargs))
        return {}

    assert MlflowAnnotations(send).write(_annotation(_checks())) == 4
    posted = [kw["json"]["assessment"] for method, _, kw in sent if method == "POST"]
    assert [(a["assessment_name"], a["feedback"].get("value")) for a in posted] == [
        ("rampart:answers", "pass"),
        ("rampart:no-db", "undetermined"),
        ("rampart:no-exfiltration", "fail"),
        ("rampart:no-shell", None),
        ("rampart", "fail"),
    ]
    assert posted[3]["feedback"]["error"]["error_message"] == "Error: boom"
    tags = [kw["json"] for method, path, kw in sent if path.endswith("/tags")]
    assert tags == [
        {"key": "rampart_otel.verdict", "value": "unsafe"},
        {"key": "rampart_otel.failing", "value": "no-exfiltration,no-shell"},
    ]


def test_score_annotate_goes_on_past_a_store_that_refuses_and_counts_what_it_could_not_write() -> (
    None
):
    calls = []

    class Refusing:
        store = "Phoenix"

        def write(self, annotation: RunAnnotation) -> int:
            calls.append(annotation.run_id)
            if annotation.run_id in ("r2", "r3", "r4", "r5"):
                raise TraceStoreError("Phoenix answered POST /v1/trace_annotations with HTTP 503")
            return len(annotation.checks)

    sink = AnnotationSink(Refusing())  # type: ignore[arg-type]
    runs = [Run(run_id=f"r{n}", trace_ids=[TRACE], spans=[mk("00000000000000aa", "agent")])
            for n in range(1, 8)]  # fmt: skip
    sink.write([sink.prepare(Scored(run, [_result(run_id=run.run_id)])) for run in runs])
    assert calls == ["r1", "r2", "r3", "r4"]  # three refused in a row: the rest not tried
    assert sink.summary() == "annotated 1 verdicts on 1 runs in Phoenix"
    failure = sink.failure()
    assert failure is not None and failure.startswith(
        "6 verdicts on 6 runs were not written back to Phoenix; after 3 runs refused in a row"
    )
    assert "HTTP 503" in failure

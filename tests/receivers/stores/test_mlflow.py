"""mlflow:// sources and --annotate against a real MLflow tracking server (``mlflow server``)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import yaml
from cli_runner import run_cli
from trace_stores import BENIGN, EXFIL, POLICY, send, spans_in, wait_for_spans

from rampart_otel import score_files
from rampart_otel.receivers.stores import parse_store_url, read_store

pytestmark = [pytest.mark.stores, pytest.mark.slow]  # a server started per worker
TRACE = "tr-9eabfebdb8b003e645c9dab8a4a5e7ca"  # MLflow's id of the exfiltration trace


@pytest.fixture(scope="module")
def mlflow(mlflow_server: str) -> str:
    """The server, with an experiment ``agents`` holding the exfiltration sample."""
    created = httpx.post(
        f"http://{mlflow_server}/api/2.0/mlflow/experiments/create", json={"name": "agents"}
    )
    experiment = created.json()["experiment_id"]
    send(EXFIL, f"http://{mlflow_server}/v1/traces", {"x-mlflow-experiment-id": experiment})
    wait_for_spans(f"mlflow://{mlflow_server}/agents", spans_in(EXFIL))
    return mlflow_server


def test_the_exfiltration_sample_scores_from_mlflow_as_from_the_file(mlflow: str) -> None:
    from_file = score_files(EXFIL, POLICY)
    by_name = score_files(f"mlflow://{mlflow}/agents", POLICY)
    assert [(r.run_id, r.check_id, r.status, r.summary, r.service) for r in by_name] == [
        (r.run_id, r.check_id, r.status, r.summary, r.service) for r in from_file
    ]
    assert {r.status.value for r in by_name} == {"unsafe", "safe", "undetermined"}


def test_spans_come_back_as_sent_but_for_kind_scope_and_mlflow_own_attributes(
    mlflow: str,
) -> None:
    from rampart_otel.receivers.files import read_paths

    sent = {s.span_id: s for batch in read_paths([EXFIL]) for s in batch}  # type: ignore[union-attr]
    read = [s for batch in read_store(parse_store_url(f"mlflow://{mlflow}/agents")) for s in batch]
    assert {s.span_id for s in read} == set(sent)
    for span in read:
        original = sent[span.span_id]
        assert (span.name, span.parent_span_id) == (original.name, original.parent_span_id)
        assert (span.start_ns, span.end_ns) == (original.start_ns, original.end_ns)
        assert span.status_code == original.status_code
        assert span.resource.service_name == "weather-agent"
        assert span.scope.name == "scope not kept by MLflow"
        assert not any(key.startswith("mlflow.") for key in span.attributes)
        # JSON-looking strings come back as the same JSON (MLflow parsed them on the way in).
        for key, value in original.attributes.items():
            if isinstance(value, str) and value.startswith("{"):
                assert json.loads(span.attributes[key]) == json.loads(value), key
            else:
                assert span.attributes[key] == value, key


def test_an_unknown_experiment_is_one_line(mlflow: str) -> None:
    done = run_cli("inspect", f"mlflow://{mlflow}/no-such-experiment")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "Could not find experiment with name 'no-such-experiment'" in done.stderr


def _assessments(mlflow: str) -> list[dict]:
    body = httpx.get(f"http://{mlflow}/api/3.0/mlflow/traces/{TRACE}").json()
    return body["trace"]["trace_info"].get("assessments", [])


def test_annotate_writes_one_assessment_per_check_and_a_new_version_overrides(
    mlflow: str, tmp_path: Path
) -> None:
    url = f"mlflow://{mlflow}/agents"
    results = {r.check_id: r for r in score_files(url, POLICY)}
    for _ in range(2):
        done = run_cli("score", url, "--policy", POLICY, "--annotate")
        assert done.returncode == 1, done.stderr
        assert "annotated 6 verdicts on 1 runs in MLflow" in done.stderr
    written = _assessments(mlflow)
    assert sorted(a["assessment_name"] for a in written) == sorted(
        f"rampart:{check}" for check in results
    )
    for assessment in written:
        result = results[assessment["assessment_name"].removeprefix("rampart:")]
        assert assessment["source"] == {"source_type": "CODE", "source_id": "rampart-otel"}
        assert assessment["feedback"]["value"] == result.status.value
        assert assessment["rationale"].startswith(result.summary)
        assert assessment["metadata"]["policy_version"] == "1"
    policy = yaml.safe_load(POLICY.read_text())
    policy["version"] = 2
    newer = tmp_path / "policy.yaml"
    newer.write_text(yaml.safe_dump(policy))
    assert run_cli("score", url, "--policy", newer, "--annotate").returncode == 1
    rescored = _assessments(mlflow)
    current = [a for a in rescored if a.get("valid", True)]
    assert len(current) == len(results)
    assert {a["metadata"]["policy_version"] for a in current} == {"2"}
    assert {a["metadata"]["policy_version"] for a in rescored} == {"1", "2"}


def test_pages_window_and_limit(mlflow: str) -> None:
    created = httpx.post(
        f"http://{mlflow}/api/2.0/mlflow/experiments/create", json={"name": "paged"}
    ).json()["experiment_id"]
    samples = [BENIGN, BENIGN.with_name("openinference-no-tool.jsonl")]
    for sample in samples:
        send(sample, f"http://{mlflow}/v1/traces", {"x-mlflow-experiment-id": created})
    url = f"mlflow://{mlflow}/{created}"  # by id this time
    wait_for_spans(url, sum(spans_in(sample) for sample in samples))
    whole = list(read_store(parse_store_url(url)))
    paged = list(read_store(parse_store_url(f"{url}?page=1")))
    assert len(whole) == 1 and len(paged) == 2  # one batch per page of traces
    assert sorted(s.span_id for b in paged for s in b) == sorted(
        s.span_id for b in whole for s in b
    )
    assert len({s.trace_id for s in whole[0]}) == 2
    (first,) = list(read_store(parse_store_url(f"{url}?limit=1")))
    assert len({s.trace_id for s in first}) == 1
    assert list(read_store(parse_store_url(f"{url}?since=2100-01-01"))) == []
    assert list(read_store(parse_store_url(f"{url}?until=2000-01-01"))) == []

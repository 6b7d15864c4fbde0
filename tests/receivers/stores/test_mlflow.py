"""mlflow:// sources and --annotate against a real MLflow tracking server (``mlflow server``)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import yaml
from cli_runner import run_cli
from store_standin import refusing_writes
from trace_stores import BENIGN, EXFIL, POLICY, send, spans_in, wait_for_spans

from rampart_otel import score_files
from rampart_otel.receivers.stores import parse_store_url, read_store
from rampart_otel.secret_values import mask_secrets

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


def _tags(mlflow: str) -> dict[str, str]:
    body = httpx.get(f"http://{mlflow}/api/3.0/mlflow/traces/{TRACE}").json()
    return body["trace"]["trace_info"]["tags"]


VALUE = {"safe": "pass", "unsafe": "fail", "undetermined": "undetermined"}


def test_annotate_writes_one_assessment_per_check_and_run_and_a_new_version_overrides(
    mlflow: str, tmp_path: Path
) -> None:
    url = f"mlflow://{mlflow}/agents"
    results = {r.check_id: r for r in score_files(url, POLICY)}
    for _ in range(2):
        done = run_cli("score", url, "--policy", POLICY, "--annotate")
        assert done.returncode == 1, done.stderr
        assert "annotated 6 verdicts on 1 runs in MLflow" in done.stderr
    written = _assessments(mlflow)
    # Rerun: one per check and one roll-up, updated in place, never duplicated.
    assert sorted(a["assessment_name"] for a in written) == sorted(
        ["rampart", *(f"rampart:{check}" for check in results)]
    )
    assert all(a.get("valid", True) for a in written)
    for assessment in written:
        assert assessment["source"] == {"source_type": "CODE", "source_id": "rampart-otel"}
        assert assessment["span_id"] == "034db723f691c18b"  # the run's root span
        if assessment["assessment_name"] == "rampart":
            continue
        result = results[assessment["assessment_name"].removeprefix("rampart:")]
        assert assessment["feedback"]["value"] == VALUE[result.status.value]
        assert assessment["rationale"].startswith(mask_secrets(result.summary))
        assert "tok_live_9f3a" not in assessment["rationale"]  # masked
        assert assessment["metadata"]["policy_version"] == "1"
        assert assessment["metadata"]["verdict"] == result.status.value
    (rollup,) = (a for a in written if a["assessment_name"] == "rampart")
    assert rollup["feedback"]["value"] == "fail"
    assert rollup["rationale"].startswith(
        "UNSAFE: no-exfiltration, no-secrets-in-reports, no-unrequested-reports (3 of 6 checks)"
    )
    tags = _tags(mlflow)
    assert tags["rampart_otel.verdict"] == "unsafe"
    assert tags["rampart_otel.failing"] == (
        "no-exfiltration,no-secrets-in-reports,no-unrequested-reports"
    )
    # The list can be filtered by verdict (MLflow's own search, over the tag).
    found = httpx.post(
        f"http://{mlflow}/api/3.0/mlflow/traces/search",
        json={
            "locations": [
                {"type": "MLFLOW_EXPERIMENT", "mlflow_experiment": {"experiment_id": "1"}}
            ],
            "filter": "tag.`rampart_otel.verdict` = 'unsafe'",
        },
    ).json()
    assert [t["trace_id"] for t in found["traces"]] == [TRACE]
    # Our tags are not read back as the agent's resource: the verdicts are unchanged.
    again = score_files(url, POLICY)
    assert {r.check_id: r.status for r in again} == {c: r.status for c, r in results.items()}
    assert all("rampart_otel" not in str(r.service) for r in again)
    policy = yaml.safe_load(POLICY.read_text())
    policy["version"] = 2
    newer = tmp_path / "policy.yaml"
    newer.write_text(yaml.safe_dump(policy))
    assert run_cli("score", url, "--policy", newer, "--annotate").returncode == 1
    rescored = _assessments(mlflow)
    current = [a for a in rescored if a.get("valid", True) and a["assessment_name"] != "rampart"]
    assert len(current) == len(results)
    assert {a["metadata"]["policy_version"] for a in current} == {"2"}
    checks = [a for a in rescored if a["assessment_name"] != "rampart"]
    assert {a["metadata"]["policy_version"] for a in checks} == {"1", "2"}
    assert len([a for a in rescored if a["assessment_name"] == "rampart"]) == 1


def test_findings_name_the_trace_and_link_to_it_in_mlflow(mlflow: str) -> None:
    done = run_cli("score", f"mlflow://{mlflow}/agents", "--policy", POLICY, "--format", "json")
    link = f"http://{mlflow}/#/experiments/1/traces?traceId={TRACE}"
    results = json.loads(done.stdout)["results"]
    assert {tuple(r["sources"]) for r in results} == {(link,)}
    terminal = run_cli("score", f"mlflow://{mlflow}/agents", "--policy", POLICY)
    assert f"http://{mlflow}/#/experiments/1/traces?traceId=  1 trace, 1 run" in terminal.stdout
    assert f"  FAIL  {TRACE}" in terminal.stdout
    assert f"1 run {link}" in terminal.stdout
    assert "(not read from a file)" not in terminal.stdout


def test_annotate_with_mlflow_refusing_writes_keeps_the_report(mlflow: str, tmp_path: Path) -> None:
    report = tmp_path / "report.xml"
    with refusing_writes(mlflow) as (gateway, refused):
        done = run_cli(
            "score", f"mlflow://{gateway}/agents", "--policy", POLICY, "--annotate",
            "--format", "junit", "-o", report,
        )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert report.read_text().count("<testcase ") == 6
    assert "error: 6 verdicts on 1 runs were not written back to MLflow: " in done.stderr
    assert "HTTP 503" in done.stderr and refused


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

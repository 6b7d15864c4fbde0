"""phoenix:// sources and --annotate against a real Phoenix server (``phoenix serve``)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import yaml
from cli_runner import run_cli
from store_standin import refusing_writes
from trace_stores import (
    BENIGN,
    EXFIL,
    POLICY,
    in_phoenix_project,
    send,
    spans_in,
    wait_for_spans,
)

from rampart_otel import score_files
from rampart_otel.receivers.stores import parse_store_url, read_store
from rampart_otel.receivers.stores.phoenix import DROPPED
from rampart_otel.secret_values import mask_secrets

pytestmark = [pytest.mark.stores, pytest.mark.slow]  # a server started per worker


@pytest.fixture(scope="module")
def phoenix(phoenix_server: str) -> str:
    """The server, holding the exfiltration and benign samples (sent over OTLP/HTTP)."""
    send(EXFIL, f"http://{phoenix_server}/v1/traces")
    send(BENIGN, f"http://{phoenix_server}/v1/traces")
    wait_for_spans(f"phoenix://{phoenix_server}/default", spans_in(EXFIL) + spans_in(BENIGN))
    return phoenix_server


def _verdicts(results: list) -> dict[tuple[str, str], tuple[str, str]]:
    return {(r.run_id, r.check_id): (r.status.value, r.summary) for r in results}


def test_the_exfiltration_sample_scores_from_phoenix_as_from_the_file(phoenix: str) -> None:
    from_file = score_files([EXFIL, BENIGN], POLICY)
    from_store = score_files(f"phoenix://{phoenix}/default", POLICY)
    assert _verdicts(from_store) == _verdicts(from_file)
    assert {r.status.value for r in from_store} >= {"unsafe", "safe", "undetermined"}
    # What Phoenix does not keep, and says so: the resource (service.name) and the scope.
    assert {r.service for r in from_file} == {"weather-agent"}
    assert {r.service for r in from_store} == {None}
    assert "resource attributes (service.name)" in DROPPED


def test_spans_come_back_with_the_scope_named_as_not_kept(phoenix: str) -> None:
    spans = [
        s for batch in read_store(parse_store_url(f"phoenix://{phoenix}/default")) for s in batch
    ]
    assert len(spans) == spans_in(EXFIL) + spans_in(BENIGN)
    assert {s.scope.name for s in spans} == {"scope not kept by Phoenix"}
    kinds = {s.attributes.get("openinference.span.kind") for s in spans}
    assert {"AGENT", "LLM", "TOOL"} <= kinds  # put back from Phoenix's own span_kind


def test_pages_of_one_trace_read_the_same_spans(phoenix: str) -> None:
    whole = list(read_store(parse_store_url(f"phoenix://{phoenix}/default")))
    paged = list(read_store(parse_store_url(f"phoenix://{phoenix}/default?page=1")))
    assert len(whole) == 1 and len(paged) == 2  # one batch per page of traces
    assert [s.span_id for b in paged for s in b] == [s.span_id for b in whole for s in b]


def test_limit_and_window_select_traces_by_start_time(phoenix: str) -> None:
    first = score_files(f"phoenix://{phoenix}/default?limit=1", POLICY)
    assert len({r.run_id for r in first}) == 1
    later = score_files(
        f"phoenix://{phoenix}/default?since=2100-01-01T00:00:00Z", POLICY, allow_empty=True
    )
    assert later == []


def test_errors_are_one_line_naming_the_store(phoenix: str) -> None:
    done = run_cli("score", f"phoenix://{phoenix}/no-such-project", "--policy", POLICY)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Phoenix answered" in done.stderr
    assert "Project with name no-such-project not found" in done.stderr


EXFIL_TRACE = "9eabfebdb8b003e645c9dab8a4a5e7ca"
SCORE = {"safe": 1.0, "undetermined": 0.5, "error": 0.25, "unsafe": 0.0}


def _annotations(phoenix: str, trace_id: str = EXFIL_TRACE) -> list[dict]:
    url = f"http://{phoenix}/v1/projects/default/trace_annotations"
    body = httpx.get(url, params={"trace_ids": trace_id, "limit": 1000}).json()
    return body["data"]


def test_annotate_writes_each_verdict_once_and_a_new_policy_version_beside_it(
    phoenix: str, tmp_path: Path
) -> None:
    url = f"phoenix://{phoenix}/default"
    results = score_files(url, POLICY)
    exfil_run = next(r for r in results if r.status.value == "unsafe").run_id
    for _ in range(2):
        done = run_cli("score", url, "--policy", POLICY, "--annotate")
        assert done.returncode == 1, done.stderr
        assert "annotated 12 verdicts on 2 runs in Phoenix" in done.stderr
    written = _annotations(phoenix)
    expected = {r.check_id: r for r in results if r.run_id == exfil_run}
    # Rerun: one trace annotation per check and one roll-up, upserted, never duplicated.
    assert sorted(a["name"] for a in written) == sorted(
        ["rampart", *(f"rampart:{c}" for c in expected)]
    )
    for annotation in written:
        assert annotation["annotator_kind"] == "CODE"
        if annotation["name"] == "rampart":
            continue
        result = expected[annotation["name"].removeprefix("rampart:")]
        assert annotation["result"]["label"] == result.status.value
        assert annotation["result"]["explanation"].startswith(mask_secrets(result.summary))
        assert "tok_live_9f3a" not in annotation["result"]["explanation"]  # masked
        assert annotation["result"]["score"] == SCORE[result.status.value]
        assert annotation["metadata"]["policy_version"] == "1"
    (rollup,) = (a for a in written if a["name"] == "rampart")
    assert (rollup["result"]["label"], rollup["result"]["score"]) == ("unsafe", 0.0)
    assert rollup["identifier"] == "rampart-otel"
    assert rollup["result"]["explanation"].startswith(
        "UNSAFE: no-exfiltration, no-secrets-in-reports, no-unrequested-reports (3 of 6 checks)"
    )
    # No span annotation any more (the grey "+6" on every row of the traces list).
    spans = httpx.get(
        f"http://{phoenix}/v1/projects/default/span_annotations",
        params={"span_ids": "034db723f691c18b", "limit": 1000},
    ).json()["data"]
    assert spans == []
    # Each name has a categorical config, assigned to the project: Phoenix colours by it.
    configs = httpx.get(f"http://{phoenix}/v1/projects/default/annotation_configs").json()
    by_name = {c["name"]: c for c in configs["data"]}
    assert set(by_name) >= {"rampart", *(f"rampart:{c}" for c in expected)}
    assert by_name["rampart"]["type"] == "CATEGORICAL"
    assert {v["label"]: v["score"] for v in by_name["rampart"]["values"]} == SCORE
    # A rescore under a new version of the policy: beside the old one, told apart; the
    # roll-up stays one.
    policy = yaml.safe_load(POLICY.read_text())
    policy["version"] = 2
    newer = tmp_path / "policy.yaml"
    newer.write_text(yaml.safe_dump(policy))
    assert run_cli("score", url, "--policy", newer, "--annotate").returncode == 1
    rescored = _annotations(phoenix)
    assert len(rescored) == 2 * len(expected) + 1
    assert {a["identifier"] for a in rescored} == {
        "rampart-otel",
        "rampart-otel:weather-agent-guard@v1",
        "rampart-otel:weather-agent-guard@v2",
    }


def test_findings_name_the_trace_and_link_to_it_in_phoenix(phoenix: str) -> None:
    project = httpx.get(f"http://{phoenix}/v1/projects/default").json()["data"]["id"]
    link = f"http://{phoenix}/projects/{project}/traces/{EXFIL_TRACE}"
    done = run_cli("score", f"phoenix://{phoenix}/default", "--policy", POLICY, "--format", "json")
    results = json.loads(done.stdout)["results"]
    assert {tuple(r["sources"]) for r in results if r["run_id"] == EXFIL_TRACE} == {(link,)}
    url = f"phoenix://{phoenix}/default"
    junit = run_cli("score", url, "--policy", POLICY, "--format", "junit")
    assert f"sources: {link}" in junit.stdout
    terminal = run_cli("score", f"phoenix://{phoenix}/default", "--policy", POLICY)
    assert f"http://{phoenix}/projects/{project}/traces/  2 traces, 2 runs" in terminal.stdout
    assert f"  FAIL  {EXFIL_TRACE}" in terminal.stdout
    assert f"1 run {link}" in terminal.stdout
    assert "(not read from a file)" not in terminal.stdout
    # and the link opens the trace (Phoenix serves its UI there)
    assert httpx.get(link).status_code == 200


def test_annotate_with_phoenix_refusing_writes_keeps_the_report(
    phoenix: str, tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    with refusing_writes(phoenix) as (gateway, refused):
        done = run_cli(
            "score", f"phoenix://{gateway}/default", "--policy", POLICY, "--annotate",
            "--format", "json", "-o", report,
        )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert len(json.loads(report.read_text())["results"]) == 12
    assert "error: 12 verdicts on 2 runs were not written back to Phoenix: " in done.stderr
    assert "HTTP 503" in done.stderr and refused


def test_paging_one_trace_at_a_time_reads_each_trace_once(phoenix: str) -> None:
    spans = [
        s
        for batch in read_store(parse_store_url(f"phoenix://{phoenix}/default?page=1"))
        for s in batch
    ]
    assert len(spans) == len({(s.trace_id, s.span_id) for s in spans})
    assert len({s.trace_id for s in spans}) == 2


NO_CONTENT = (
    EXFIL.parent / "openai-agents-openinference/openai-agents-openinference-no-content.jsonl"
)


def test_a_stop_phoenix_kept_no_scope_for_never_reads_as_no_tools(
    phoenix: str, tmp_path: Path
) -> None:
    # The OpenAI Agents instrumentation writes a response's status as its finish reason
    # ("stop" for every completed response); Phoenix drops the scope that says so. Read
    # back, this run was SAFE on no-shell while the file says UNDETERMINED.
    sample = in_phoenix_project(NO_CONTENT, "no-content", tmp_path)  # a project of its own
    send(sample, f"http://{phoenix}/v1/traces")
    url = f"phoenix://{phoenix}/no-content"
    wait_for_spans(url, spans_in(NO_CONTENT))
    from_file = {r.check_id: r.status.value for r in score_files(NO_CONTENT, POLICY)}
    from_store = {r.check_id: r.status.value for r in score_files(url, POLICY)}
    assert from_file["no-shell"] == "undetermined"
    assert from_store["no-shell"] == "undetermined"
    for check, status in from_store.items():  # never safer than the file
        assert status != "safe" or from_file[check] == "safe", check

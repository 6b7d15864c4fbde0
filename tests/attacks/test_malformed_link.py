"""#45.8: one malformed link hides a whole run? A link whose trace id is 3 bytes breaks the
OTLP id rule: the span carrying it is refused (kept as a placeholder, its content not read)
and the answer says its trace is "scored without their content, as incomplete". Whoever can
add a link to the span that records the harm (here the exfiltrating POST) must not remove the
run's verdict: on every receiver path the run is scored, UNDETERMINED with a ``refused_span``
reason, never SAFE and never missing.

At main 4c8ffdc these pass as well (the run was scored on every path tried): they guard the
promise the partial-success answer makes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from collector.harness import start_in_process, wait_for
from forgery import POLICY, TRACE, UPLOAD, recording, send, spans_of, write_jsonl

from attacks.test_conflicting_copies import stored, verdict
from rampart_otel.api import policy_of
from rampart_otel.pipeline import FileSource, Pipeline

BAD_LINK = {"traceId": "010203", "spanId": "0102030405060708"}  # a 3-byte trace id
OTHERS = ("openllmetry-benign", "openllmetry-declared")  # the request's other traces


def linked() -> list[dict]:
    """The recording with a malformed link on the span that records the harm."""
    documents = recording()
    for document in documents:
        for span in spans_of(document):
            if span["spanId"] == UPLOAD:
                span["links"] = [BAD_LINK]
    return documents


def others() -> list[dict]:
    root = POLICY.parent / "traces"
    return [
        json.loads(line)
        for name in OTHERS
        for line in (root / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    ]


def one_request(documents: list[dict]) -> dict:
    """Every document's resource spans in one export request."""
    return {"resourceSpans": [rs for d in documents for rs in d["resourceSpans"]]}


def test_from_a_file_the_run_is_scored_as_incomplete(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "run.jsonl", [*linked(), *others()])
    source = FileSource([path])
    pipeline = Pipeline([policy_of(POLICY)])
    results = [result for run in source.runs() for result in pipeline.score(run).results]
    assert [error.location for error in source.stats.errors] == [f"{path}:2"]  # named
    assert len({result.run_id for result in results}) == 3
    status, reasons = verdict([r for r in results if r.run_id == TRACE])
    assert status == "undetermined"
    assert "refused for breaking the OTLP id rule" in reasons


@pytest.mark.parametrize("protocol", ["http/protobuf", "http/json", "grpc"])
def test_over_the_collector_the_run_is_scored_as_incomplete(tmp_path: Path, protocol: str) -> None:
    collector = start_in_process(
        tmp_path / "data", policies=[str(POLICY)], **{"assembly.idle_seconds": "1"}
    )
    try:
        endpoint = (
            collector.http_url if protocol.startswith("http") else f"http://{collector.grpc_target}"
        )
        (answer,) = send(endpoint, [one_request([*linked(), *others()])], protocol)
        assert answer.rejected == 1 and "scored without their content" in answer.message
        result = wait_for(lambda: stored(tmp_path / "data"), 120, "the linked run's verdict")
    finally:
        collector.stop()
    assert result["status"] == "undetermined", result["summary"]
    assert "refused for breaking the OTLP id rule" in json.dumps(result)

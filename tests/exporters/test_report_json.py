"""The streamed report@1 writer assembles each entry from pre-dumped parts; it must give the
same document as the plain serializer (``check_result_to_dict``), on every bundled sample."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rampart_otel.engine import score_run
from rampart_otel.evaluation import load_policy, summarize_population
from rampart_otel.exporters.report_json import (
    JsonReportWriter,
    check_result_to_dict,
    stored_documents,
)
from rampart_otel.exporters.serialize import jsonable
from rampart_otel.model import InputError
from rampart_otel.pipeline import ReadStats, runs

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples/traces"


def test_the_streamed_report_equals_the_plain_serializer_on_every_sample() -> None:
    policy = load_policy(REPO / "samples/policy.yaml")
    stats = ReadStats()
    results = [r for run in runs([SAMPLES], stats) for r in score_run(run, [policy])]
    assert len(results) > 500 and {r.status.value for r in results} >= {
        "safe",
        "unsafe",
        "undetermined",
    }
    out = io.StringIO()
    writer = JsonReportWriter(out)
    writer.start([{"name": policy.name, "version": policy.version}])
    for result in results:
        writer.add(result)
    errors = [InputError("x.jsonl:1", "bad line")]
    writer.finish(summarize_population(results), errors)

    document = json.loads(out.getvalue())
    assert document["results"] == [jsonable(check_result_to_dict(r)) for r in results]
    # The same text, not only the same values: key order and escaping come from json.dumps.
    for line, result in zip(out.getvalue().splitlines()[1:], results, strict=False):
        assert line.rstrip(",") == json.dumps(jsonable(check_result_to_dict(result)))
    assert document["input_errors"] == [{"location": "x.jsonl:1", "message": "bad line"}]


def test_stored_documents_are_the_report_entries_with_revision_and_policy_on_every_sample():
    policy = load_policy(REPO / "samples/policy.yaml")
    checked = 0
    for run in runs([SAMPLES], ReadStats()):
        results = score_run(run, [policy])
        for result, (stored, text) in zip(
            results, stored_documents(results, revision=3), strict=True
        ):
            expected = jsonable(check_result_to_dict(result)) | {
                "revision": 3,
                "policy": {"name": policy.name, "version": policy.version},
            }
            assert stored == expected
            # The text json.dumps gives, key order and escaping included, though the parts
            # the run's results share were encoded once.
            assert text == json.dumps(expected)
            checked += 1
    assert checked > 500


def test_every_reason_of_every_sample_carries_its_code() -> None:
    """report@1's coverage: one ``reason_codes`` entry per reason, in order, from the closed
    set, with the spans it is about (ids of the run); ``fix`` codes the hint's reason."""
    from rampart_otel.channels import EVIDENCE_IDS, ReasonCode
    from rampart_otel.wording import FIX

    policy = load_policy(REPO / "samples/policy.yaml")
    codes: set[str] = set()
    for run in runs([SAMPLES], ReadStats()):
        span_ids = {span.span_id for span in run.spans}
        result = score_run(run, [policy])[0]
        entry = json.loads(JsonReportWriter(io.StringIO()).entry(result))
        for key, channel in entry["coverage"].items():
            coded = channel["reason_codes"]
            assert len(coded) == len(channel["reasons"]), (run.run_id, key)
            for text, reason in zip(channel["reasons"], coded, strict=True):
                code = ReasonCode(reason["code"])
                assert (code is ReasonCode.FIX) == text.startswith(FIX), (key, text)
                assert len(reason["span_ids"]) <= EVIDENCE_IDS
                assert set(reason["span_ids"]) <= span_ids, (key, reason)
                codes.add(code.value)
    assert len(codes) >= 30  # the samples reach most codes (tests/processors/test_reasons.py: all)

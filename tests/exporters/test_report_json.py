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
    run_line,
    runs_footer,
    runs_header,
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
    # A run's entries joined at once are the entries ``add`` writes one by one.
    joined = JsonReportWriter(io.StringIO()).entries(results)
    assert joined == "".join(",\n" + JsonReportWriter(io.StringIO()).entry(r) for r in results)


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


def test_the_runs_report_holds_each_report_entry_with_its_run_written_once_on_every_sample():
    """runs@1 (``--format jsonl``): a line per run; each result read back with its run's
    fields is report@1's entry for it, and the whole is a fraction of report@1's size."""
    policy = load_policy(REPO / "samples/policy.yaml")
    per_run = [score_run(run, [policy]) for run in runs([SAMPLES], ReadStats())]
    results = [result for scored in per_run for result in scored]
    policies = [{"name": policy.name, "version": policy.version}]
    lines = [runs_header(policies), *(run_line(scored) for scored in per_run if scored)]
    lines.append(runs_footer(summarize_population(results), [InputError("x:1", "bad")]))
    text = "".join(lines)
    header, *documents, footer = (json.loads(line) for line in text.splitlines())
    assert header == {"schema": "rampart-otel/runs@1", "policies": policies}
    read_back = [document["run"] | entry for document in documents for entry in document["results"]]
    assert read_back == [jsonable(check_result_to_dict(result)) for result in results]
    assert footer["input_errors"] == [{"location": "x:1", "message": "bad"}]
    assert footer["population_summary"]["overall"]["total"] == len(results)
    report = io.StringIO()
    writer = JsonReportWriter(report)
    writer.start(policies)
    for result in results:
        writer.add(result)
    writer.finish(summarize_population(results), [])
    assert len(text) < 0.5 * len(report.getvalue())

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
    stored_result,
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


def test_a_stored_result_is_the_report_entry_with_its_revision_and_policy() -> None:
    policy = load_policy(REPO / "samples/policy.yaml")
    (run,) = runs([SAMPLES / "openinference-exfil.jsonl"], ReadStats())
    for result in score_run(run, [policy]):
        stored, text = stored_result(result, revision=3)
        assert stored == jsonable(check_result_to_dict(result)) | {
            "revision": 3,
            "policy": {"name": policy.name, "version": policy.version},
        }
        assert json.loads(text) == stored

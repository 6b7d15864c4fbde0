"""The JSON texts a report writes directly (coverage, evidence, lists of strings) are the
text the general path (``dumps_jsonable`` of the plain form) gives, byte for byte."""

from __future__ import annotations

from pathlib import Path

from rampart_otel.channels import OBSERVED, ChannelCoverage, Coverage, Reason, ReasonCode
from rampart_otel.evaluation import Evidence
from rampart_otel.exporters import serialize
from rampart_otel.exporters.serialize import (
    coverage_json,
    coverage_to_dict,
    dumps_jsonable,
    evidence_json,
    strings_json,
)
from rampart_otel.pipeline import ReadStats, agent_runs

SAMPLES = Path(__file__).resolve().parents[2] / "samples/traces"


def test_every_samples_coverage_is_written_as_the_general_path_writes_it() -> None:
    seen = 0
    for run in agent_runs([SAMPLES], ReadStats()):
        assert coverage_json(run.coverage) == dumps_jsonable(coverage_to_dict(run.coverage))
        seen += 1
    assert seen > 50
    assert coverage_json(None) == "{}" == coverage_json(Coverage({}))


def test_text_that_needs_escaping_and_values_that_are_not_strings() -> None:
    odd = 'quote " backslash \\ newline \n non-ASCII é \u2028 lone \ud800'
    channel = ChannelCoverage(OBSERVED, [odd], hint=odd, codes=[Reason(ReasonCode.FIX, ("a", odd))])
    coverage = Coverage({odd: channel, "input": channel})
    assert coverage_json(coverage) == dumps_jsonable(coverage_to_dict(coverage))
    strange = Coverage({"x": ChannelCoverage(OBSERVED, [b"\x00", 1.5])})  # type: ignore[list-item]
    assert coverage_json(strange) == dumps_jsonable(coverage_to_dict(strange))
    for items in ([], [odd, "b"], [odd, None, 3, b"\xff", float("nan")]):
        assert strings_json(items) == dumps_jsonable(list(items))
    evidence = [Evidence("t", None, odd), Evidence(None, "s", "x")]
    plain = [{"trace_id": e.trace_id, "span_id": e.span_id, "text": e.text} for e in evidence]
    assert evidence_json(evidence) == dumps_jsonable(plain)
    unusual = [Evidence("t", 7, b"\x01")]  # type: ignore[arg-type]
    plain = [{"trace_id": "t", "span_id": 7, "text": b"\x01"}]
    assert evidence_json(unusual) == dumps_jsonable(plain)


def test_texts_remembered_are_written_as_worked_out_and_the_memo_is_bounded() -> None:
    """Reason texts, hints and span ids are looked up as JSON by value (``_ENCODED``): the
    same text as working it out, whether met first or again, and never more than its
    bound whatever the traces hold."""
    runs = list(agent_runs([SAMPLES], ReadStats()))
    serialize._ENCODED.clear()
    first = [coverage_json(run.coverage) for run in runs]  # worked out, then remembered
    again = [coverage_json(run.coverage) for run in runs]
    assert first == again == [dumps_jsonable(coverage_to_dict(run.coverage)) for run in runs]
    ids = ("s1", 'odd "id"')
    channel = ChannelCoverage(OBSERVED, ["a", "a"], hint="a", codes=[Reason(ReasonCode.FIX, ids)])
    for _ in range(2):
        coverage = Coverage({"input": channel, "response": channel})
        assert coverage_json(coverage) == dumps_jsonable(coverage_to_dict(coverage))
    assert serialize._ENCODED[ids] == '"s1", "odd \\"id\\""'
    for n in range(serialize._ENCODED_KEPT * 2 + 3):
        text = f"text {n}"
        lone = Coverage({"input": ChannelCoverage(OBSERVED, [text], hint=text)})
        assert coverage_json(lone) == dumps_jsonable(coverage_to_dict(lone))
        assert len(serialize._ENCODED) <= serialize._ENCODED_KEPT

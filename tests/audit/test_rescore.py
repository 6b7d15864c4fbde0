"""rescore re-evaluates each stored run exactly as its latest revision was scored -- the same
span set under the same revision number -- even when the segments hold the run in pieces;
runs it cannot rebuild, or that were never scored, are counted, never guessed."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import run_cli
from collector.harness import POLICY, make_traces, write_config
from collector.test_scorer import Clock, new_scorer
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from policy_typos import CASES, write

from rampart_otel.audit.rescore import _rescore
from rampart_otel.collector.scorer import make_evaluator
from rampart_otel.storage.results import ResultsStore, span_set
from rampart_otel.storage.segments import SegmentWriter, list_segments

# Version 2 turns the harmless "search" tool into the harm: every run becomes unsafe.
POLICY_V2 = POLICY.replace("version: 1", "version: 2").replace('"delete_file"', '"search"')


def segments(tmp_path: Path) -> list[Path]:
    return [path for _, path in list_segments(tmp_path / "segments")]


def test_a_run_in_pieces_is_rescored_as_its_latest_revision(tmp_path):
    write_config(tmp_path / "policy.yaml", POLICY)
    v2 = write_config(tmp_path / "policy-v2.yaml", POLICY_V2)
    writer = SegmentWriter(tmp_path / "segments")
    clock = Clock()
    scorer = new_scorer(tmp_path, clock)
    late, other = make_traces(1), make_traces(1)
    writer.append_wait(encode_spans(late[:2]).SerializeToString(), 30)
    scorer.step()
    clock.now = 10
    scorer.step()  # revision 0: two spans
    writer.append_wait(encode_spans(other).SerializeToString(), 30)
    writer.append_wait(encode_spans(late[2:]).SerializeToString(), 30)
    scorer.step()
    clock.now = 20
    scorer.step()  # revision 1 of `late`: all three spans; `other` revision 0
    never = make_traces(1)  # stored after the scorer's last step: never scored
    writer.append_wait(encode_spans(never).SerializeToString(), 30)
    writer.close()
    late_id, other_id = (f"{s[0].context.trace_id:032x}" for s in (late, other))
    store = scorer.store
    # A run whose latest revision names a span the segments no longer hold (retention),
    # and a stored run none of whose spans are left.
    with store.transaction() as txn:
        for run_id, ids in (("f" * 32, ["00000000000000aa"]), (other_id, ["00000000000000bb"])):
            known = [] if run_id != other_id else [f"{s.context.span_id:016x}" for s in other]
            packed, digest = span_set([*known, *ids])
            txn.add_run(run_id, 5, packed, digest, [run_id], "test-agent", None)

    # idle_spans=1: the offline assembler emits `late` in two pieces, as after a long gap
    stats = _rescore(store, segments(tmp_path), make_evaluator([v2], []), "test", "2", 1)
    assert (stats.rescored, stats.already, stats.unscored) == (1, 0, 1)
    assert stats.spans_missing == 1  # `other`: its revision 5 names a span that is gone
    assert stats.not_in_segments == 1  # "fff…": no span of it is left at all
    rows = store.db.execute(
        "SELECT run_id, revision, check_id, status, current FROM results"
        " WHERE policy_version = '2' ORDER BY check_id"
    ).fetchall()
    assert [(r[0], r[1], r[2], r[3], r[4]) for r in rows] == [
        (late_id, 1, "no-delete", "unsafe", 1),
        (late_id, 1, "no-exfiltration", "undetermined", 1),
    ]
    (document,) = [
        row.result
        for row in store.results()
        if row.policy_version == "2" and row.check_id == "no-delete"
    ]
    evidence = {e["span_id"] for e in document["evidence"]}
    assert evidence == {f"{s.context.span_id:016x}" for s in late[1:]}  # both tool spans

    again = _rescore(store, segments(tmp_path), make_evaluator([v2], []), "test", "2", 1)
    assert (again.rescored, again.already) == (0, 1)


def test_the_audit_time_of_a_rescored_run_is_the_run_start(tmp_path):
    write_config(tmp_path / "policy.yaml", POLICY)
    v2 = write_config(tmp_path / "policy-v2.yaml", POLICY_V2)
    writer = SegmentWriter(tmp_path / "segments")
    clock = Clock()
    scorer = new_scorer(tmp_path, clock)
    writer.append_wait(encode_spans(make_traces(3)).SerializeToString(), 30)
    writer.close()
    scorer.step()
    clock.now = 10
    scorer.step()
    store: ResultsStore = scorer.store
    _rescore(store, segments(tmp_path), make_evaluator([v2], []), "test", "2")
    times = store.db.execute(
        "SELECT run_id, policy_version, run_at, started_at_ns FROM results ORDER BY 1, 2"
    ).fetchall()
    assert len(times) == 12
    for _, _, run_at, started_at_ns in times:
        assert run_at == started_at_ns / 1e9


@pytest.mark.parametrize(("text", "where", "message"), CASES)
def test_rescore_refuses_a_wrong_word_in_the_policy_in_one_line(tmp_path, text, where, message):
    policy = write(tmp_path, text)
    result = run_cli("rescore", "--data-dir", tmp_path / "d", "--policy", policy, timeout=60)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"rampart-otel: error: {policy}:{where}: {message}\n"

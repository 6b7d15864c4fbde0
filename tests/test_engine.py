"""One engine for every host: a run whose normalization fails gets an ERROR verdict per check
from ``score`` (a complete JSON report, exit 1), from the collector's scorer and from
``rescore``, and every other run is scored as usual.

The failure is injected by wrapping the engine's ``normalize`` (no recorded trace makes it
fail; a bug one day might). ``score`` runs as a real subprocess, the collector's scorer and
``rescore`` over real segments.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from collector.harness import POLICY, make_traces, write_config
from collector.test_scorer import Clock, new_scorer
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from rampart_otel import engine
from rampart_otel.audit.rescore import _rescore
from rampart_otel.collector.scorer import make_evaluator
from rampart_otel.evaluation import SafetyStatus, evaluate_policy, load_policy
from rampart_otel.evaluation.plan import ScoringPlan
from rampart_otel.model import Run
from rampart_otel.pipeline import ReadStats, runs
from rampart_otel.storage.segments import SegmentWriter, list_segments

REPO = Path(__file__).resolve().parents[1]
SAMPLES = [
    REPO / "samples/traces/openinference-exfil.jsonl",
    REPO / "samples/traces/openllmetry-benign.jsonl",
    REPO / "samples/traces/pydantic-ai-exfil.jsonl",
]
SAMPLE_POLICY = REPO / "samples/policy.yaml"
UNREADABLE = "Run could not be read: RuntimeError: injected normalize failure"

# `rampart-otel score`, with normalize failing on the run named by argv[1].
SCORE_WITH_A_BROKEN_RUN = """
import sys
from rampart_otel import engine
from rampart_otel.cli import main

bad, real = sys.argv[1], engine.normalize

def normalize(run, *plan):
    if run.run_id == bad:
        raise RuntimeError("injected normalize failure")
    return real(run, *plan)

engine.normalize = normalize
sys.argv = ["rampart-otel", *sys.argv[2:]]
main()
"""


def break_normalize(monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    real = engine.normalize

    def normalize(run: Run, *plan: ScoringPlan):  # type: ignore[no-untyped-def]
        if run.run_id == bad:
            raise RuntimeError("injected normalize failure")
        return real(run, *plan)

    monkeypatch.setattr(engine, "normalize", normalize)


def score_json(*extra: str) -> subprocess.CompletedProcess[str]:
    args = ["score", *map(str, SAMPLES), "--policy", str(SAMPLE_POLICY), "--format", "json"]
    return subprocess.run(
        [sys.executable, "-c", SCORE_WITH_A_BROKEN_RUN, *extra, *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )


def test_score_reports_an_unreadable_run_as_errors_and_scores_the_others() -> None:
    run_ids = [run.run_id for run in runs(SAMPLES, ReadStats())]
    assert len(run_ids) == 3
    bad = run_ids[1]
    clean = score_json("no-such-run")
    broken = score_json(bad)

    assert broken.returncode == 2, broken.stderr  # an ERROR result: could not be evaluated
    report = json.loads(broken.stdout)  # complete and valid
    expected = json.loads(clean.stdout)
    checks = len(load_policy(SAMPLE_POLICY).checks)
    failed = [r for r in report["results"] if r["run_id"] == bad]
    assert len(failed) == checks
    assert all(r["status"] == "error" and r["summary"] == UNREADABLE for r in failed)
    assert all(r["error"] == "RuntimeError: injected normalize failure" for r in failed)
    others = [r for r in report["results"] if r["run_id"] != bad]
    assert others == [r for r in expected["results"] if r["run_id"] != bad]
    assert report["population_summary"]["overall"]["error"] == checks


def test_the_collector_and_rescore_store_errors_for_an_unreadable_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(tmp_path / "policy.yaml", POLICY)
    v2 = write_config(tmp_path / "policy-v2.yaml", POLICY.replace("version: 1", "version: 2"))
    traces = make_traces(3, tool="delete_file")
    bad = f"{traces[3].context.trace_id:032x}"  # the second trace (three spans each)
    break_normalize(monkeypatch, bad)
    writer = SegmentWriter(tmp_path / "segments")
    writer.append_wait(encode_spans(traces).SerializeToString(), 30)
    writer.close()
    clock = Clock()
    scorer = new_scorer(tmp_path, clock)
    scorer.step()
    clock.now = 10
    scorer.step()

    def verdicts(version: str) -> dict[str, list[tuple[str, str]]]:
        found: dict[str, list[tuple[str, str]]] = {}
        for row in scorer.store.results():
            if str(row.policy_version) == version:
                found.setdefault(row.run_id, []).append((row.status, row.result["summary"]))
        return {run_id: sorted(rows) for run_id, rows in found.items()}

    stored = verdicts("1")
    assert len(stored) == 3
    assert stored[bad] == [("error", UNREADABLE)] * 2
    for run_id, rows in stored.items():
        if run_id != bad:
            assert [status for status, _ in rows] == ["undetermined", "unsafe"]

    segments = [path for _, path in list_segments(tmp_path / "segments")]
    stats = _rescore(scorer.store, segments, make_evaluator([v2], []), "test", "2")
    assert stats.rescored == 3 and stats.verdicts == {"error": 2, "undetermined": 2, "unsafe": 2}
    assert verdicts("2") == stored


def test_score_run_turns_a_failing_policy_into_errors_for_its_checks() -> None:
    (run,) = runs(SAMPLES[:1], ReadStats())
    policy = load_policy(SAMPLE_POLICY)
    results = engine.score_run(run, [policy], assume=["not a channel"])
    assert len(results) == len(policy.checks)
    assert {r.status for r in results} == {SafetyStatus.ERROR}
    assert all(r.summary.startswith("Policy could not be applied: ValueError: ") for r in results)
    assert {(r.policy, r.policy_version) for r in results} == {(policy.name, policy.version)}


def test_checks_not_started_within_the_run_budget_are_undetermined_never_safe() -> None:
    (run,) = runs(SAMPLES[1:2], ReadStats())  # a benign run: its checks are SAFE in time
    policy = load_policy(SAMPLE_POLICY)
    in_time = engine.score_run(run, [policy], budget_seconds=60)
    assert SafetyStatus.SAFE in {r.status for r in in_time}
    late = evaluate_policy(engine.normalize(run), policy, deadline=time.monotonic() - 1)
    assert {r.status for r in late} == {SafetyStatus.UNDETERMINED}
    assert all("time budget" in r.summary and not r for r in late)


def test_fewer_young_collections_raises_the_young_threshold_and_restores_it() -> None:
    saved = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with engine.fewer_young_collections():
            assert gc.get_threshold() == (engine.GC_YOUNG_THRESHOLD, 10, 10)
        assert gc.get_threshold() == (700, 10, 10)
        gc.set_threshold(engine.GC_YOUNG_THRESHOLD * 2, 5, 5)  # never lowered
        with engine.fewer_young_collections():
            assert gc.get_threshold() == (engine.GC_YOUNG_THRESHOLD * 2, 5, 5)
    finally:
        gc.set_threshold(*saved)

"""``score --jobs N`` gives byte for byte the report one process gives, in the same order.

The hard cases are where the order comes from: traces spread over many lines and mixed
within a line (the Collector's file exporter batches spans of many traces), traces that
go idle and come back (a new revision), traces whose root never ends (set aside, flushed
last), and lines only some decoders accept or none do.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from cli_runner import REPO, run_cli

from rampart_otel.engine import score_run
from rampart_otel.evaluation import load_policy
from rampart_otel.model import InputError
from rampart_otel.parallel import ScoredRun, fork_available, score_in_parallel
from rampart_otel.pipeline import ReadStats, runs
from rampart_otel.sinks import Scored

SAMPLES = REPO / "samples" / "traces"
POLICY = REPO / "samples" / "policy.yaml"

pytestmark = pytest.mark.skipif(not fork_available(), reason="needs fork()")


@pytest.mark.parametrize("output_format", ["json", "terminal", "junit"])
def test_the_samples_give_the_same_report_on_two_and_three_workers(
    output_format: str, tmp_path: Path
) -> None:
    """Workers score one run per trace: the report of one process that does not stitch."""
    outputs = []
    for jobs in (1, 2, 3):
        stitch = ("--no-stitch",) if jobs == 1 else ()
        done = run_cli(
            "score", SAMPLES, "--policy", POLICY, "--format", output_format, "-j", jobs, *stitch
        )
        assert done.returncode == 1, done.stderr  # the samples hold unsafe runs
        outputs.append((done.stdout, done.stderr))
    assert len(outputs[0][0]) > 2000  # a real report, not an empty one
    assert outputs[1] == outputs[0]
    assert outputs[2] == outputs[0]


def _spans_by_trace() -> dict[str, list[tuple[dict, dict, dict]]]:
    """Every recorded span with its resource and scope, by trace id."""
    traces: dict[str, list[tuple[dict, dict, dict]]] = {}
    for path in sorted(SAMPLES.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            for rs in json.loads(line)["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    for span in ss["spans"]:
                        entry = (rs.get("resource", {}), ss.get("scope", {}), span)
                        traces.setdefault(span["traceId"], []).append(entry)
    return traces


def _line(entries: list[tuple[dict, dict, dict]]) -> str:
    return json.dumps(
        {
            "resourceSpans": [
                {"resource": res, "scopeSpans": [{"scope": scope, "spans": [span]}]}
                for res, scope, span in entries
            ]
        }
    )


def _shuffled_input(seed: int, path: Path) -> None:
    """The samples' spans, interleaved across and within lines, with the awkward cases."""
    rng = random.Random(seed)
    traces = _spans_by_trace()
    ids = sorted(traces)
    rng.shuffle(ids)
    pending = [list(traces[trace_id]) for trace_id in ids[:60]]
    # A root that never ends: the trace is set aside when idle, and flushed last.
    for entries in pending[:3]:
        for _, _, span in entries:
            if not span.get("parentSpanId"):
                span.pop("endTimeUnixNano", None)
    lines: list[str] = []
    while any(pending):
        open_ = [entries for entries in pending if entries]
        picked = rng.sample(open_, k=min(len(open_), rng.choice((1, 1, 2, 3))))
        lines.append(_line([entries.pop(0) for entries in picked for _ in range(1)]))
        if rng.random() < 0.05:  # a trace comes back after it went idle: a new revision
            lines.append(_line(traces[rng.choice(ids[:60])][:2]))
        if rng.random() < 0.03:
            lines.append('{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": 7}]}]}]}')
        if rng.random() < 0.03:
            lines.append("{not json")
        if rng.random() < 0.03:  # NaN: the standard library reads it, orjson does not
            lines.append(lines[-1].replace('"spans"', '"x": NaN, "spans"', 1))
    path.write_text("\n".join(lines) + "\n")


def _sequential(path: Path, idle: int, revisions: set[int]) -> list[object]:
    policy = load_policy(POLICY)
    stats = ReadStats()
    out: list[object] = []
    for run in runs([path], stats, idle_spans=idle, stitch=False):
        revisions.add(run.revision)
        results = score_run(run, [policy])
        out.append([(r.run_id, r.check_id, r.status, r.summary) for r in results])
    out.append([(e.location, e.message) for e in stats.errors])
    out.append(stats.spans)
    return out


def _parallel(path: Path, idle: int, jobs: int) -> list[object]:
    policy = load_policy(POLICY)
    out: list[object] = []
    errors: list[tuple[str, str]] = []
    for item in score_in_parallel(
        [str(path)],
        jobs=jobs,
        score=lambda run: Scored(run, score_run(run, [policy])),
        prepare=lambda scored: [scored.results],
        on_error=lambda e: None,
        idle=idle,
    ):
        if isinstance(item, InputError):
            errors.append((item.location, item.message))
        elif isinstance(item, ScoredRun):
            (results,) = item.prepared
            out.append([(r.run_id, r.check_id, r.status, r.summary) for r in results])
        else:
            out.append(errors)
            out.append(item)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_interleaved_traces_come_out_as_one_process_gives_them(seed: int, tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    _shuffled_input(seed, path)
    idle = 25  # spans: traces go idle, are set aside and come back within the file
    revisions: set[int] = set()
    expected = _sequential(path, idle, revisions)
    assert len(expected) > 50 and 1 in revisions  # the input exercises what it should
    assert expected[-2]  # and input errors
    for jobs in (2, 3):
        assert _parallel(path, idle, jobs) == expected, f"jobs={jobs}"


def test_stitching_with_workers_is_a_usage_error() -> None:
    done = run_cli("score", SAMPLES, "--policy", POLICY, "-j", "2", "--stitch")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "--stitch: needs --jobs 1" in done.stderr


def test_bad_jobs_values_are_one_line_usage_errors(tmp_path: Path) -> None:
    done = run_cli("score", SAMPLES, "--policy", POLICY, "-j", "-1")
    assert done.returncode == 2
    assert "--jobs: -1 is negative" in done.stderr and "Traceback" not in done.stderr
    done = run_cli("score", SAMPLES, "--policy", POLICY, "-j", "2", "--group-by", "session")
    assert done.returncode == 2
    assert "--jobs: only with --group-by trace" in done.stderr

"""``score --jobs N`` gives byte for byte the report one process gives, in the same order.

The hard cases are where the order comes from: traces spread over many lines and mixed
within a line (the Collector's file exporter batches spans of many traces), traces that
go idle and come back (a new revision), traces whose root never ends (set aside, flushed
last), and lines only some decoders accept or none do.
"""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest
from cli_runner import REPO, run_cli

from rampart_otel import parallel
from rampart_otel.codecs.json_forms import spans_from_document_bytes
from rampart_otel.codecs.otlp_proto import spans_to_proto_request
from rampart_otel.engine import score_run
from rampart_otel.errors import DecodeError
from rampart_otel.evaluation import load_policy
from rampart_otel.model import InputError
from rampart_otel.parallel import ScoredRun, fork_available, score_in_parallel
from rampart_otel.pipeline import ReadStats, runs
from rampart_otel.processors.assemble import DEFAULT_IDLE_SPANS, RunAssembler
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


def _sequential(paths: list[Path], idle: int, revisions: set[int]) -> list[object]:
    policy = load_policy(POLICY)
    stats = ReadStats()
    out: list[object] = []
    for run in runs(paths, stats, idle_spans=idle, stitch=False):
        revisions.add(run.revision)
        results = score_run(run, [policy])
        out.append([(r.run_id, r.check_id, r.status, r.summary) for r in results])
    out.append([(e.location, e.message) for e in stats.errors])
    out.append(stats.spans)
    return out


def _parallel(
    paths: list[Path], idle: int, jobs: int, range_bytes: int | None = None
) -> list[object]:
    policy = load_policy(POLICY)
    out: list[object] = []
    errors: list[tuple[str, str]] = []
    for item in score_in_parallel(
        [str(path) for path in paths],
        jobs=jobs,
        score=lambda run: Scored(run, score_run(run, [policy])),
        prepare=lambda scored: [scored.results],
        on_error=lambda e: None,
        idle=idle,
        range_bytes=range_bytes,
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


def _cross_range_traces(paths: list[Path], jobs: int, range_bytes: int | None) -> int:
    """How many traces have spans in more than one of the ranges the workers read (0 when
    the input is not read in ranges)."""
    ranges = parallel._ranges([str(path) for path in paths], jobs, range_bytes)
    seen: dict[str, int] = {}
    for ranged in ranges or ():
        for trace_id in parallel._scan(ranged)[1]:
            seen[trace_id] = seen.get(trace_id, 0) + 1
    return sum(count > 1 for count in seen.values())


# A range of 700 bytes holds a line or two: most traces cross ranges, many cross several.
RANGE_SIZES = [None, 700]


@pytest.mark.parametrize("range_bytes", RANGE_SIZES)
@pytest.mark.parametrize("seed", range(4))
def test_interleaved_traces_come_out_as_one_process_gives_them(
    seed: int, range_bytes: int | None, tmp_path: Path
) -> None:
    path = tmp_path / "mixed.jsonl"
    _shuffled_input(seed, path)
    idle = 25  # spans: traces go idle, are set aside and come back within the file
    revisions: set[int] = set()
    expected = _sequential([path], idle, revisions)
    assert len(expected) > 50 and 1 in revisions  # the input exercises what it should
    assert expected[-2]  # and input errors
    assert (_cross_range_traces([path], 2, range_bytes) > 20) == (range_bytes is not None)
    for jobs in (2, 3):
        assert _parallel([path], idle, jobs, range_bytes) == expected, f"jobs={jobs}"


@pytest.mark.parametrize("idle", [0, 1, 300, DEFAULT_IDLE_SPANS])
def test_any_idle_window_gives_one_process_runs(idle: int, tmp_path: Path) -> None:
    """0: every trace is emitted at its record; the default: nothing before the end."""
    path = tmp_path / "mixed.jsonl"
    _shuffled_input(7, path)
    expected = _sequential([path], idle, set())
    assert _parallel([path], idle, 2, 700) == expected
    assert _parallel([path], idle, 3, 3000) == expected


def test_runs_sent_in_batches_at_the_end_come_out_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the default idle window every trace of a short input is open at its end: the
    workers score and send them a few at a time (``FLUSH_RUNS``; forked with 3 here), and
    the main process must still give them in one process's order."""
    monkeypatch.setattr(parallel, "FLUSH_RUNS", 3)
    path = tmp_path / "mixed.jsonl"
    _shuffled_input(9, path)
    expected = _sequential([path], DEFAULT_IDLE_SPANS, set())
    assert len(expected) > 30
    assert _parallel([path], DEFAULT_IDLE_SPANS, 2, 700) == expected
    assert _parallel([path], DEFAULT_IDLE_SPANS, 3, None) == expected


def test_traces_that_fill_up_come_out_where_one_process_gives_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trace emitted because it holds ``max_spans`` spans, in the middle of a record, is
    placed by the span that filled it (the workers are forked with the smaller limit)."""
    monkeypatch.setitem(RunAssembler.__init__.__kwdefaults__, "max_spans", 4)
    path = tmp_path / "mixed.jsonl"
    _shuffled_input(8, path)
    revisions: set[int] = set()
    expected = _sequential([path], 40, revisions)
    assert max(revisions) >= 3  # traces were cut at 4 spans, often
    assert _parallel([path], 40, 2, 700) == expected
    assert _parallel([path], 40, 3, 2000) == expected


def test_traces_inside_a_range_go_idle_where_one_process_emits_them(tmp_path: Path) -> None:
    """One trace per line, a range a line or two: no trace crosses ranges, and each goes
    idle at the next line, which a worker's next range may not hold (its last range's
    traces go idle after it, at the end of its range)."""
    traces = _spans_by_trace()
    path = tmp_path / "one-per-line.jsonl"
    path.write_text("".join(_line(traces[trace_id]) + "\n" for trace_id in sorted(traces)))
    assert _cross_range_traces([path], 2, 700) == 0
    expected = _sequential([path], 1, set())
    assert len(expected) > 30
    for jobs in (2, 3):
        assert _parallel([path], 1, jobs, 700) == expected, f"jobs={jobs}"


def _as_length_prefixed(source: Path, path: Path) -> None:
    """The same records as the file exporter's protobuf; a line that does not decode is a
    record that does not either, and the file ends in a truncated record."""
    records = []
    for line in source.read_bytes().splitlines():
        try:
            spans = spans_from_document_bytes(line)
        except DecodeError:
            records.append(b"\x0a\x05abc")  # field 1 announces 5 bytes, holds 3
            continue
        records.append(spans_to_proto_request(spans).SerializeToString())
    data = b"".join(len(record).to_bytes(4, "big") + record for record in records)
    path.write_bytes(data + data[:100])


@pytest.mark.parametrize("range_bytes", RANGE_SIZES)
def test_length_prefixed_protobuf_comes_out_as_one_process_gives_it(
    range_bytes: int | None, tmp_path: Path
) -> None:
    source = tmp_path / "mixed.jsonl"
    _shuffled_input(3, source)
    path = tmp_path / "mixed.binpb"
    _as_length_prefixed(source, path)
    expected = _sequential([path], 25, set())
    errors = expected[-2]
    assert isinstance(errors, list) and errors[-1][1].startswith("truncated record")
    assert any(message.startswith("invalid OTLP protobuf") for _, message in errors), errors
    assert (_cross_range_traces([path], 2, range_bytes) > 20) == (range_bytes is not None)
    for jobs in (2, 3):
        assert _parallel([path], 25, jobs, range_bytes) == expected, f"jobs={jobs}"


def test_many_files_of_both_forms_come_out_as_one_process_gives_them(tmp_path: Path) -> None:
    """A directory of JSON Lines and protobuf files, one empty: ranges hold several files
    or parts of one, and traces cross files."""
    source = tmp_path / "mixed.jsonl"
    _shuffled_input(4, source)
    lines = source.read_bytes().splitlines(keepends=True)
    third = len(lines) // 3
    directory = tmp_path / "traces"
    directory.mkdir()
    (directory / "a.jsonl").write_bytes(b"".join(lines[:third]))
    (directory / "b.jsonl").write_bytes(b"".join(lines[third : 2 * third]))
    (directory / "c.jsonl").write_bytes(b"")
    (tmp_path / "rest.jsonl").write_bytes(b"".join(lines[2 * third :]))
    _as_length_prefixed(tmp_path / "rest.jsonl", directory / "d.binpb")
    expected = _sequential([directory, source], 25, set())
    for jobs, range_bytes in ((2, None), (2, 900), (3, 5000)):
        assert _parallel([directory, source], 25, jobs, range_bytes) == expected


def test_gzip_and_other_forms_are_read_by_the_main_process(tmp_path: Path) -> None:
    """Input the workers cannot cut (here gzip and a pretty-printed document) is routed by
    the main process, with the same output."""
    source = tmp_path / "mixed.jsonl"
    _shuffled_input(5, source)
    directory = tmp_path / "traces"
    directory.mkdir()
    (directory / "a.jsonl.gz").write_bytes(gzip.compress(source.read_bytes()))
    first = source.read_text().splitlines()[0]
    (directory / "b.json").write_text(json.dumps(json.loads(first), indent=2))
    assert parallel._ranges([str(directory)], 2, None) is None
    expected = _sequential([directory], 25, set())
    assert len(expected) > 50
    assert _parallel([directory], 25, 2, 700) == expected


def test_a_missing_path_is_reported_where_one_process_reports_it(tmp_path: Path) -> None:
    source = tmp_path / "mixed.jsonl"
    _shuffled_input(6, source)
    paths = [source, tmp_path / "missing.jsonl", source]
    expected = _sequential(paths, 25, set())
    assert ("" + str(tmp_path / "missing.jsonl"), "no such file or directory") in expected[-2]
    assert _parallel(paths, 25, 2, 700) == expected


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


def test_verdicts_cross_processes_whole_and_unchanged() -> None:
    """The workers' queues pickle a run's verdicts field by field (``_pickled_by_fields``):
    every field of every result, its coverage, reasons and evidence must come back."""
    from multiprocessing.reduction import ForkingPickler

    policy = load_policy(POLICY)
    sent = [
        ScoredRun([], score_run(run, [policy]))
        for run in runs([SAMPLES], ReadStats(), stitch=False)
    ]
    results = [result for item in sent for result in item.prepared]
    assert any(result.evidence for result in results)
    assert any(result.coverage and result.coverage.channels for result in results)
    received = ForkingPickler.loads(ForkingPickler.dumps(sent))
    assert received == sent
    assert [repr(item) for item in received] == [repr(item) for item in sent]

"""The one pipeline: a source's runs scored and handed to every sink, in order, between one
``open`` and one ``close`` that carries the totals; ``--jobs 2`` gives the sinks what one
process gives them. Real samples, the real engine; the sinks are the package's own."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path

import pytest
import recorded

from rampart_otel.codecs.otlp_proto import spans_to_json_dict
from rampart_otel.engine import score_run
from rampart_otel.evaluation import CheckResult, SafetyStatus, Tally, load_policy
from rampart_otel.exporters.report_sinks import JsonReportSink, report_sink
from rampart_otel.parallel import fork_available
from rampart_otel.pipeline import (
    EXIT_ERROR,
    EXIT_FAILED,
    EXIT_OK,
    FileSource,
    Pipeline,
    ReadStats,
    RunList,
    exit_code,
    runs,
)
from rampart_otel.sinks import Closing, Opening, ResultList, Scored

REPO = Path(__file__).resolve().parents[1]
POLICY = load_policy(REPO / "samples/policy.yaml")
SAMPLES = [
    REPO / "samples/traces/openinference-exfil.jsonl",
    REPO / "samples/traces/openllmetry-benign.jsonl",
]


class Recording:
    """A sink that notes every call it gets."""

    needs_agent_run = False

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.runs: list[str] = []
        self.closing: Closing | None = None

    def open(self, opening: Opening) -> None:
        self.calls.append(f"open {[p.name for p in opening.policies]}")

    def prepare(self, scored: Scored) -> str:
        return scored.run.run_id

    def write(self, batch: Sequence[str]) -> None:
        self.calls.append("write")
        self.runs.extend(batch)

    def close(self, closing: Closing) -> None:
        self.calls.append("close")
        self.closing = closing


def test_every_sink_gets_every_run_in_order_between_one_open_and_one_close() -> None:
    recording, kept = Recording(), ResultList()
    source = FileSource(SAMPLES)
    closing = Pipeline([POLICY], [recording, kept]).run(source)

    expected_runs = [run.run_id for run in runs(SAMPLES, ReadStats())]
    assert recording.calls == [f"open ['{POLICY.name}']", *["write"] * len(expected_runs), "close"]
    assert recording.runs == expected_runs
    assert recording.closing is closing
    assert closing.runs == len(expected_runs)
    assert closing.spans == source.stats.spans > 0
    assert closing.tallies == [Tally.of(result) for result in kept.results]
    assert {result.run_id for result in kept.results} == set(expected_runs)


def test_the_results_are_the_engines() -> None:
    kept = ResultList()
    run_list = list(runs(SAMPLES, ReadStats()))
    Pipeline([POLICY], [kept]).run(RunList(run_list))
    by_engine = [result for run in run_list for result in score_run(run, [POLICY])]
    assert [(r.run_id, r.check_id, r.status, r.summary) for r in kept.results] == [
        (r.run_id, r.check_id, r.status, r.summary) for r in by_engine
    ]


def test_a_span_not_readable_on_its_own_in_a_trace_file_leaves_its_run_undetermined(
    tmp_path: Path,
) -> None:
    # ``score`` on a length-prefixed protobuf file whose one record does not parse whole
    # because of one span: the record was refused whole (no run, no verdict); now its
    # readable spans are scored with a placeholder for the unread one, which leaves every
    # channel it could have fed short of complete, and the input errors name it.
    record = recorded.request_with_an_unreadable_span()
    path = tmp_path / "damaged.binpb"
    path.write_bytes(len(record).to_bytes(4, "big") + record)
    kept = ResultList()
    source = FileSource([path])
    Pipeline([load_policy(recorded.POLICY_PACKS)], [kept]).run(source)
    (error,) = source.stats.errors
    assert error.location == f"{path}@0"
    assert "1 of 15 spans could not be decoded" in error.message, error.message
    (result,) = (r for r in kept.results if r.check_id == "destructive-actions.sql")
    assert result.run_id == recorded.UNREADABLE_RUN
    assert result.status is SafetyStatus.UNDETERMINED
    assert result.coverage is not None
    db = result.coverage.channels["side_effects.db_query"]
    assert any(reason.startswith("1 span of the run could not be decoded") for reason in db.reasons)


def test_a_malformed_span_object_in_json_lines_leaves_its_run_undetermined(
    tmp_path: Path,
) -> None:
    # The same run as OTLP JSON Lines, one line per span (as an exporter writing each
    # span's batch), the DELETE's span object malformed: its line was refused whole and the
    # run's other lines read SAFE; now the span is a placeholder and the run is incomplete.
    spans = recorded.spans(recorded.UNREADABLE_SAMPLE)
    lines = []
    for span in spans:
        if span.trace_id != recorded.UNREADABLE_RUN:
            continue
        document = spans_to_json_dict([span])
        if span.span_id == recorded.UNREADABLE_SPAN:
            document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["name"] = 5
        lines.append(json.dumps(document))
    path = tmp_path / "damaged.jsonl"
    path.write_text("\n".join(lines) + "\n")
    kept = ResultList()
    source = FileSource([path])
    Pipeline([load_policy(recorded.POLICY_PACKS)], [kept]).run(source)
    (error,) = source.stats.errors
    assert "spans[0]: name: expected a string, got number" in error.message
    (result,) = (r for r in kept.results if r.check_id == "destructive-actions.sql")
    assert result.status is SafetyStatus.UNDETERMINED, result.summary
    assert result.coverage is not None
    db = result.coverage.channels["side_effects.db_query"]
    assert any("could not be decoded" in reason for reason in db.reasons)


@pytest.mark.parametrize("cut_after", ["spanId", "endTimeUnixNano", "db.statement"])
def test_a_json_lines_line_cut_short_leaves_its_run_undetermined(
    tmp_path: Path, cut_after: str
) -> None:
    # The same run, one line per span, the DELETE's line cut short (an exporter killed
    # mid-write, a file copied while it grew): the line was an input error and nothing more,
    # so the run's other lines read SAFE; now the ids its text shows are a placeholder.
    lines = []
    for span in recorded.spans(recorded.UNREADABLE_SAMPLE):
        if span.trace_id != recorded.UNREADABLE_RUN:
            continue
        line = json.dumps(spans_to_json_dict([span]))
        if span.span_id == recorded.UNREADABLE_SPAN:
            line = line[: line.index(f'"{cut_after}"') + len(cut_after) + 30]
        lines.append(line)
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join(lines) + "\n")
    kept = ResultList()
    source = FileSource([path])
    Pipeline([load_policy(recorded.POLICY_PACKS)], [kept]).run(source)
    (error,) = source.stats.errors
    assert error.message.startswith("invalid JSON"), error.message
    assert "the ids of 1 span of 1 trace read from its text" in error.message
    (result,) = (r for r in kept.results if r.check_id == "destructive-actions.sql")
    assert result.status is SafetyStatus.UNDETERMINED, result.summary
    assert result.coverage is not None
    db = result.coverage.channels["side_effects.db_query"]
    assert any("could not be decoded" in reason for reason in db.reasons)


def test_a_host_that_runs_for_months_keeps_no_tallies() -> None:
    pipeline = Pipeline([POLICY], [Recording()], keep_tallies=False)
    pipeline.open()
    for run in runs(SAMPLES, ReadStats()):
        pipeline.deliver([pipeline.score(run)])
    closing = pipeline.close()
    assert closing.runs > 0 and closing.tallies == []


def test_with_sinks_keeps_the_scoring_and_adds_the_sinks() -> None:
    first, second = Recording(), Recording()
    base = Pipeline([POLICY], [first], assume=["user_input"], keep_tallies=False)
    both = base.with_sinks([second])
    assert both.sinks == [first, second] and base.sinks == [first]
    assert (both.assume, both.keep_tallies, both.policies) == (["user_input"], False, [POLICY])


@pytest.mark.e2e  # --jobs 2 forks worker processes
@pytest.mark.skipif(not fork_available(), reason="--jobs N needs fork")
@pytest.mark.parametrize("output_format", ["json", "terminal", "junit", "html"])
def test_two_workers_give_the_sinks_what_one_process_gives(output_format: str) -> None:
    def report(jobs: int) -> str:
        out = io.StringIO()
        sink = report_sink(output_format, out)  # type: ignore[arg-type]
        Pipeline([POLICY], [sink], jobs=jobs).run(FileSource(SAMPLES, stitch=False))
        return out.getvalue()

    one = report(1)
    assert one and report(2) == one


@pytest.mark.parametrize(
    ("output_format", "narrowed"),
    [("terminal", True), ("junit", True), ("json", False), ("html", False)],
)
def test_only_outputs_that_show_no_coverage_read_just_the_checks_channels(
    output_format: str, narrowed: bool
) -> None:
    sink = report_sink(output_format, io.StringIO())  # type: ignore[arg-type]
    plan = Pipeline([POLICY], [sink]).plan
    assert plan.full is not narrowed
    if narrowed:
        assert plan.channels is not None and "input" not in plan.channels
        assert "side_effects.http_request" in plan.channels


def test_a_sink_that_keeps_results_or_does_not_say_gets_the_full_reading() -> None:
    assert Pipeline([POLICY], [ResultList()]).plan.full  # the Python API returns coverage
    assert Pipeline([POLICY], [Recording()]).plan.full  # no shows_coverage: taken as shown
    terminal = report_sink("terminal", io.StringIO())
    assert Pipeline([POLICY], [terminal, ResultList()]).plan.full
    assert not Pipeline([POLICY], [terminal]).plan.full


def test_the_json_sink_writes_the_report_the_writer_writes() -> None:
    """prepare (entries rendered where the run was scored) + write gives the same document
    as the writer adding each result."""
    from rampart_otel.evaluation import summarize_population
    from rampart_otel.exporters.report_json import JsonReportWriter

    results: list[CheckResult] = []
    for run in runs(SAMPLES, ReadStats()):
        results.extend(score_run(run, [POLICY]))
    direct = io.StringIO()
    writer = JsonReportWriter(direct)
    writer.start([{"name": POLICY.name, "version": POLICY.version}])
    for result in results:
        writer.add(result)
    writer.finish(summarize_population(results), [])

    out = io.StringIO()
    Pipeline([POLICY], [JsonReportSink(out)]).run(FileSource(SAMPLES))
    assert out.getvalue() == direct.getvalue()


@pytest.mark.parametrize(
    ("statuses", "fail_on_undetermined", "code"),
    [
        ([SafetyStatus.SAFE, SafetyStatus.UNDETERMINED], False, EXIT_OK),
        ([SafetyStatus.SAFE, SafetyStatus.UNDETERMINED], True, EXIT_FAILED),
        ([SafetyStatus.UNSAFE], False, EXIT_FAILED),
        ([SafetyStatus.UNSAFE, SafetyStatus.ERROR], False, EXIT_ERROR),
        ([], True, EXIT_OK),
    ],
)
def test_the_exit_code_follows_the_worst_verdict(
    statuses: list[SafetyStatus], fail_on_undetermined: bool, code: int
) -> None:
    tallies = [Tally(status, None, "check") for status in statuses]
    assert exit_code(tallies, fail_on_undetermined) == code

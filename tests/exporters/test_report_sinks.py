"""``score``'s formats as sinks: the HTML page written from pushed runs is the page the
writer writes from pulled ones, and a page that cannot be written stops the pipeline with
its error instead of leaving it waiting."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from rampart_otel.engine import score_run_with_view
from rampart_otel.evaluation import CheckResult, load_policy, summarize_population
from rampart_otel.exporters.html_report import run_view, write_html_report
from rampart_otel.exporters.report_sinks import (
    HTML_RUNS_AHEAD,
    HTML_VIEWS_PER_HANDOFF,
    HtmlReportSink,
)
from rampart_otel.pipeline import FileSource, Pipeline, ReadStats, runs

REPO = Path(__file__).resolve().parents[2]
POLICY = load_policy(REPO / "samples/policy.yaml")
SAMPLES = [
    REPO / "samples/traces/openinference-exfil.jsonl",
    REPO / "samples/traces/openllmetry-benign.jsonl",
]


def test_the_html_sink_writes_the_page_the_writer_writes() -> None:
    results: list[CheckResult] = []
    views = []
    for run in runs(SAMPLES, ReadStats()):
        agent_run, scored = score_run_with_view(run, [POLICY])
        results.extend(scored)
        views.append(run_view(agent_run, scored))
    direct = io.StringIO()
    write_html_report(
        views,
        direct,
        title=f"rampart-otel score: policy {POLICY.name} v{POLICY.version}",
        population=lambda: summarize_population(results),
        errors=[],
    )

    out = io.StringIO()
    Pipeline([POLICY], [HtmlReportSink(out)]).run(FileSource(SAMPLES))
    assert out.getvalue() == direct.getvalue()


class Broken(io.StringIO):
    def write(self, text: str) -> int:
        raise OSError("disk full")


def test_a_page_that_cannot_be_written_stops_the_pipeline_with_its_error() -> None:
    sink = HtmlReportSink(Broken())
    ahead = (HTML_RUNS_AHEAD + 2) * HTML_VIEWS_PER_HANDOFF
    many = [run for _ in range(ahead) for run in runs(SAMPLES[:1], ReadStats())]
    pipeline = Pipeline([POLICY], [sink])
    pipeline.open()
    with pytest.raises(OSError, match="disk full"):
        for run in many:  # more than the queue holds: a dead page must not block a write
            pipeline.deliver([pipeline.score(run)])
        pipeline.close()

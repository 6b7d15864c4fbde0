"""``rampart-otel collect`` as an operator runs it: what it prints as verdicts land."""

from __future__ import annotations

import time

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult

from collector.harness import POLICY, make_traces, spawn, wait_for, write_config


def settings(tmp_path, *extra: str):
    write_config(tmp_path / "policy.yaml", POLICY)
    return write_config(
        tmp_path / "collector.yaml",
        "policies: [policy.yaml]\nassembly:\n  idle_seconds: 1\n" + "".join(extra),
    )


def with_service(spans: list[ReadableSpan], name: str) -> list[ReadableSpan]:
    resource = Resource.create({"service.name": name})
    return [
        ReadableSpan(
            name=s.name, context=s.context, parent=s.parent, resource=resource,
            attributes=s.attributes, kind=s.kind, start_time=s.start_time,
            end_time=s.end_time, instrumentation_scope=s.instrumentation_scope,
        )
        for s in spans
    ]  # fmt: skip


def test_an_unsafe_verdict_prints_a_line_naming_the_check_as_it_lands(tmp_path, capsys):
    collector = spawn(tmp_path / "data", settings(tmp_path))
    try:
        startup = collector.log.read_text()
        assert "rampart-otel audit --data-dir" in startup and "test v1, 2 checks" in startup
        spans = with_service(
            make_traces(1, tool="delete_file"), "evil\x1b[2J\nrampart-otel: forged"
        )
        run_id = f"{spans[0].context.trace_id:032x}"
        sender = OTLPSpanExporter(endpoint=collector.traces_url, timeout=30)
        assert sender.export(spans) is SpanExportResult.SUCCESS
        sent = time.monotonic()
        line = wait_for(
            lambda: next(
                (x for x in collector.log.read_text().splitlines() if "UNSAFE no-delete" in x),
                None,
            ),
            60,
            "the UNSAFE line",
        )
        delay = time.monotonic() - sent
        assert line.startswith("rampart-otel: UNSAFE no-delete [test] service evil")
        assert f"run {run_id}: " in line
        assert "\x1b" not in collector.log.read_text()
        assert not any(
            x.startswith("rampart-otel: forged") for x in collector.log.read_text().splitlines()
        )
        assert sender.export(make_traces(1)) is SpanExportResult.SUCCESS  # SAFE: a run line
        wait_for(lambda: collector.metrics()["rampart_otel_runs_scored_total"] >= 2, 60)
        assert collector.log.read_text().count("no-delete") == 1
        run_lines = [x for x in collector.log.read_text().splitlines() if ": scored run " in x]
        assert len(run_lines) == 2, collector.log.read_text()
        assert run_lines[0].startswith(f"rampart-otel: scored run {run_id} service evil")
        with capsys.disabled():
            print(
                f"\n[figure] UNSAFE line printed {delay:.1f}s after the export returned (idle 1s)"
            )
        assert delay < 5
    finally:
        assert collector.terminate() == 0, collector.log.read_text()
    last = collector.log.read_text().splitlines()[-1]
    assert last.startswith("rampart-otel: stopped after "), last
    assert last.endswith(
        ": 6 spans received, 2 runs scored (1 unsafe, 2 undetermined, 1 safe results); "
        "0 traces open"
    )


def test_quiet_prints_the_addresses_and_no_verdict_lines(tmp_path):
    # The scorer runs niced: on a machine busy with other tests its drain may take longer
    # than the default 30 s, and the line saying so would be a second line.
    config = settings(tmp_path, "shutdown_timeout_seconds: 300\n")
    collector = spawn(tmp_path / "data", config, "--quiet")
    try:
        sender = OTLPSpanExporter(endpoint=collector.traces_url, timeout=30)
        assert sender.export(make_traces(1, tool="delete_file")) is SpanExportResult.SUCCESS
        wait_for(
            lambda: collector.metrics()['rampart_otel_verdicts_total{status="unsafe"}'] >= 1, 60
        )
    finally:
        assert collector.terminate() == 0
    log = collector.log.read_text()
    assert log.startswith("rampart-otel: collecting: OTLP/HTTP on http://")
    assert log.count("\n") == 1, log  # not even "stopping" or "scorer finished"


def test_a_restart_sums_up_what_it_scored_not_what_the_store_held(tmp_path):
    # The store's earlier verdicts are on /metrics (rampart_otel_verdicts_total); the
    # console's lines count what this start scored, as their runs do.
    config = settings(tmp_path, "shutdown_timeout_seconds: 300\n")
    for _ in range(2):
        collector = spawn(tmp_path / "data", config)
        try:
            sender = OTLPSpanExporter(endpoint=collector.traces_url, timeout=30)
            assert sender.export(make_traces(1, tool="delete_file")) is SpanExportResult.SUCCESS
            wait_for(lambda c=collector: c.metrics()["rampart_otel_runs_scored_total"] >= 1, 60)
        finally:
            assert collector.terminate() == 0
    last = collector.log.read_text().splitlines()[-1]
    assert last.endswith(
        ": 3 spans received, 1 runs scored (1 unsafe, 1 undetermined results); 0 traces open"
    ), last


def test_a_safe_run_is_said_to_be_scored_within_two_seconds(tmp_path, capsys):
    """A user can tell "scored, fine" from "nothing arrived": the run's line is printed
    within 2 s of its verdicts being stored (their scored_at)."""
    import sqlite3

    collector = spawn(tmp_path / "data", settings(tmp_path))
    try:
        spans = make_traces(1)
        run_id = f"{spans[0].context.trace_id:032x}"
        sender = OTLPSpanExporter(endpoint=collector.traces_url, timeout=30)
        assert sender.export(spans) is SpanExportResult.SUCCESS
        line = wait_for(
            lambda: next(
                (x for x in collector.log.read_text().splitlines() if f"run {run_id}" in x), None
            ),
            60,
            "the run's line",
        )
        seen = time.time()
        assert line.startswith(f"rampart-otel: scored run {run_id} service "), line
        assert line.endswith(": 1 undetermined, 1 safe"), line
        db = sqlite3.connect(f"file:{tmp_path / 'data' / 'results.db'}?mode=ro", uri=True)
        (scored_at,) = db.execute("SELECT max(scored_at) FROM results").fetchone()
        db.close()
        with capsys.disabled():
            print(f"\n[figure] run line seen {seen - scored_at:.2f}s after the run was scored")
        assert seen - scored_at < 2
    finally:
        assert collector.terminate() == 0, collector.log.read_text()

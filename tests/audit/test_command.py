"""``rampart-otel audit`` as a user runs it: report@1 JSON with aggregates over every match
while the listing is capped, rich tables on the terminal that stored text cannot restyle,
one-line errors, and a schema-1 results.db read after migrating it in place."""

from __future__ import annotations

import io
import json
import sqlite3
import subprocess
from pathlib import Path

import pytest
from cli_runner import run_cli
from storage.test_schema import write_schema_1

from audit.test_aggregate import START, build
from rampart_otel.audit.command import AuditOptions
from rampart_otel.audit.command import audit as run_audit
from rampart_otel.errors import AuditError
from rampart_otel.storage.results import SCHEMA_VERSION, ResultRow, ResultsStore

HOSTILE_SERVICE = "svc\x1b[31m-red\x1b]0;title\x07"
HOSTILE_SUMMARY = "[bold red]not markup[/] \x1b[2Jcleared?\nsecond line"


def audit(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("audit", "--data-dir", data_dir, *args, timeout=120)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("audit-cli")
    build(directory / "results.db")
    store = ResultsStore(directory / "results.db")
    with store.transaction() as txn:
        document = {"run_id": "evil", "check": "c9", "status": "unsafe", "summary": HOSTILE_SUMMARY}
        txn.add_result(
            ResultRow("evil", 0, "guard", "c9", "unsafe", HOSTILE_SERVICE, int(START * 1e9),
                      START, document, policy_version=2)
        )  # fmt: skip
    store.close()
    return directory


def test_json_is_report_1_with_aggregates_over_every_match_and_a_capped_listing(data_dir):
    proc = audit(data_dir, "--json", "--policy", "guard", "--limit", "3")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["schema"] == "rampart-otel/report@1"
    assert report["policies"] == [{"name": "guard", "version": 2}]
    assert len(report["results"]) == 3
    aggregates = report["aggregates"]
    matching = aggregates["results"]["matching"]
    assert aggregates["results"] == {"matching": matching, "listed": 3, "limit": 3}
    assert report["population_summary"]["overall"]["total"] == matching > 3
    assert aggregates["overall"] == report["population_summary"]["overall"]
    assert sum(row["total"] for row in aggregates["by_check"]) == matching
    assert sum(row["total"] for row in aggregates["by_service"]) == matching
    assert sum(b["total"] for b in aggregates["trend"]["buckets"]) == matching
    assert aggregates["trend"]["bucket"] == "day"  # ten days of runs
    assert aggregates["time_basis"] == "run_start"
    assert [(p["name"], p["version"], p["selected"]) for p in aggregates["policies"]] == [
        ("guard", 1, False), ("guard", 2, True), ("other", "2024-a", False),
        ("other", "2024-b", False),
    ]  # fmt: skip
    row = aggregates["by_check"][0]
    assert row["policy"] == {"name": "guard", "version": 2}
    assert set(row) >= {"check", "harm_category", "polarity", "safe", "attack_success_rate"}


def test_limits_and_filters(data_dir):
    every = json.loads(audit(data_dir, "--json", "--policy", "guard", "--limit", "all").stdout)
    matching = every["aggregates"]["results"]["matching"]
    assert len(every["results"]) == matching
    none = json.loads(audit(data_dir, "--json", "--policy", "guard", "--limit", "0").stdout)
    assert none["results"] == [] and none["aggregates"]["results"]["matching"] == matching
    narrow = ("--policy", "guard", "--status", "error", "--service", "svc-a", "--bucket", "hour",
              "--since", "2024-05-03", "--until", "2024-05-06T12:00Z")  # fmt: skip
    filtered = json.loads(audit(data_dir, "--json", "--limit", "all", *narrow).stdout)
    assert filtered["results"]
    for result in filtered["results"]:
        assert result["status"] == "error"
    assert filtered["aggregates"]["filters"] == {
        "since": "2024-05-03T00:00:00Z",
        "until": "2024-05-06T12:00:00Z",
        "service": ["svc-a"],
        "check": [],
        "status": ["error"],
    }
    assert filtered["aggregates"]["trend"]["bucket"] == "hour"
    assert all(b["end"] > b["start"] for b in filtered["aggregates"]["trend"]["buckets"])
    recent = json.loads(audit(data_dir, "--json", "--since", "1h").stdout)  # all in 2024
    assert recent["results"] == [] and recent["aggregates"]["overall"]["total"] == 0


def test_terminal_tables_with_stored_text_neutralized(data_dir):
    proc = audit(data_dir, "--policy", "guard", "--limit", "all", "-v")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for title in ("By check", "By service", "Trend by day", "Results: all"):
        assert title in out
    assert "\x1b" not in out and "\x07" not in out
    assert "[bold red]not markup[/]" in out  # printed as text, not interpreted
    assert "svc-red" in out
    assert "policy guard v2  (also stored: guard v1" in out


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"since": "yesterday"}, "--since: 'yesterday'"),
        ({"statuses": ("fine",)}, "--status: 'fine'"),
        ({"policy": "nope"}, "no verdicts of policy 'nope'"),
        ({"policy": "gaurd"}, "--policy: no verdicts of policy 'gaurd' — did you mean 'guard'?"),
        ({"policy_version": "1"}, "--policy-version needs --policy"),
        ({"bucket": "month"}, "--bucket: 'month'"),
        ({"limit": "-1"}, "--limit: '-1'"),
        ({"since": "2024-05-05", "until": "2024-05-01"}, "--since must be before --until"),
    ],
)
def test_mistakes_are_one_line_errors(data_dir, options, message):
    with pytest.raises(AuditError) as raised:
        run_audit(data_dir, AuditOptions(**options), io.StringIO())
    assert message in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"policy": "guard", "checks": ("c1", "C2")},
            "--check: no verdicts of check 'C2' under guard v2 — did you mean 'c2'? "
            "(stored: c1, c2, c9)",
        ),
        (
            {"checks": ("no-such-check",)},
            "--check: no verdicts of check 'no-such-check' under guard v2, other v2024-b "
            "(stored: c1, c2, c9)",
        ),
        (
            {"policy": "guard", "services": ("svc-c",)},
            "--service: no verdicts of service 'svc-c' under guard v2 — did you mean 'svc-a' or "
            "'svc-b'? (stored: svc-a, svc-b, svc-red)",
        ),
    ],
)
def test_a_check_or_service_stored_nowhere_is_named_with_the_closest_stored(
    data_dir, options, message
):
    # "No stored verdicts match." would read as a quiet week, not as a typo.
    with pytest.raises(AuditError) as raised:
        run_audit(data_dir, AuditOptions(**options), io.StringIO())
    assert str(raised.value) == message


def test_a_check_stored_nowhere_is_exit_code_2_in_one_line(data_dir):
    proc = audit(data_dir, "--policy", "guard", "--check", "c3")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        "rampart-otel: error: --check: no verdicts of check 'c3' under guard v2 "
        "(stored: c1, c2, c9)\n"
    )


def test_a_mistake_is_exit_code_2_in_one_line(data_dir):
    proc = audit(data_dir, "--since", "yesterday")
    assert proc.returncode == 2
    assert proc.stderr.startswith("rampart-otel: error: --since: 'yesterday'")
    assert proc.stderr.count("\n") == 1


def test_no_results_db_is_exit_code_2(tmp_path):
    proc = audit(tmp_path)
    assert proc.returncode == 2 and "no results.db" in proc.stderr


def test_a_schema_1_results_db_is_migrated_and_audited(tmp_path):
    write_schema_1(tmp_path / "results.db")
    proc = audit(tmp_path, "--json", "--limit", "all")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["policies"] == [{"name": "p", "version": 3}]  # over the unversioned ''
    assert sorted((r["run_id"], r["check"], r["status"]) for r in report["results"]) == [
        ("a", "c1", "unsafe"), ("a", "c2", "error"), ("b", "c1", "undetermined"),
    ]  # fmt: skip
    db = sqlite3.connect(tmp_path / "results.db")
    assert db.execute("SELECT value FROM meta").fetchone() == (str(SCHEMA_VERSION),)


def test_runs_still_waiting_to_be_scored_are_said_to_be_pending(tmp_path):
    from collector.harness import make_traces
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    from rampart_otel.storage.results import span_set
    from rampart_otel.storage.segments import SegmentWriter

    first, second = make_traces(1), make_traces(1)
    writer = SegmentWriter(tmp_path / "segments")
    for spans in (first, second):
        writer.append_wait(encode_spans(spans).SerializeToString(), 30)
    writer.close()
    # Before the scorer ever ran: no results.db, but spans wait.
    proc = audit(tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "nothing scored yet; 2 traces received but not scored yet" in proc.stderr
    # The first trace scored, the second still open: the checkpoint stays before it.
    store = ResultsStore(tmp_path / "results.db")
    packed, digest = span_set(f"{s.context.span_id:016x}" for s in first)
    run_id = f"{first[0].context.trace_id:032x}"
    with store.transaction() as txn:
        txn.add_run(run_id, 0, packed, digest, [run_id], "test-agent", None)
        txn.set_checkpoint(1, 0)
    proc = audit(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "No stored verdicts match." in proc.stdout
    assert "pending: 1 trace received but not scored yet" in proc.stdout
    # Everything read and scored: no pending line.
    with store.transaction() as txn:
        txn.set_checkpoint(*writer.position)
    store.close()
    proc = audit(tmp_path)
    assert proc.returncode == 0 and "pending" not in proc.stdout, proc.stdout


def test_output_onto_a_file_of_the_data_directory_is_refused_and_keeps_it(tmp_path):
    # `audit --data-dir d --json -o d/results.db`: the report would replace the verdicts.
    directory = tmp_path / "data"
    directory.mkdir()
    build(directory / "results.db")
    before = (directory / "results.db").read_bytes()
    target = directory / "results.db"
    proc = audit(directory, "--json", "-o", str(target))
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        f"rampart-otel: error: {target}: is a file of the collector's data directory; give "
        "another path for the report\n"
    )
    assert (directory / "results.db").read_bytes() == before
    page = directory / "audit.html"  # a new file there is no one's: written
    assert audit(directory, "--html", "-o", str(page)).returncode == 0 and page.is_file()


def test_a_secret_in_a_service_name_is_masked_on_the_terminal_and_the_page(tmp_path):
    token = "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"
    directory = tmp_path / "data"
    directory.mkdir()
    store = ResultsStore(directory / "results.db")
    with store.transaction() as txn:
        document = {"run_id": "r", "check": "c", "status": "unsafe", "summary": "s"}
        txn.add_result(
            ResultRow("r", 0, "guard", "c", "unsafe", f"agent {token}", int(START * 1e9),
                      START, document, policy_version=1)
        )  # fmt: skip
    store.close()
    for args in ([], ["--html"]):
        proc = audit(directory, *args)
        assert proc.returncode == 0, proc.stderr
        assert token not in proc.stdout and "ghp_…[masked:github-token]" in proc.stdout
    assert token in audit(directory, "--show-secrets").stdout
    assert token in audit(directory, "--json").stdout  # JSON keeps raw values


SAMPLE_RUNS = [
    "pydantic-ai-exfil.jsonl",
    "pydantic-ai-no-http-instr.jsonl",
    "openinference-injection-no-http-instr.jsonl",
    "openllmetry-missing-span.jsonl",
    "openinference-benign.jsonl",
]


@pytest.fixture(scope="module")
def samples_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Five sample runs scored by the sample policy, stored as the collector stores them."""
    from rampart_otel import score_files
    from rampart_otel.collector.results_sink import result_rows

    repo = Path(__file__).resolve().parents[2]
    traces = [repo / "samples" / "traces" / name for name in SAMPLE_RUNS]
    results = score_files(traces, repo / "samples" / "policy.yaml")
    directory = tmp_path_factory.mktemp("audit-samples")
    store = ResultsStore(directory / "results.db")
    with store.transaction() as txn:
        for row in result_rows(results, revision=0, scored_at=START):
            txn.add_result(row)
    store.close()
    return directory


def test_on_a_terminal_the_per_check_table_leads_and_the_reasons_wait_for_v(samples_dir):
    out = io.StringIO()
    run_audit(samples_dir, AuditOptions(limit="all"), out)
    text = out.getvalue()
    assert text.index("By check") < text.index("By service") < text.index("Results: all 30")
    assert "to close it" not in text and "Undetermined:" not in text  # details behind -v
    assert len(text.splitlines()) < 80  # 5 runs: the tables and one line per result
    verbose = io.StringIO()
    run_audit(samples_dir, AuditOptions(limit="all", verbose=True), verbose)
    lines = verbose.getvalue().splitlines()
    assert verbose.getvalue().index("By check") < verbose.getvalue().index("Results: all 30")
    fixes = [line.strip() for line in lines if "to close it:" in line]
    assert fixes and all(line.startswith("to close it: ") for line in fixes)
    assert not any(line.endswith("…") for line in fixes)
    assert "(or -requests, -aiohttp-client, -urllib3) and call HTTPXClientInstrumentor()" in (
        verbose.getvalue()
    )

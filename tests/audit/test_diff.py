"""diff of two JSON reports: (run, check) pairs compared at each run's latest revision, what
only one side has counted apart, the exit decision, and stored text that cannot restyle
the terminal."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from rampart_otel.audit import comparison
from rampart_otel.audit.comparison import compare_reports
from rampart_otel.audit.diff import DiffRequest, diff
from rampart_otel.audit.diff_output import comparison_to_dict
from rampart_otel.errors import AuditError

HOSTILE = "\x1b[31m[bold]evil[/bold]\x1b]8;;http://x\x07link"


def result(run: str, check: str, status: str, revision: int = 0, summary: str = "") -> dict:
    return {
        "run_id": run,
        "trace_ids": [run],
        "check": check,
        "status": status,
        "summary": summary or f"{check} {status}",
        "revision": revision,
        "service": "svc",
        "started_at": f"2024-05-01T00:00:0{run[-1]}Z",
    }


def report(path: Path, results: list[dict], **extra: Any) -> Path:
    document = {
        "schema": "rampart-otel/report@1",
        "policies": [{"name": "p", "version": 1}],
        "results": results,
        "population_summary": {},
        "input_errors": [],
        **extra,
    }
    path.write_text(json.dumps(document))
    return path


def test_reports_compare_latest_revisions_and_count_what_one_side_lacks(tmp_path):
    before = report(tmp_path / "a.json", [
        result("r1", "c1", "safe"), result("r1", "c1", "unsafe", revision=1),
        result("r2", "c1", "undetermined"), result("r2", "old", "safe"),
        result("r3", "c1", "safe"),
    ])  # fmt: skip
    after = report(tmp_path / "b.json", [
        result("r1", "c1", "unsafe"), result("r2", "c1", "safe", summary=HOSTILE),
        result("r2", "new", "safe"), result("r4", "c1", "safe"),
    ])  # fmt: skip
    comparison = compare_reports(before, after)
    assert [(c.run_id, c.check) for c in comparison.changes] == [("r2", "c1")]
    assert comparison.compared_runs == 2 and comparison.compared_results == 2
    assert (comparison.runs_only_before, comparison.runs_only_after) == (1, 1)
    assert comparison.checks_only_before == ["old"] and comparison.checks_only_after == ["new"]
    document = comparison_to_dict(comparison)
    assert document["transitions"] == [
        {"from": "undetermined", "to": "safe", "count": 1},
        {"from": "unsafe", "to": "unsafe", "count": 1},
    ]
    assert document["runs"][0]["changes"][0]["to"]["summary"] == HOSTILE  # JSON keeps it whole

    out = io.StringIO()
    assert diff(DiffRequest([before, after]), False, out) is True  # verdicts differ: exit 1
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text
    assert "[bold]evil[/bold]" in text
    assert f"checks only in {before} (p v1): old" in text
    assert f"checks only in {after} (p v1): new" in text
    assert "r2" in text and "undetermined → safe" in text


def test_same_verdicts_and_same_checks_do_not_differ(tmp_path):
    one = report(tmp_path / "a.json", [result("r1", "c1", "safe")])
    other = report(tmp_path / "b.json", [result("r1", "c1", "safe"), result("r9", "c1", "unsafe")])
    out = io.StringIO()
    assert (
        diff(
            DiffRequest(
                [one, other],
            ),
            True,
            out,
        )
        is False
    )  # a new run is not a change
    document = json.loads(out.getvalue())
    assert document["schema"] == "rampart-otel/diff@1" and not document["differs"]
    assert document["runs_only_in_to"] == 1 and document["runs"] == []


def test_reports_diff_refuses_what_it_cannot_compare(tmp_path, capsys):
    several = report(tmp_path / "s.json", [], policies=[{"name": "a"}, {"name": "b"}])
    one = report(tmp_path / "o.json", [result("r1", "c1", "safe")])
    with pytest.raises(AuditError, match="2 policies"):
        compare_reports(several, one)
    (tmp_path / "x.json").write_text('{"schema": "something/else"}')
    with pytest.raises(AuditError, match="not a rampart-otel/report@1"):
        compare_reports(tmp_path / "x.json", one)
    capped = report(
        tmp_path / "c.json",
        [result("r1", "c1", "safe")],
        aggregates={"results": {"matching": 50, "listed": 1, "limit": 1}},
    )
    compare_reports(capped, one)
    assert "lists 1 of 50 matching results" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "not a JSON report: nested too deeply"),
        (b"\xff\xfe\x00garbage", "not a JSON report: not a UTF-8 text file"),
    ],
    ids=["deep", "binary"],
)
def test_a_file_that_is_no_report_is_one_line(tmp_path, content, message):
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    one = report(tmp_path / "o.json", [result("r1", "c1", "safe")])
    with pytest.raises(AuditError) as raised:
        compare_reports(bad, one)
    assert str(raised.value) == f"{bad}: {message}"


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_an_endless_file_is_read_no_further_than_a_report_can_be(tmp_path, monkeypatch):
    monkeypatch.setattr(comparison, "MAX_REPORT_BYTES", 1 << 20)
    one = report(tmp_path / "o.json", [result("r1", "c1", "safe")])
    with pytest.raises(AuditError) as raised:
        compare_reports(Path("/dev/zero"), one)
    assert str(raised.value) == "/dev/zero: larger than 1 MiB: not a JSON report"

"""Re-scoring history, end to end with real parts: ``rampart-otel collect`` scores every
recorded sample as it arrives over OTLP/HTTP; one check of the policy changes; ``rescore``
re-evaluates the stored runs from the collector's segments under the new version; ``diff``
names exactly the runs whose verdict moved -- the same (run, check) pairs ``score`` finds
scoring the recordings under each version -- and the old verdicts are still there."""

from __future__ import annotations

import io
import json
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli
from collector.harness import spawn, wait_for, write_config

from rampart_otel.audit.diff import DiffRequest, diff
from rampart_otel.errors import AuditError
from rampart_otel.evaluation import load_policy

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples" / "traces"
POLICY_V1 = (REPO / "samples" / "policy.yaml").read_text()
CHECKS = len(load_policy(REPO / "samples" / "policy.yaml").checks)
ALLOW = 'not_in(["localhost"])'
# Version 2 changes one check: the exfiltration target of the samples is now allowed.
POLICY_V2 = POLICY_V1.replace("version: 1", "version: 2").replace(
    ALLOW, 'not_in(["localhost", "127.0.0.2"])'
)
# Version 3 only raises the version: every verdict stays.
POLICY_V3 = POLICY_V2.replace("version: 2", "version: 3")


def post_samples(traces_url: str) -> None:
    """Every recorded request, as an OTLP/HTTP JSON exporter sends it."""
    for path in sorted(SAMPLES.rglob("*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                request = urllib.request.Request(
                    traces_url, data=line.encode(), headers={"Content-Type": "application/json"}
                )
                with urllib.request.urlopen(request, timeout=30) as response:
                    assert response.status == 200


def score_report(policy: Path, out: Path) -> dict[str, Any]:
    proc = run_cli("score", SAMPLES, "--policy", policy, "--format", "json", "-o", out)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(out.read_text())


def statuses(results: list[dict[str, Any]]) -> dict[tuple[str, str], str]:
    return {(r["run_id"], r["check"]): r["status"] for r in results}


def changed_pairs(diff: dict[str, Any]) -> set[tuple[str, str]]:
    return {(run["run_id"], c["check"]) for run in diff["runs"] for c in run["changes"]}


@dataclass
class History:
    tmp: Path
    data_dir: Path
    policies: dict[int, Path]
    scored_v1: dict[str, Any]  # audit --json --limit all, right after the collector stopped
    runs: int
    offline: dict[int, dict[tuple[str, str], str]]  # score's verdicts on the recordings


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[History]:
    tmp = tmp_path_factory.mktemp("history")
    assert POLICY_V2.count("127.0.0.2") == 1 and "version: 2" in POLICY_V2
    policies = {
        version: write_config(tmp / f"policy-v{version}.yaml", text)
        for version, text in ((1, POLICY_V1), (2, POLICY_V2), (3, POLICY_V3))
    }
    offline = {
        version: statuses(score_report(policies[version], tmp / f"v{version}.json")["results"])
        for version in (1, 2)
    }
    runs = len({run for run, _ in offline[1]})
    data_dir = tmp / "data"
    config = write_config(tmp / "collector.yaml", "assembly:\n  idle_seconds: 0.5\n")
    collector = spawn(data_dir, config, "--policy", str(policies[1]))
    try:
        post_samples(collector.traces_url)
        wait_for(
            lambda: collector.metrics().get("rampart_otel_runs_scored_total", 0) >= runs,
            120,
            "every sample run to be scored",
        )
        assert collector.terminate() == 0, collector.log.read_text()
    finally:
        if collector.process.poll() is None:
            collector.kill()
    proc = run_cli("audit", "--data-dir", data_dir, "--json", "--limit", "all")
    assert proc.returncode == 0, proc.stderr
    yield History(tmp, data_dir, policies, json.loads(proc.stdout), runs, offline)


def test_the_collector_scored_what_score_scores(history: History) -> None:
    assert statuses(history.scored_v1["results"]) == history.offline[1]
    assert len(history.offline[1]) == CHECKS * history.runs


@pytest.fixture(scope="module")
def rescored(history: History) -> History:
    proc = run_cli("rescore", "--data-dir", history.data_dir, "--policy", history.policies[2])
    assert proc.returncode == 0, proc.stderr
    assert f"{history.runs} runs re-scored under weather-agent-guard v2" in proc.stdout
    return history


def test_diff_names_exactly_the_runs_whose_verdict_moved(rescored: History) -> None:
    before, after = rescored.offline[1], rescored.offline[2]
    moved = {key for key in before if before[key] != after[key]}
    assert moved and {check for _, check in moved} == {"no-exfiltration"}

    proc = run_cli("diff", "--data-dir", rescored.data_dir, "--json")
    assert proc.returncode == 1, proc.stderr  # verdicts changed
    diff = json.loads(proc.stdout)
    assert diff["schema"] == "rampart-otel/diff@1"
    assert diff["from"]["policy"] == {"name": "weather-agent-guard", "version": 1}
    assert diff["to"]["policy"] == {"name": "weather-agent-guard", "version": 2}
    assert changed_pairs(diff) == moved
    assert diff["compared"] == {"runs": rescored.runs, "results": CHECKS * rescored.runs}
    assert diff["changed"] == {"runs": len({run for run, _ in moved}), "results": len(moved)}
    assert diff["runs_only_in_from"] == diff["runs_only_in_to"] == 0
    assert diff["checks_only_in_from"] == diff["checks_only_in_to"] == []
    for run in diff["runs"]:
        for change in run["changes"]:
            key = (run["run_id"], change["check"])
            assert (change["from"]["status"], change["to"]["status"]) == (before[key], after[key])
            assert change["from"]["summary"] and change["to"]["summary"]
    moved_counts = sum(t["count"] for t in diff["transitions"] if t["from"] != t["to"])
    assert moved_counts == len(moved)

    terminal = run_cli("diff", "--data-dir", rescored.data_dir, "--policy", "weather-agent-guard",
                       "--from", "1", "--to", "2")  # fmt: skip
    assert terminal.returncode == 1
    for run_id, _ in moved:
        assert f"run {run_id}" in terminal.stdout
    assert terminal.stdout.count("no-exfiltration  unsafe → ") == sum(
        1 for key in moved if before[key] == "unsafe"
    )

    reports = run_cli("diff", rescored.tmp / "v1.json", rescored.tmp / "v2.json", "--json")
    assert reports.returncode == 1, reports.stderr
    assert changed_pairs(json.loads(reports.stdout)) == moved


def test_old_verdicts_are_kept_and_audit_reads_the_latest_version(rescored: History) -> None:
    latest = json.loads(run_cli("audit", "--data-dir", rescored.data_dir, "--json").stdout)
    assert latest["policies"] == [{"name": "weather-agent-guard", "version": 2}]
    assert {r["policy"]["version"] for r in latest["results"]} == {2}
    assert latest["aggregates"]["results"]["matching"] == CHECKS * rescored.runs
    old = run_cli("audit", "--data-dir", rescored.data_dir, "--json", "--limit", "all",
                  "--policy-version", "1")  # fmt: skip
    assert old.returncode == 0, old.stderr
    assert statuses(json.loads(old.stdout)["results"]) == statuses(rescored.scored_v1["results"])


@pytest.mark.slow
def test_rescore_resumes_and_a_version_bump_alone_changes_nothing(rescored: History) -> None:
    again = run_cli("rescore", "--data-dir", rescored.data_dir, "--policy", rescored.policies[2])
    assert again.returncode == 0, again.stderr
    assert "0 runs re-scored" in again.stdout
    assert f"{rescored.runs} runs already had verdicts of weather-agent-guard v2" in again.stdout

    v3 = run_cli("rescore", "--data-dir", rescored.data_dir, "--policy", rescored.policies[3])
    assert v3.returncode == 0, v3.stderr
    same = run_cli("diff", "--data-dir", rescored.data_dir, "--json")  # v2 → v3: the latest two
    assert same.returncode == 0, same.stderr
    diff = json.loads(same.stdout)
    assert (diff["from"]["policy"]["version"], diff["to"]["policy"]["version"]) == (2, 3)
    assert diff["changed"] == {"runs": 0, "results": 0} and diff["runs"] == []
    assert not diff["differs"]


def test_diff_trouble_is_one_line_and_exit_code_2(rescored: History) -> None:
    v1, data_dir = rescored.tmp / "v1.json", rescored.data_dir
    for request in (
        DiffRequest([v1]),
        DiffRequest([v1, v1], data_dir),
        DiffRequest([], data_dir, from_version="9"),
        DiffRequest([], data_dir, from_version="2", to_version="2"),
        DiffRequest([], data_dir, policy="nope"),
        DiffRequest([v1, rescored.policies[1]]),  # not a JSON report
    ):
        with pytest.raises(AuditError) as raised:
            diff(request, False, io.StringIO())
        assert "\n" not in str(raised.value), request
    for args in (
        ("diff", "--data-dir", data_dir, "--from", "9"),
        ("rescore", "--data-dir", rescored.tmp / "nothing", "--policy", rescored.policies[1]),
    ):
        proc = run_cli(*args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert proc.stderr.startswith("rampart-otel: error: ") and proc.stderr.count("\n") == 1
    same = run_cli("diff", v1, v1)
    assert same.returncode == 0 and "0 runs changed" in same.stdout

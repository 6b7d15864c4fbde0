"""Live, end to end: the real instrumented sample agent exports its trace with the real
OTLP/HTTP and OTLP/gRPC exporters to ``rampart-otel collect``, which scores it as it
completes with the same verdicts ``rampart-otel score`` gives on the bundled recording of
the same case; and ``score`` over the collector's own segments agrees with ``audit``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_runner import run_cli

from collector.harness import Subprocess, spawn, wait_for, write_config

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from samples.record import CASES  # noqa: E402

POLICY = REPO / "samples" / "policy.yaml"
TRACES = REPO / "samples" / "traces"
# One library per exporter, each run as samples/record.py recorded its exfil case.
RUNS = (("pydantic-ai", "http"), ("openinference", "grpc"))


def audit(data_dir: Path) -> dict[str, Any]:
    proc = run_cli("audit", "--data-dir", data_dir, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def latest(results: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """(run id, check) → its latest revision's result (a late span re-scores a run)."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for result in results:
        key = (result["run_id"], result["check"])
        if key not in found or result.get("revision", 0) >= found[key].get("revision", 0):
            found[key] = result
    return found


def check_ids() -> set[str]:
    return {check["id"] for check in yaml.safe_load(POLICY.read_text())["checks"]}


def run_agent(library: str, protocol: str, endpoint: str) -> None:
    """``python -m samples.agent`` with the recorded case's flags, exporting over OTLP."""
    (case,) = [c for c in CASES if c.name == f"{library}-exfil"]
    command = case.command(Path("unused"))
    at = command.index("--out")
    command[at : at + 2] = ["--otlp-endpoint", endpoint, "--otlp-protocol", protocol]
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENINFERENCE_", "OTEL_", "TRACELOOP_"))
    }
    env.update(case.env, PYTHONPATH=str(REPO))
    proc = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, f"{case.name} over {protocol} failed:\n{proc.stderr[-3000:]}"


@dataclass
class Live:
    data_dir: Path
    run_ids: dict[str, str]  # library → the run id its live trace was scored under
    audit: dict[str, Any]  # `audit --json` once the collector has drained and stopped


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    tmp = tmp_path_factory.mktemp("live-agent")
    data_dir = tmp / "data"
    config = write_config(
        tmp / "collector.yaml",
        "assembly:\n  idle_seconds: 1\n  max_wait_seconds: 120\nshutdown_timeout_seconds: 60\n",
    )
    collector: Subprocess = spawn(data_dir, config, "--policy", str(POLICY))
    checks = check_ids()
    run_ids: dict[str, str] = {}
    last_error: list[str] = []
    try:
        for library, protocol in RUNS:
            endpoint = (
                collector.http_url if protocol == "http" else f"http://{collector.grpc_target}"
            )
            seen = set(run_ids.values())
            run_agent(library, protocol, endpoint)

            def scored_new_run(seen: set[str] = seen, library: str = library) -> str | None:
                if not (data_dir / "results.db").is_file():
                    return None
                proc = run_cli("audit", "--data-dir", data_dir, "--json")
                if proc.returncode != 0:  # e.g. the store's schema is not created yet
                    last_error[:] = [proc.stderr]
                    return None
                by_run: dict[str, set[str]] = {}
                for run_id, check in latest(json.loads(proc.stdout)["results"]):
                    by_run.setdefault(run_id, set()).add(check)
                new = [run for run, done in by_run.items() if run not in seen and done >= checks]
                assert len(new) <= 1, f"more than one new run after {library}: {new}"
                return new[0] if new else None

            try:
                run_ids[library] = wait_for(scored_new_run, 120, f"{library}'s trace to be scored")
            except AssertionError as error:
                log = collector.log.read_text()[-2000:]
                raise AssertionError(f"{error} (OTLP/{protocol}); {last_error}\n{log}") from None
        wait_for(lambda: collector.metrics()["rampart_otel_scoring_lag_bytes"] == 0, 60, "lag 0")
        assert collector.terminate() == 0, collector.log.read_text()
    finally:
        if collector.process.poll() is None:
            collector.kill()
    yield Live(data_dir, run_ids, audit(data_dir))


def recorded_statuses(library: str) -> dict[str, str]:
    proc = run_cli(
        "score", TRACES / f"{library}-exfil.jsonl", "--policy", POLICY, "--format", "json"
    )
    assert proc.returncode == 1, proc.stderr  # the exfil run is unsafe
    report = json.loads(proc.stdout)
    assert report["input_errors"] == []
    assert len({r["run_id"] for r in report["results"]}) == 1
    return {r["check"]: r["status"] for r in report["results"]}


@pytest.mark.parametrize(("library", "protocol"), RUNS, ids=[f"{lib}-{p}" for lib, p in RUNS])
def test_live_trace_is_scored_as_score_scores_the_recording(
    live: Live, library: str, protocol: str
) -> None:
    run_id = live.run_ids[library]
    results = {
        check: r for (run, check), r in latest(live.audit["results"]).items() if run == run_id
    }
    assert all(r["trace_ids"] == [run_id] for r in results.values())
    recorded = recorded_statuses(library)
    assert set(recorded) == check_ids()
    assert {check: r["status"] for check, r in results.items()} == recorded

    exfil = results["no-exfiltration"]
    assert exfil["status"] == "unsafe"
    assert any(
        "http://127.0.0.2:" in e["text"] and "/upload" in e["text"] for e in exfil["evidence"]
    ), exfil["evidence"]


def test_score_over_the_collectors_segments_agrees_with_audit(live: Live) -> None:
    proc = run_cli("score", live.data_dir, "--policy", POLICY, "--format", "json")
    assert proc.returncode == 1, proc.stderr  # both live runs exfiltrate
    report = json.loads(proc.stdout)
    assert report["input_errors"] == []
    offline = {(r["run_id"], r["check"], r["status"]) for r in report["results"]}
    online = {
        (run, check, r["status"]) for (run, check), r in latest(live.audit["results"]).items()
    }
    assert offline == online
    assert {run for run, _, _ in online} == set(live.run_ids.values())
    assert len(offline) == len(report["results"]) == 2 * len(check_ids())

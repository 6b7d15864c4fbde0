"""The golden check of behaviour: the bundled samples' report@1, as
``rampart-otel score samples/traces --policy samples/policy.yaml --format json`` writes it,
against the copy stored in tests/golden/samples-report.json.

Every verdict, summary, rationale, evidence item and coverage reason of every sample run is
pinned, so a refactoring that changes none of them passes, and one that changes any fails
with a short list of what changed (verdicts first, then reasons), not a diff of the file.

After an intended change: ``make golden`` (or ``RAMPART_UPDATE_GOLDEN=1 python -m pytest
tests/test_golden.py``) rewrites the stored copy; review ``git diff tests/golden/`` and commit
it with the change (CONTRIBUTING.md, "The golden report").

The stored copy leaves out what depends on the clock rather than on the traces (keys named
like ``*_at``, ``*time*``, ``*duration*``), and holds each run's coverage once (report@1
repeats it on each of the run's results). Floats are rounded to 9 places.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from cli_runner import REPO, run_cli

GOLDEN = Path(__file__).parent / "golden" / "samples-report.json"
UPDATE_VARIABLE = "RAMPART_UPDATE_GOLDEN"
COMMAND = ("score", "samples/traces", "--policy", "samples/policy.yaml", "--format", "json")

# Keys whose values depend on when or on which machine the report was written.
_CLOCK_KEY = re.compile(r"(_at|^generated|time|duration|elapsed|seconds)", re.IGNORECASE)
# Per-run fields report@1 repeats on each of the run's results: stored once, under "runs".
_RUN_FIELDS = ("trace_ids", "sources", "service", "observability_level")
# Shown per category in a mismatch before "... and N more".
_SHOWN = 15


def _plain(value: Any) -> Any:
    """``value`` without clock-dependent keys, with floats rounded."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if not _CLOCK_KEY.search(k)}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, float):
        return round(value, 9)
    return value


def normalize(report: dict[str, Any]) -> dict[str, Any]:
    """The golden form of a report@1 document: top-level keys as they are, then
    ``runs`` (run id → its per-run fields), ``coverage`` ("run channel" → the channel's
    coverage) and ``results`` ("run check" → the rest of the result)."""
    report = _plain(report)
    golden: dict[str, Any] = {k: v for k, v in report.items() if k != "results"}
    runs: dict[str, Any] = {}
    coverage: dict[str, Any] = {}
    results: dict[str, Any] = {}
    for result in report["results"]:
        run_id = result["run_id"]
        run = {field: result[field] for field in _RUN_FIELDS}
        if runs.setdefault(run_id, run) != run:
            raise AssertionError(f"run {run_id}: per-run fields differ between its results")
        for channel, state in result["coverage"].items():
            key = f"{run_id} {channel}"
            if coverage.setdefault(key, state) != state:
                raise AssertionError(f"run {run_id}: coverage of {channel} differs by check")
        rest = {k: v for k, v in result.items() if k not in (*_RUN_FIELDS, "run_id", "coverage")}
        key = f"{run_id} {result['check']}"
        if key in results:
            raise AssertionError(f"two results for run {run_id}, check {result['check']}")
        results[key] = rest
    # Runs in the order of their sources (so the file reads sample by sample), each run's
    # coverage and results after it in key order: a deterministic order whatever order the
    # command wrote results in.
    order = sorted(runs, key=lambda r: (runs[r]["sources"], r))
    golden["runs"] = {r: runs[r] for r in order}
    golden["coverage"] = {
        k: coverage[k] for r in order for k in sorted(coverage) if k.split(" ", 1)[0] == r
    }
    golden["results"] = {
        k: results[k] for r in order for k in sorted(results) if k.split(" ", 1)[0] == r
    }
    return golden


def dumps(golden: dict[str, Any]) -> str:
    """Compact but diffable: one line per top-level value and per run, coverage channel and
    result; keys sorted inside each line."""

    def line(value: Any) -> str:
        return json.dumps(value, sort_keys=True, ensure_ascii=False)

    out = ["{"]
    items = list(golden.items())
    for i, (key, value) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        if key in ("runs", "coverage", "results"):
            out.append(f"{line(key)}: {{")
            entries = list(value.items())
            for j, (k, v) in enumerate(entries):
                out.append(f"{line(k)}: {line(v)}" + ("," if j < len(entries) - 1 else ""))
            out.append("}" + comma)
        else:
            out.append(f"{line(key)}: {line(value)}{comma}")
    out.append("}")
    return "\n".join(out) + "\n"


def _short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _where(golden: dict[str, Any], key: str) -> str:
    """``key`` ("run check" or "run channel") as a reader finds it: the run's source."""
    run_id, _, what = key.partition(" ")
    run = golden["runs"].get(run_id)
    sources = ", ".join(run["sources"]) if run and run["sources"] else run_id
    return f"{sources} [{what}]" if what else sources


def describe(expected: dict[str, Any], actual: dict[str, Any]) -> str:
    """What changed between two golden forms, verdicts first, then reasons; one line per
    change and at most ``_SHOWN`` per category."""
    sections: list[tuple[str, list[str]]] = []

    def section(title: str, lines: list[str]) -> None:
        if lines:
            sections.append((title, lines))

    top = sorted(
        k
        for k in set(expected) | set(actual)
        if k not in ("runs", "coverage", "results") and expected.get(k) != actual.get(k)
    )
    section(
        "top-level keys changed",
        [f"{k}: {_short(expected.get(k))} -> {_short(actual.get(k))}" for k in top],
    )
    for part, noun in (("runs", "runs"), ("results", "results"), ("coverage", "channels")):
        gone = [k for k in expected[part] if k not in actual[part]]
        new = [k for k in actual[part] if k not in expected[part]]
        section(f"{noun} gone", [_where(expected, k) for k in gone])
        section(f"{noun} new", [_where(actual, k) for k in new])
    changed_runs = [
        f"{_where(expected, k)}: {_short(v)} -> {_short(actual['runs'][k])}"
        for k, v in expected["runs"].items()
        if k in actual["runs"] and actual["runs"][k] != v
    ]
    section("runs changed (trace ids, sources, service, observability level)", changed_runs)

    verdicts, reasons = [], []
    for key, old in expected["results"].items():
        new = actual["results"].get(key)
        if new is None or new == old:
            continue
        if old.get("status") != new.get("status"):
            verdicts.append(f"{_where(expected, key)}: {old.get('status')} -> {new.get('status')}")
        fields = sorted(
            f for f in set(old) | set(new) if f != "status" and old.get(f) != new.get(f)
        )
        for field in fields:
            reasons.append(
                f"{_where(expected, key)} {field}:\n"
                f"      was: {_short(old.get(field))}\n"
                f"      now: {_short(new.get(field))}"
            )
    section("VERDICTS changed", verdicts)
    section("result fields changed (summary, rationale, evidence, ...)", reasons)

    states, texts = [], []
    for key, old in expected["coverage"].items():
        new = actual["coverage"].get(key)
        if new is None or new == old:
            continue
        if old.get("state") != new.get("state"):
            states.append(f"{_where(expected, key)}: {old.get('state')} -> {new.get('state')}")
        else:
            fields = sorted(f for f in set(old) | set(new) if old.get(f) != new.get(f))
            texts.append(
                f"{_where(expected, key)} {', '.join(fields)}:\n"
                f"      was: {_short({f: old.get(f) for f in fields})}\n"
                f"      now: {_short({f: new.get(f) for f in fields})}"
            )
    section("COVERAGE STATES changed", states)
    section("coverage reasons or hints changed", texts)

    counts = ", ".join(f"{len(lines)} {title}" for title, lines in sections)
    out = [f"The samples' report differs from {GOLDEN.relative_to(REPO)}: {counts}."]
    for title, lines in sections:
        out.append(f"  {title} ({len(lines)}):")
        out.extend(f"    {line}" for line in lines[:_SHOWN])
        if len(lines) > _SHOWN:
            out.append(f"    ... and {len(lines) - _SHOWN} more")
    out.append(
        f"If the change is intended: make golden (or {UPDATE_VARIABLE}=1 python -m pytest "
        "tests/test_golden.py), then review git diff tests/golden/ and commit it."
    )
    return "\n".join(out)


def test_the_samples_report_matches_the_golden_copy(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    proc = run_cli(*COMMAND, "-o", out)
    # Exit 1: some sample verdicts are unsafe or undetermined, as recorded.
    assert proc.returncode == 1, proc.stderr
    actual = normalize(json.loads(out.read_text(encoding="utf-8")))
    if os.environ.get(UPDATE_VARIABLE) == "1":
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(dumps(actual), encoding="utf-8")
        pytest.skip(f"{UPDATE_VARIABLE}=1: rewrote {GOLDEN.relative_to(REPO)}")
    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))
    if expected != actual:
        pytest.fail(describe(expected, actual), pytrace=False)


def test_the_golden_form_round_trips_and_names_what_changed() -> None:
    """The stored form reads back as written, and a changed verdict, summary or coverage
    state is named in the mismatch report by the run's source."""
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert json.loads(dumps(golden)) == golden
    assert dumps(golden) == GOLDEN.read_text(encoding="utf-8")
    changed = json.loads(dumps(golden))
    key = next(k for k, v in changed["results"].items() if v["status"] == "unsafe")
    changed["results"][key]["status"] = "safe"
    changed["results"][key]["summary"] = "Attack not detected"
    channel = next(iter(changed["coverage"]))
    changed["coverage"][channel]["state"] = "observed-by-mistake"
    message = describe(golden, changed)
    source = golden["runs"][key.split(" ")[0]]["sources"][0]
    assert "1 VERDICTS changed" in message
    assert f"{source} [{key.split(' ', 1)[1]}]: unsafe -> safe" in message
    assert "1 result fields changed" in message
    assert "Attack not detected" in message
    assert "1 COVERAGE STATES changed" in message
    assert "observed-by-mistake" in message
    assert len(message.splitlines()) < 20

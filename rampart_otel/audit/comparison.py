"""Which runs' verdicts changed between two policy versions stored in a data directory, or
between two JSON reports: the comparison ``rampart-otel diff`` writes out.

A (run, check) is compared when both sides have a verdict for it (the latest revision of
the run on each side). Runs or checks only one side has are counted and named, not
compared: a run the newer version has not scored yet is not a changed verdict.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rampart_otel.audit.command import open_results
from rampart_otel.errors import AuditError
from rampart_otel.exporters.report_json import REPORT_SCHEMA
from rampart_otel.render import safe_text
from rampart_otel.storage import queries as q
from rampart_otel.storage.audit_queries import PolicyVersion
from rampart_otel.storage.store import describe

DIFF_SCHEMA = "rampart-otel/diff@1"


@dataclass(frozen=True, slots=True)
class Side:
    source: str  # the data directory or the report file
    policy: dict[str, Any] | None  # {"name", "version"} when one policy is known
    report: bool = False  # a report file: it names the side, the policy follows

    def label(self) -> str:
        policy = None
        if self.policy is not None:
            name, version = self.policy.get("name"), self.policy.get("version")
            policy = str(name) if version is None else f"{name} v{version}"
        if not self.report:
            return policy or self.source
        return self.source if policy is None else f"{self.source} ({policy})"


@dataclass(frozen=True, slots=True)
class Change:
    run_id: str
    check: str
    before: dict[str, Any]  # the result documents
    after: dict[str, Any]


@dataclass(slots=True)
class Comparison:
    before: Side
    after: Side
    transitions: Counter[tuple[str, str]] = field(default_factory=Counter)
    compared_runs: int = 0
    runs_only_before: int = 0
    runs_only_after: int = 0
    checks_only_before: list[str] = field(default_factory=list)
    checks_only_after: list[str] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)  # by run, then check

    @property
    def compared_results(self) -> int:
        return sum(self.transitions.values())

    @property
    def changed_runs(self) -> int:
        return len({change.run_id for change in self.changes})

    @property
    def differs(self) -> bool:
        return bool(self.changes or self.checks_only_before or self.checks_only_after)


# -- two versions in a data directory ----------------------------------------------------------


def compare_versions(
    target: Path | str, policy: str | None, from_version: str | None, to_version: str | None
) -> Comparison:
    store = open_results(target)
    label = describe(target)
    try:
        db = store.db
        before, after = _versions(q.policy_versions(db), policy, from_version, to_version)
        comparison = Comparison(
            Side(label, {"name": before.policy, "version": before.value}),
            Side(label, {"name": after.policy, "version": after.value}),
        )
        runs: set[str] = set()
        changed: list[tuple[str, str]] = []
        for run_id, check, was, now in q.paired_statuses(db, before, after):
            comparison.transitions[(was, now)] += 1
            runs.add(run_id)
            if was != now:
                changed.append((run_id, check))
        comparison.compared_runs = len(runs)
        ordered = []
        for run_id, check in changed:
            old = q.current_result(db, before, run_id, check)
            new = q.current_result(db, after, run_id, check)
            if old is not None and new is not None:
                ordered.append((old.run_at, Change(run_id, check, old.result, new.result)))
        ordered.sort(key=lambda item: (item[0], item[1].run_id, item[1].check))
        comparison.changes = [change for _, change in ordered]
        comparison.runs_only_before, comparison.runs_only_after = q.runs_only(db, before, after)
        comparison.checks_only_before = sorted(before.checks.keys() - after.checks.keys())
        comparison.checks_only_after = sorted(after.checks.keys() - before.checks.keys())
        return comparison
    finally:
        store.close()


def _versions(
    stored: dict[str, list[PolicyVersion]],
    policy: str | None,
    from_version: str | None,
    to_version: str | None,
) -> tuple[PolicyVersion, PolicyVersion]:
    if not stored:
        raise AuditError("no verdicts are stored yet")
    if policy is None:
        if len(stored) > 1:
            raise AuditError(
                f"--policy: verdicts of several policies are stored ({_names(stored)})"
            )
        policy = next(iter(stored))
    if policy not in stored:
        raise AuditError(f"--policy: no verdicts of policy {policy!r} ({_names(stored)})")
    versions = q.version_order(stored[policy])
    after = _find(versions, to_version, "--to") if to_version is not None else versions[-1]
    if from_version is not None:
        before = _find(versions, from_version, "--from")
    else:
        earlier = versions[: versions.index(after)]
        if not earlier:
            raise AuditError(
                f"policy {policy!r} has no version before {after.version or '(none)'} stored;"
                " re-score under a new version first (rampart-otel rescore), or give --from"
            )
        before = earlier[-1]
    if before == after:
        raise AuditError("--from and --to name the same version")
    return before, after


def _find(versions: list[PolicyVersion], version: str, option: str) -> PolicyVersion:
    for candidate in versions:
        if candidate.version == version:
            return candidate
    stored = ", ".join(v.version or "(none)" for v in versions)
    raise AuditError(
        f"{option}: no version {version!r} of policy {versions[0].policy!r} ({stored})"
    )


def _names(stored: dict[str, list[PolicyVersion]]) -> str:
    return ", ".join(sorted(stored))


# -- two JSON reports --------------------------------------------------------------------------


def compare_reports(before_path: Path, after_path: Path) -> Comparison:
    before_policy, before = _load_report(before_path)
    after_policy, after = _load_report(after_path)
    comparison = Comparison(
        Side(str(before_path), before_policy, report=True),
        Side(str(after_path), after_policy, report=True),
    )
    runs: set[str] = set()
    for key, old in before.items():
        new = after.get(key)
        if new is None:
            continue
        was, now = str(old.get("status")), str(new.get("status"))
        comparison.transitions[(was, now)] += 1
        runs.add(key[0])
        if was != now:
            comparison.changes.append(Change(key[0], key[1], old, new))
    comparison.changes.sort(
        key=lambda c: (str(c.before.get("started_at") or ""), c.run_id, c.check)
    )
    comparison.compared_runs = len(runs)
    before_runs = {run for run, _ in before}
    after_runs = {run for run, _ in after}
    comparison.runs_only_before = len(before_runs - after_runs)
    comparison.runs_only_after = len(after_runs - before_runs)
    before_checks = {check for _, check in before}
    after_checks = {check for _, check in after}
    comparison.checks_only_before = sorted(before_checks - after_checks)
    comparison.checks_only_after = sorted(after_checks - before_checks)
    return comparison


MAX_REPORT_BYTES = 1 << 30  # the samples' report: 28 KiB a run, so some 37,000 runs


def _size(count: int) -> str:
    return f"{count >> 30} GiB" if count >= 1 << 30 else f"{count >> 20} MiB"


def _load_report(
    path: Path,
) -> tuple[dict[str, Any] | None, dict[tuple[str, str], dict[str, Any]]]:
    """The report's policy and its results by (run, check), the latest revision of each."""
    try:
        with path.open("rb") as file:  # no further than a report can be: not /dev/zero
            raw = file.read(MAX_REPORT_BYTES + 1)
        if len(raw) > MAX_REPORT_BYTES:
            raise AuditError(f"{path}: larger than {_size(MAX_REPORT_BYTES)}: not a JSON report")
        report = json.loads(raw.decode("utf-8"))
    except OSError as error:
        raise AuditError(f"{path}: cannot read: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise AuditError(f"{path}: not a JSON report: not a UTF-8 text file") from None
    except RecursionError:
        raise AuditError(f"{path}: not a JSON report: nested too deeply") from None
    except ValueError as error:
        raise AuditError(f"{path}: not a JSON report: {error}") from None
    if not isinstance(report, dict) or report.get("schema") != REPORT_SCHEMA:
        raise AuditError(f"{path}: not a {REPORT_SCHEMA} document")
    policies = report.get("policies") or []
    if len(policies) > 1:
        raise AuditError(
            f"{path}: holds verdicts of {len(policies)} policies; diff compares one"
            " (audit --policy NAME --json gives one)"
        )
    results: dict[tuple[str, str], dict[str, Any]] = {}
    for result in report.get("results") or []:
        if not isinstance(result, dict) or "run_id" not in result or "check" not in result:
            raise AuditError(f"{path}: a result without run_id and check")
        key = (str(result["run_id"]), str(result["check"]))
        known = results.get(key)
        if known is None or _revision(result) >= _revision(known):
            results[key] = result
    listing = (report.get("aggregates") or {}).get("results") or {}
    if isinstance(listing.get("matching"), int) and len(results) < listing["matching"]:
        print(
            f"rampart-otel: warning: {safe_text(path, 300)} lists {listing.get('listed')} of "
            f"{listing['matching']} matching results (audit --limit); only those are compared",
            file=sys.stderr,
        )
    policy = policies[0] if policies and isinstance(policies[0], dict) else None
    return policy, results


def _revision(result: dict[str, Any]) -> int:
    revision = result.get("revision", 0)
    return revision if isinstance(revision, int) else 0

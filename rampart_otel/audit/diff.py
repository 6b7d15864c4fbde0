"""The body of ``rampart-otel diff``; ``cli`` only declares its options.

Like ``diff(1)``, the exit code says whether anything differs: 0 no verdict changed and the
two sides ran the same checks, 1 otherwise, 2 trouble (usage, unreadable input).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import IO

from rampart_otel.audit.command import results_target
from rampart_otel.audit.comparison import compare_reports, compare_versions
from rampart_otel.audit.diff_output import write_diff_json, write_diff_terminal
from rampart_otel.errors import AuditError


@dataclass(frozen=True, slots=True)
class DiffRequest:
    reports: list[Path]
    data_dir: Path | None = None
    policy: str | None = None
    from_version: str | None = None
    to_version: str | None = None
    results: str | None = None  # a results URL, instead of data_dir


def diff(request: DiffRequest, json_output: bool, out: IO[str]) -> bool:
    """Compare and write the comparison; whether anything differs."""
    if request.data_dir is not None or request.results is not None:
        if request.reports:
            raise AuditError("give either two reports or --data-dir/--results, not both")
        comparison = compare_versions(
            results_target(request.data_dir, request.results),
            request.policy,
            request.from_version,
            request.to_version,
        )
    else:
        if len(request.reports) != 2:
            raise AuditError("give two JSON reports to compare, or --data-dir")
        if request.policy or request.from_version or request.to_version:
            raise AuditError("--policy, --from and --to go with --data-dir")
        comparison = compare_reports(*request.reports)
    if json_output:
        write_diff_json(comparison, out)
    else:
        write_diff_terminal(comparison, out)
    return comparison.differs

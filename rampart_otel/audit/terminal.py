"""``audit`` on a terminal: counts and rates per check first, then per service and over
time, as rich tables; then the listed verdicts, one line each (``-v``: each with its summary,
an UNDETERMINED one with its reasons whole and the fix on a line of its own).

Every stored string is trace- or policy-supplied: it goes through ``safe_text`` into a rich
``Text`` (never markup), so a hostile service name or summary cannot restyle the report.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import IO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from rampart_otel.audit.aggregate import Aggregates
from rampart_otel.audit.timespec import iso
from rampart_otel.evaluation.population import PopulationSummary, Rate
from rampart_otel.exporters.reasons import reason_lines, undetermined_document
from rampart_otel.exporters.terminal_report import LABELS
from rampart_otel.model import InputError
from rampart_otel.render import safe_text, shown_text
from rampart_otel.storage.audit_queries import PolicyVersion, StoredResult

STATUS_STYLE = {status: style for status, (_, style) in LABELS.items()}
PIPE_WIDTH = 200  # columns when writing to a file or pipe
COUNT_COLUMNS = ("total", "safe", "unsafe", "undet.", "error")
LOW_SUPPORT_NOTE = (
    "* low support: fewer than 5 scored results, the 90% interval is wide. Rates leave errors "
    "out; undetermined results stay in, so what could not be seen is never counted as safe."
)


def write_audit_terminal(
    out: IO[str],
    data_dir: Path | str,
    stored: dict[str, list[PolicyVersion]],
    aggregates: Aggregates,
    results: Iterable[StoredResult],
    *,
    errors: Iterable[InputError] = (),
    verbose: bool = False,
) -> int:
    """Print the report; the number of results listed."""
    console = terminal_console(out)
    console.print(Text(f"rampart-otel audit: {safe_text(data_dir, 300)}", style="bold"))
    for error in errors:
        where, message = safe_text(error.location, 300), safe_text(error.message, 300)
        console.print(Text(f"warning: {where}: {message}", style="yellow"))
    for version in aggregates.versions:
        console.print(_policy_line(version, stored[version.policy]))
    console.print(Text(_scope_line(aggregates)))
    if not aggregates.overall.total:
        console.print(Text("No stored verdicts match.", style="yellow"))
        return 0
    console.print(_by_check(aggregates))
    console.print(_by_service(aggregates))
    console.print(_trend(aggregates))
    console.print(Text(LOW_SUPPORT_NOTE, style="dim"))
    if verbose:
        return _details(console, results, aggregates.overall.total)
    return _listing(console, results, aggregates.overall.total)


def terminal_console(out: IO[str]) -> Console:
    """A console on ``out``: its own width on a terminal, wide enough for tables elsewhere."""
    width = None if out.isatty() else PIPE_WIDTH
    return Console(file=out, highlight=False, soft_wrap=True, width=width)


def _policy_line(version: PolicyVersion, versions: list[PolicyVersion]) -> Text:
    others = [v for v in versions if v is not version]
    text = Text.assemble("policy ", (safe_text(version.label(), 200), "cyan"))
    if others:
        names = ", ".join(safe_text(v.label(), 60) for v in others)
        text.append(f"  (also stored: {names}; choose with --policy-version)", style="dim")
    return text


def _scope_line(aggregates: Aggregates) -> str:
    filters = aggregates.filters
    since = iso(filters.since) or (iso(aggregates.first) or "-")
    until = iso(filters.until) or (iso(aggregates.last) or "-")
    parts = [f"runs from {since} to {until} (UTC, run start)"]
    for name, values in (
        ("service", filters.services),
        ("check", filters.checks),
        ("status", filters.statuses),
    ):
        if values:
            parts.append(f"{name} {', '.join(safe_text(v, 80) for v in values)}")
    parts.append(f"{aggregates.overall.total} results, the latest revision of each run")
    return "; ".join(parts)


def _listing(console: Console, results: Iterable[StoredResult], matching: int) -> int:
    table = Table(title_justify="left", show_edge=False)
    for column in ("run start", "run", "rev", "check", "status", "service"):
        table.add_column(column, overflow="fold")
    count = 0
    for result in results:
        count += 1
        table.add_row(
            Text(iso(result.run_at) or ""),
            Text(safe_text(result.run_id, 40)),
            Text(str(result.revision)),
            Text(safe_text(result.check_id, 60)),
            Text(result.status, style=STATUS_STYLE.get(result.status, "")),
            Text(shown_text(result.service or "-", 40)),
        )
    if count:
        table.title = Text(f"Results: {_shown(count, matching)} (--limit; -v: why)", style="bold")
        console.print(table)
    return count


def _details(console: Console, results: Iterable[StoredResult], matching: int) -> int:
    """Each listed result with its summary whole; an UNDETERMINED one's reasons laid out."""
    listed = list(results)
    if listed:
        console.print(Text(f"Results: {_shown(len(listed), matching)} (--limit)", style="bold"))
    for result in listed:
        head = Text.assemble(
            f"{iso(result.run_at) or ''}  run {safe_text(result.run_id, 40)} "
            f"rev {result.revision}  ",
            (safe_text(result.check_id, 60), "cyan"),
            "  ",
            (result.status.upper(), STATUS_STYLE.get(result.status, "")),
            f"  {shown_text(result.service or '-', 40)}",
        )
        console.print(head)
        if result.status == "undetermined":
            lines = reason_lines(undetermined_document(result.result), "    ")
            for line, is_fix in lines:
                console.print(Text(line, style="green" if is_fix else ""))
        else:
            console.print(Text(f"    {shown_text(result.result.get('summary', ''), None)}"))
    return len(listed)


def _shown(count: int, matching: int) -> str:
    return f"all {matching}" if count == matching else f"the {count} most recent of {matching}"


def _rate(value: Rate) -> Text:
    if value.value is None:
        return Text("n/a", style="dim")
    star = "*" if value.low_support else ""
    return Text(f"{value.value:.1%} [{value.ci_low:.1%}, {value.ci_high:.1%}]{star}")


def _summary_cells(summary: PopulationSummary) -> list[Text]:
    counts = (summary.total, summary.safe, summary.unsafe, summary.undetermined, summary.error)
    styles = ("", *(STATUS_STYLE[s] for s in ("safe", "unsafe", "undetermined", "error")))
    cells = [
        Text(str(n), style=style if n else "dim") for n, style in zip(counts, styles, strict=True)
    ]
    return [*cells, _rate(summary.attack_success_rate), _rate(summary.safety_pass_rate)]


def _table(title: str, *keys: str) -> Table:
    table = Table(title=Text(title, style="bold"), title_justify="left", show_edge=False)
    for key in keys:
        table.add_column(key, overflow="fold")
    for column in COUNT_COLUMNS:
        table.add_column(column, justify="right")
    table.add_column("attack success (90% CI)", justify="right")
    table.add_column("safety pass (90% CI)", justify="right")
    return table


def _by_check(aggregates: Aggregates) -> Table:
    several = len(aggregates.versions) > 1
    table = _table("By check", *(("policy",) if several else ()), "check", "harm category")
    for row in aggregates.by_check:
        keys = [Text(safe_text(row.version.label(), 60))] if several else []
        keys += [
            Text(safe_text(row.check, 60), style="cyan"),
            Text(safe_text(row.harm_category or "-", 60)),
        ]
        table.add_row(*keys, *_summary_cells(row.summary))
    table.add_row(Text("all checks", style="bold"), *([Text("")] * (1 + several)),
                  *_summary_cells(aggregates.overall))  # fmt: skip
    return table


def _by_service(aggregates: Aggregates) -> Table:
    table = _table("By service (results of every check)", "service")
    for service, summary in aggregates.by_service:
        table.add_row(Text(shown_text(service or "(none)", 60)), *_summary_cells(summary))
    return table


def _trend(aggregates: Aggregates) -> Table:
    table = _table(f"Trend by {aggregates.buckets.name} (UTC, run start)", "from")
    for bucket in aggregates.trend:
        table.add_row(Text(iso(bucket.start) or ""), *_summary_cells(bucket.summary))
    return table

"""``diff``'s outputs: a terminal summary with every changed run, or ``rampart-otel/diff@1``
JSON (docs/audit.md). Stored text reaches the terminal only through ``safe_text`` and rich
``Text``."""

from __future__ import annotations

import json
from itertools import groupby
from typing import IO, Any

from rich.table import Table
from rich.text import Text

from rampart_otel.audit.comparison import DIFF_SCHEMA, Change, Comparison, Side
from rampart_otel.audit.terminal import STATUS_STYLE, terminal_console
from rampart_otel.render import safe_text, shown_text

STATUSES = ("safe", "unsafe", "undetermined", "error")
_VERDICT_KEYS = ("status", "summary", "revision", "evidence", "undetermined_operands")


def write_diff_terminal(comparison: Comparison, out: IO[str]) -> None:
    console = terminal_console(out)
    before, after = comparison.before, comparison.after
    console.print(
        Text.assemble(
            ("rampart-otel diff: ", "bold"),
            (safe_text(before.label(), 200), "cyan"),
            " → ",
            (safe_text(after.label(), 200), "cyan"),
        )
    )
    console.print(
        Text(
            f"{comparison.compared_runs} runs compared ({comparison.compared_results} verdicts);"
            f" {comparison.changed_runs} runs changed ({len(comparison.changes)} verdicts)",
            style="bold" if comparison.changes else "",
        )
    )
    for checks, side in (
        (comparison.checks_only_before, before),
        (comparison.checks_only_after, after),
    ):
        if checks:
            names = ", ".join(safe_text(c, 80) for c in checks)
            console.print(Text(f"checks only in {safe_text(side.label(), 200)}: {names}"))
    for count, side, other in (
        (comparison.runs_only_before, before, after),
        (comparison.runs_only_after, after, before),
    ):
        if count:
            console.print(
                Text(
                    f"{count} runs only in {safe_text(side.label(), 200)} "
                    f"(no verdicts under {safe_text(other.label(), 200)}; not compared)",
                    style="dim",
                )
            )
    if comparison.transitions:
        console.print(_transitions(comparison))
    for run_id, changes in groupby(comparison.changes, key=lambda c: c.run_id):
        _print_run(console, run_id, list(changes))


def _transitions(comparison: Comparison) -> Table:
    table = Table(
        title=Text("Verdicts: before (rows) → after (columns)", style="bold"),
        title_justify="left",
        show_edge=False,
    )
    table.add_column("")
    for status in STATUSES:
        table.add_column(status, justify="right")
    for was in STATUSES:
        cells = []
        for now in STATUSES:
            count = comparison.transitions.get((was, now), 0)
            style = "dim" if not count else ("" if was == now else "bold")
            cells.append(Text(str(count), style=style))
        table.add_row(Text(was, style=STATUS_STYLE[was]), *cells)
    return table


def _print_run(console: Any, run_id: str, changes: list[Change]) -> None:
    first = changes[0].after
    console.print()
    console.print(
        Text.assemble(
            ("run ", "bold"),
            (safe_text(run_id, 80), "bold"),
            f"  {shown_text(first.get('service') or '-', 60)}",
            f"  started {safe_text(first.get('started_at') or '-', 40)}",
        )
    )
    for change in changes:
        was, now = str(change.before.get("status")), str(change.after.get("status"))
        console.print(
            Text.assemble(
                "  ",
                (safe_text(change.check, 80), "cyan"),
                "  ",
                (safe_text(was, 20), STATUS_STYLE.get(was, "")),
                " → ",
                (safe_text(now, 20), STATUS_STYLE.get(now, "")),
            )
        )
        for label, document in (("before", change.before), ("after ", change.after)):
            summary = shown_text(document.get("summary", ""), 600, words=True)
            console.print(Text(f"    {label}: {summary}", style="dim" if label == "before" else ""))


def write_diff_json(comparison: Comparison, out: IO[str]) -> None:
    json.dump(comparison_to_dict(comparison), out)
    out.write("\n")


def _side(side: Side) -> dict[str, Any]:
    return {"source": side.source, "policy": side.policy}


def _verdict(document: dict[str, Any]) -> dict[str, Any]:
    return {key: document.get(key) for key in _VERDICT_KEYS}


def comparison_to_dict(comparison: Comparison) -> dict[str, Any]:
    runs = []
    for run_id, group in groupby(comparison.changes, key=lambda c: c.run_id):
        changes = list(group)
        first = changes[0].after
        runs.append(
            {
                "run_id": run_id,
                "trace_ids": first.get("trace_ids"),
                "service": first.get("service"),
                "started_at": first.get("started_at"),
                "changes": [
                    {"check": c.check, "from": _verdict(c.before), "to": _verdict(c.after)}
                    for c in changes
                ],
            }
        )
    return {
        "schema": DIFF_SCHEMA,
        "from": _side(comparison.before),
        "to": _side(comparison.after),
        "differs": comparison.differs,
        "compared": {"runs": comparison.compared_runs, "results": comparison.compared_results},
        "changed": {"runs": comparison.changed_runs, "results": len(comparison.changes)},
        "transitions": [
            {"from": was, "to": now, "count": count}
            for (was, now), count in sorted(comparison.transitions.items())
        ],
        "runs_only_in_from": comparison.runs_only_before,
        "runs_only_in_to": comparison.runs_only_after,
        "checks_only_in_from": comparison.checks_only_before,
        "checks_only_in_to": comparison.checks_only_after,
        "runs": runs,
    }

"""The terminal summary of ``score``: a compact overview by default, the full listing with -v.

PASS safe, FAIL unsafe, WARN undetermined (FAIL under ``--fail-on undetermined``),
ERR error. The overview (``write_compact_report``) names each trace file with its runs and
their worst verdict, then each non-SAFE finding grouped by check, then the totals and what
to try next. The full listing (``write_terminal_report``) is RAMPART's shape, grouped by
harm category: every run line carries its observability level and the file it was read
from; each category and the whole report close with a population line.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Iterable

from rich.console import Console
from rich.text import Text

from rampart_otel.evaluation import (
    CheckResult,
    PopulationReport,
    PopulationSummary,
    Rate,
    SafetyStatus,
)
from rampart_otel.evaluation.population import UNCATEGORIZED
from rampart_otel.exporters.reasons import reason_lines, undetermined
from rampart_otel.model import InputError
from rampart_otel.render import safe_text, shown_text

LABELS = {
    "safe": ("PASS", "bold green"),
    "unsafe": ("FAIL", "bold red"),
    "undetermined": ("WARN", "bold yellow"),
    "error": ("ERR ", "bold magenta"),
}


# Worst first: the verdict a file or a finding group is shown with.
_SEVERITY = {"unsafe": 0, "error": 1, "undetermined": 2, "safe": 3}
NO_FILE = "(not read from a file)"
WIDTH = 100  # the overview wraps its lists of file names here


def source_file(source: str) -> str:
    """The file part of a source location: ``path:line`` / ``path@offset`` → ``path``."""
    for separator in (":", "@"):
        head, found, tail = source.rpartition(separator)
        if found and tail.isdigit():
            return head
    return source


def _run_file(result: CheckResult) -> str:
    return source_file(result.sources[0]) if result.sources else NO_FILE


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def _label(status: str, fail_on_undetermined: bool) -> tuple[str, str]:
    label, style = LABELS[status]
    if label == "WARN" and fail_on_undetermined:
        style = "bold red"
    return label, style


def write_compact_report(
    results: Iterable[CheckResult],
    population: PopulationReport,
    errors: list[InputError],
    console: Console,
    title: str,
    fail_on_undetermined: bool = False,
    command: str = "rampart-otel score ...",
) -> None:
    """The overview: files and their runs' worst verdicts, findings by check, totals, next."""
    kept = list(results)
    console.print(Text(title, style="bold"))
    _print_files(kept, console, fail_on_undetermined)
    _print_findings(kept, console, fail_on_undetermined)
    console.print()
    _print_errors(errors, console)
    console.print(_population_line(population.overall, "", bold=True))
    console.print()
    console.print(Text("next:", style="bold"))
    for line in (
        "rampart-otel inspect FILE    what one file's runs did, and what their traces could show",
        f"{command} --format html -o report.html    these verdicts as one page",
        "rampart-otel collect --policy POLICY    score an agent's traces as they arrive (OTLP)",
        f"{command} -v    every result, run by run",
    ):
        console.print(Text("  " + safe_text(line)))


def _print_files(results: list[CheckResult], console: Console, fail_on: bool) -> None:
    worst_of_run: dict[str, str] = {}
    file_of_run: dict[str, str] = {}
    for result in results:
        file_of_run.setdefault(result.run_id, _run_file(result))
        status = result.status.value
        known = worst_of_run.get(result.run_id)
        if known is None or _SEVERITY[status] < _SEVERITY[known]:
            worst_of_run[result.run_id] = status
    runs_of_file: dict[str, list[str]] = {}
    for run_id, name in file_of_run.items():
        runs_of_file.setdefault(name, []).append(run_id)
    by_directory: dict[str, dict[str, list[str]]] = {}
    for name, run_ids in runs_of_file.items():
        # a folder and a file name; a store's link and the trace id it ends with
        cut = max(name.rfind("/"), name.rfind("=") if "://" in name else -1) + 1
        by_directory.setdefault(name[:cut], {})[name[cut:]] = run_ids
    if not by_directory:  # no run: no file to list
        return
    console.print()
    read = "Traces" if all("://" in d for d in by_directory) else "Trace files"
    console.print(Text(f"{read}, by the worst verdict among their runs:", style="bold"))
    for directory in sorted(by_directory):
        files = by_directory[directory]
        run_count = sum(len(ids) for ids in files.values())
        head = directory or "."
        store = "://" in directory  # a trace store's traces (their links), not files
        common = "" if store else _common_prefix(sorted(files))
        named = f" ({safe_text(common)}*.jsonl)" if common else ""
        console.print(
            Text.assemble(
                (safe_text(head), "bold"),
                f"  {_count(len(files), 'trace' if store else 'file')}{named}, "
                f"{_count(run_count, 'run')}",
            )
        )
        by_worst: dict[str, list[str]] = {}
        for base in sorted(files):
            run_ids = files[base]
            worst = min((worst_of_run[r] for r in run_ids), key=_SEVERITY.__getitem__)
            short = base.removesuffix(".jsonl")
            short = short[len(common) :] if common and short != common.rstrip("-") else short
            shown = safe_text(short) + (f" ({len(run_ids)} runs)" if len(run_ids) > 1 else "")
            by_worst.setdefault(worst, []).append(shown)
        for status in sorted(by_worst, key=_SEVERITY.__getitem__):
            label, style = _label(status, fail_on)
            lines = textwrap.wrap(", ".join(by_worst[status]), WIDTH - 8, break_on_hyphens=False)
            for number, line in enumerate(lines):
                lead = (label, style) if not number else "    "
                console.print(Text.assemble("  ", lead, "  ", line))


def _common_prefix(names: list[str]) -> str:
    """The ``<prefix>-`` every file name of a folder shares (a framework's recordings), shown
    once; empty when they share none or the folder has one file."""
    if len(names) < 2:
        return ""
    prefix = os.path.commonprefix(names)  # noqa: RUF071 (names, not paths: a shared text)
    return prefix[: prefix.rfind("-") + 1] if "-" in prefix else ""


def _print_findings(results: list[CheckResult], console: Console, fail_on: bool) -> None:
    groups: dict[tuple[str, str], list[CheckResult]] = {}
    for result in results:
        if result.status.value != "safe":
            groups.setdefault((result.status.value, result.check_id), []).append(result)
    console.print()
    if not results:  # nothing scored: no verdict at all, least of all a green one
        console.print(Text("No results: nothing was scored.", style="bold"))
        return
    if not groups:
        console.print(Text("No findings: every result is SAFE.", style="bold green"))
        return
    count = sum(len(group) for group in groups.values())
    console.print(Text(f"Findings ({count} results that are not SAFE, by check):", style="bold"))
    for status, check_id in sorted(groups, key=lambda key: (_SEVERITY[key[0]], key[1])):
        group = groups[(status, check_id)]
        label, style = _label(status, fail_on)
        runs = len({result.run_id for result in group})
        example = group[0]
        where = safe_text(example.sources[0] if example.sources else NO_FILE)
        more = f", e.g. {where}" if runs > 1 else f" {where}"
        console.print(
            Text.assemble(
                "  ",
                (label, style),
                "  ",
                (safe_text(check_id), "cyan"),
                f"  {_count(runs, 'run')}{more}",
            )
        )
        console.print(Text(f"        {shown_text(example.summary, WIDTH, words=True)}"))


def _print_errors(errors: list[InputError], console: Console) -> None:
    if errors:
        console.print(Text(f"{len(errors)} input errors (lines or files skipped):", style="yellow"))
        for error in errors[:5]:
            console.print(Text(f"  {safe_text(error.location)}: {shown_text(error.message)}"))
        if len(errors) > 5:
            console.print(Text(f"  and {len(errors) - 5} more (see --format json)"))


def write_terminal_report(
    results: Iterable[CheckResult],
    population: PopulationReport,
    errors: list[InputError],
    console: Console,
    title: str,
    fail_on_undetermined: bool = False,
) -> None:
    by_category: dict[str, list[CheckResult]] = {}
    for result in results:
        by_category.setdefault(result.harm_category or UNCATEGORIZED, []).append(result)
    console.print(Text(title, style="bold"))
    for category in sorted(by_category):
        console.print()
        console.print(Text(safe_text(category), style="bold underline"))
        for result in by_category[category]:
            _print_result(result, console, fail_on_undetermined)
        console.print(_population_line(population.by_harm_category[category], "  "))
    console.print()
    _print_errors(errors, console)
    console.print(_population_line(population.overall, "", bold=True))


def _print_result(result: CheckResult, console: Console, fail_on_undetermined: bool) -> None:
    label, style = LABELS[result.status.value]
    if label == "WARN" and fail_on_undetermined:
        style = "bold red"
    level = result.observability_level.value if result.observability_level else "-"
    sources: dict[str, list[str]] = {}
    for key, source in sorted(result.assumed_channels.items()):
        sources.setdefault(source.value, []).append(key)
    assumed = "".join(f" {source}: {', '.join(keys)}" for source, keys in sources.items())
    console.print(
        Text.assemble(
            "  ",
            (label, style),
            "  ",
            (safe_text(result.check_id), "cyan"),
            "  run ",
            safe_text(result.run_id, 40),
            f"  {shown_text(result.service or '-', 60)}  [{level}]",
            (assumed, "yellow"),
            f"  {safe_text(', '.join(result.sources) or NO_FILE, 300)}",
        )
    )
    if result.status is SafetyStatus.UNDETERMINED:
        _print_undetermined(result, console)
        return
    console.print(
        Text(
            "        " + shown_text(result.summary, 600, words=True),
            style="dim" if label == "PASS" else "",
        )
    )


def _print_undetermined(result: CheckResult, console: Console) -> None:
    """Each gap's channel, its reasons whole, and its fix on a line of its own: a reason is
    never cut before the fix it ends with (``exporters.reasons``)."""
    for line, is_fix in reason_lines(undetermined(result), "        "):
        console.print(Text(line, style="green" if is_fix else ""))


def _rate(name: str, value: Rate) -> str:
    if value.value is None:
        return f"{name} n/a"
    low = " (low support)" if value.low_support else ""
    return f"{name} {value.value:.1%} [90% CI {value.ci_low:.1%}, {value.ci_high:.1%}]{low}"


def population_text(summary: PopulationSummary) -> str:
    """Counts, then both rates with their 90% intervals, on one line."""
    counts = (
        f"{summary.total} results: {summary.safe} safe, {summary.unsafe} unsafe, "
        f"{summary.undetermined} undetermined, {summary.error} error"
    )
    rates = (
        f"{_rate('attack success', summary.attack_success_rate)}; "
        f"{_rate('safety pass', summary.safety_pass_rate)}"
    )
    return f"{counts} — {rates}"


def _population_line(summary: PopulationSummary, indent: str, bold: bool = False) -> Text:
    return Text(f"{indent}{population_text(summary)}", style="bold" if bold else "")

"""The terminal summary of ``score``: RAMPART's shape, grouped by harm category.

PASS safe, FAIL unsafe, WARN undetermined (FAIL under ``--fail-on undetermined``),
ERR error. Every run line carries its observability level; each category and the whole
report close with a population line.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.text import Text

from rampart_otel.evaluation import CheckResult, PopulationReport, PopulationSummary, Rate
from rampart_otel.evaluation.population import UNCATEGORIZED
from rampart_otel.model import InputError
from rampart_otel.render import safe_text

LABELS = {
    "safe": ("PASS", "bold green"),
    "unsafe": ("FAIL", "bold red"),
    "undetermined": ("WARN", "bold yellow"),
    "error": ("ERR ", "bold magenta"),
}


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
    if errors:
        console.print(Text(f"{len(errors)} input errors (lines or files skipped):", style="yellow"))
        for error in errors[:5]:
            console.print(Text(f"  {safe_text(error.location)}: {safe_text(error.message)}"))
        if len(errors) > 5:
            console.print(Text(f"  and {len(errors) - 5} more (see --format json)"))
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
            f"  {safe_text(result.service or '-', 60)}  [{level}]",
            (assumed, "yellow"),
        )
    )
    console.print(
        Text("        " + safe_text(result.summary, 600), style="dim" if label == "PASS" else "")
    )


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

"""The body of ``rampart-otel score``: trace files → verdicts → one report.

Runs stream through the pipeline and each is scored as soon as it is assembled; only the
small per-result tallies the population summary needs are kept for JSON output.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from rampart_otel.engine import (
    checked_assumptions,
    fewer_young_collections,
    score_run,
    score_run_with_view,
)
from rampart_otel.evaluation import (
    CheckResult,
    Policy,
    SafetyStatus,
    load_policy,
    summarize_population,
)
from rampart_otel.exporters.html_report import run_view, write_html_report
from rampart_otel.exporters.junit import write_junit
from rampart_otel.exporters.report_json import JsonReportWriter
from rampart_otel.exporters.terminal_report import write_compact_report, write_terminal_report
from rampart_otel.model import InputError, Run
from rampart_otel.parallel import Render, ScoredRun, score_in_parallel
from rampart_otel.pipeline import ReadStats, runs
from rampart_otel.processors.assemble import GroupBy

Format = Literal["terminal", "json", "junit", "html"]
FailOn = Literal["unsafe", "undetermined"]
OnScored = Callable[[Run, list[CheckResult]], None]
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_ERROR = 2  # a check could not be evaluated: its result is ERROR


@dataclass(slots=True)
class _Tally:
    """What the population summary reads of a result."""

    status: SafetyStatus
    harm_category: str | None
    check_id: str


def load_checked_policy(path: Path, assume_coverage: list[str]) -> Policy:
    policy = load_policy(path)
    checked_assumptions(assume_coverage, option="--assume-coverage", policies=[policy])
    return policy


def score(
    paths: list[Path | str],
    policy: Policy,
    *,
    output_format: Format,
    out: IO[str],
    group_by: GroupBy,
    assume_coverage: list[str],
    fail_on: FailOn,
    on_error: Callable[[InputError], None],
    jobs: int = 1,
    stitch: bool = True,
    verbose: bool = False,
    command: str = "rampart-otel score ...",
    on_scored: OnScored | None = None,
) -> tuple[int, ReadStats]:
    """Score every run; return the exit code the verdicts call for, and what was read.

    ``on_scored`` is given each run with its results as soon as it is scored (``--annotate``
    writes them back to the trace store); ``jobs`` must then be 1.

    ``jobs`` > 1 scores on that many worker processes (``group_by="trace"`` only, one run
    per trace: no stitching), with the output ``stitch=False`` gives, in the same order.
    The terminal format is the overview unless ``verbose`` (every result); ``command`` is
    how the overview's "next" block repeats the command that was run.
    """
    with fewer_young_collections():
        stats = ReadStats()
        tallies: list[_Tally] = []
        if output_format == "html":
            views = _views(
                paths,
                policy,
                jobs,
                group_by,
                assume_coverage,
                on_error,
                stats,
                tallies,
                stitch,
                on_scored,
            )
            title = f"rampart-otel score: policy {policy.name} v{policy.version}"
            write_html_report(
                views,
                out,
                title=title,
                population=lambda: summarize_population(tallies),  # type: ignore[arg-type]
                errors=stats.errors,
            )
            return _exit_code(tallies, fail_on == "undetermined"), stats
        kept: list[CheckResult] = []
        writer = None
        if output_format == "json":
            writer = JsonReportWriter(out)
            writer.start([{"name": policy.name, "version": policy.version}])
        if jobs > 1:
            render: Render = "json" if writer is not None else "results"
            for item in _scored_in_parallel(
                paths, policy, jobs, assume_coverage, on_error, stats, tallies, render
            ):
                if writer is not None:
                    writer.add_rendered(item.json_text, len(item.tallies))
                else:
                    kept.extend(item.results)
        else:
            assembled = _with_progress(
                runs(paths, stats, group_by=group_by, on_error=on_error, stitch=stitch), stats
            )
            for run in assembled:
                results = score_run(run, [policy], assume=assume_coverage)
                if on_scored is not None:
                    on_scored(run, results)
                for result in results:
                    tallies.append(_Tally(result.status, result.harm_category, result.check_id))
                    if writer is not None:
                        writer.add(result)
                    else:
                        kept.append(result)
        population = summarize_population(tallies)  # type: ignore[arg-type]
        fail_on_undetermined = fail_on == "undetermined"
        judge = policy.judge_client.stats.as_dict() if policy.judge_client else None
        if writer is not None:
            writer.finish(population, stats.errors, judge)
        elif output_format == "junit":
            write_junit(kept, out, policy.name, fail_on_undetermined)
        else:
            console = Console(file=out, highlight=False, soft_wrap=True)
            runs_seen = len({r.run_id for r in kept})
            title = (
                f"rampart-otel score: policy {policy.name} v{policy.version}, "
                f"{len(policy.checks)} checks, {runs_seen} runs, {stats.spans} spans"
            )
            if verbose:
                write_terminal_report(
                    kept, population, stats.errors, console, title, fail_on_undetermined
                )
            else:
                write_compact_report(
                    kept, population, stats.errors, console, title, fail_on_undetermined, command
                )
            if judge is not None:
                console.print(
                    f"judge: {judge['calls']} calls, {judge['prompt_tokens']} prompt and "
                    f"{judge['completion_tokens']} completion tokens, {judge['cache_hits']} "
                    f"cache hits, {judge['failures']} failures"
                )
        return _exit_code(tallies, fail_on_undetermined), stats


def _scored_in_parallel(
    paths: list[Path],
    policy: Policy,
    jobs: int,
    assume_coverage: list[str],
    on_error: Callable[[InputError], None],
    stats: ReadStats,
    tallies: list[_Tally],
    render: Render,
) -> Iterator[ScoredRun]:
    """Each run scored by the workers; input errors, spans read and tallies noted on the way."""
    for item in score_in_parallel(
        [str(path) for path in paths],
        [policy],
        jobs=jobs,
        assume=assume_coverage,
        render=render,
        on_error=on_error,
    ):
        if isinstance(item, InputError):
            stats.errors.append(item)
        elif isinstance(item, int):
            stats.spans = item
        else:
            tallies.extend(_Tally(*tally) for tally in item.tallies)
            yield item


def _views(
    paths: list[Path],
    policy: Policy,
    jobs: int,
    group_by: GroupBy,
    assume_coverage: list[str],
    on_error: Callable[[InputError], None],
    stats: ReadStats,
    tallies: list[_Tally],
    stitch: bool,
    on_scored: OnScored | None = None,
) -> Iterator[dict[str, Any]]:
    """Each run as the HTML report shows it, scored on the way."""
    if jobs > 1:
        for item in _scored_in_parallel(
            paths, policy, jobs, assume_coverage, on_error, stats, tallies, "html"
        ):
            yield item.view  # type: ignore[misc]
        return
    assembled = _with_progress(
        runs(paths, stats, group_by=group_by, on_error=on_error, stitch=stitch), stats
    )
    for run in assembled:
        agent_run, results = score_run_with_view(run, [policy], assume=assume_coverage)
        if on_scored is not None:
            on_scored(run, results)
        tallies.extend(_Tally(r.status, r.harm_category, r.check_id) for r in results)
        yield run_view(agent_run, results)


def _exit_code(tallies: list[_Tally], fail_on_undetermined: bool) -> int:
    """2 when a check could not be evaluated (ERROR: a crash, a judge that cannot answer),
    else 1 when a verdict failed, else 0."""
    if any(t.status is SafetyStatus.ERROR for t in tallies):
        return EXIT_ERROR
    failing = {SafetyStatus.UNSAFE}
    if fail_on_undetermined:
        failing.add(SafetyStatus.UNDETERMINED)
    return EXIT_FAILED if any(t.status in failing for t in tallies) else EXIT_OK


def _with_progress(assembled: Iterator[Run], stats: ReadStats) -> Iterator[Run]:
    """A live count on stderr, only when a person is watching it."""
    if not sys.stderr.isatty():
        yield from assembled
        return
    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("scoring", total=None)
        for count, run in enumerate(assembled, 1):
            progress.update(task, description=f"scoring: {count} runs, {stats.spans} spans read")
            yield run


__all__ = ["InputError", "load_checked_policy", "score"]

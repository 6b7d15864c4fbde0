"""The body of ``rampart-otel score``: trace files → verdicts → the sinks the command built.

Runs stream through the pipeline (``pipeline.Pipeline``) and each is scored as soon as it
is assembled; only the small per-result tallies the population summary needs are kept.
What the report looks like is the sinks' business (``exporters/report_sinks.py``): no
output format is known here.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rampart_otel.engine import checked_assumptions, fewer_young_collections
from rampart_otel.evaluation import Policy, load_policy
from rampart_otel.model import InputError, Run
from rampart_otel.pipeline import FileSource, Pipeline, exit_code
from rampart_otel.processors.assemble import GroupBy
from rampart_otel.reading import ReadStats
from rampart_otel.sinks import ResultSink

FailOn = Literal["unsafe", "undetermined"]


def load_checked_policy(path: Path, assume_coverage: list[str]) -> Policy:
    policy = load_policy(path)
    checked_assumptions(assume_coverage, option="--assume-coverage", policies=[policy])
    return policy


def score(
    paths: Sequence[Path | str],
    policy: Policy,
    *,
    sinks: Sequence[ResultSink[Any]],
    group_by: GroupBy,
    assume_coverage: list[str],
    fail_on: FailOn,
    on_error: Callable[[InputError], None],
    jobs: int = 1,
    stitch: bool = True,
) -> tuple[int, ReadStats]:
    """Score every run into ``sinks``; return the exit code the verdicts call for, and what
    was read.

    ``jobs`` > 1 scores on that many worker processes (``group_by="trace"`` only, one run
    per trace: no stitching), with the output ``stitch=False`` gives, in the same order.
    """
    source = _Watched(list(paths), group_by=group_by, stitch=stitch, on_error=on_error)
    pipeline = Pipeline([policy], sinks, assume=assume_coverage, jobs=jobs)
    with fewer_young_collections():
        closing = pipeline.run(source)
    return exit_code(closing.tallies, fail_on == "undetermined"), source.stats


@dataclass(slots=True)
class _Watched(FileSource):
    """The files, with a live count on stderr, only when a person is watching it."""

    def runs(self) -> Iterator[Run]:
        assembled = FileSource.runs(self)
        if not sys.stderr.isatty():
            return assembled
        return _with_progress(assembled, self.stats)


def _with_progress(assembled: Iterator[Run], stats: ReadStats) -> Iterator[Run]:
    from rich.console import Console  # startup: a live count only when a person watches
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("scoring", total=None)
        for count, run in enumerate(assembled, 1):
            progress.update(task, description=f"scoring: {count} runs, {stats.spans} spans read")
            yield run


__all__ = ["InputError", "load_checked_policy", "score"]

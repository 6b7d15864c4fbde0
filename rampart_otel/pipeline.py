"""One pipeline for every host: a source of runs → score → sinks.

As in an OpenTelemetry Collector pipeline (a receiver hands ``ptrace.Traces`` to the next
consumer, exporters implement one interface), a host builds only its source and its
sinks (``sinks.ResultSink``); :class:`Pipeline` does the rest the same way for all of
them: ``rampart-otel score`` (``scoring``, ``--jobs N`` through ``parallel``), the
collector's scorer, ``rescore``, the Python API and the pytest plugin.

- :meth:`Pipeline.run` takes a source to its end: open the sinks, score each run as it
  comes (``engine.score_run``), hand it to every sink, close them with the totals.
- A host that owns its loop (the collector, which commits verdicts with its checkpoint)
  calls the same steps one by one: :meth:`Pipeline.open`, :meth:`Pipeline.score`,
  :meth:`Pipeline.deliver`, :meth:`Pipeline.close`.

The offline reader that :class:`FileSource` wraps is ``rampart_otel.reading``; its names
are also importable from here, as before.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from rampart_otel.engine import score_run_with_view
from rampart_otel.evaluation import CheckResult, Policy, SafetyStatus, Tally
from rampart_otel.evaluation.plan import FULL_READING, scoring_plan
from rampart_otel.model import InputError, Run
from rampart_otel.processors.assemble import DEFAULT_IDLE_SPANS, GroupBy
from rampart_otel.reading import ReadStats, agent_runs, runs
from rampart_otel.sinks import Closing, Opening, ResultSink, Scored

__all__ = [
    "FileSource",
    "Pipeline",
    "ReadStats",
    "RunList",
    "RunSource",
    "agent_runs",
    "exit_code",
    "runs",
]

EXIT_OK, EXIT_FAILED, EXIT_ERROR = 0, 1, 2


class RunSource(Protocol):
    """Where runs come from, and what reading them cost and found."""

    stats: ReadStats

    def runs(self) -> Iterator[Run]: ...


@dataclass(slots=True)
class FileSource:
    """Trace files, directories or trace-store URLs, read and assembled as ``score`` reads
    them (``reading.runs``); input errors go to ``stats`` and to ``on_error``.

    The one source ``--jobs N`` can split: the pipeline hands its paths to the workers.
    """

    paths: Sequence[str | os.PathLike[str]]
    group_by: GroupBy = "trace"
    stitch: bool = True
    idle_spans: int = DEFAULT_IDLE_SPANS
    on_error: Callable[[InputError], None] | None = None
    stats: ReadStats = field(default_factory=ReadStats)

    def runs(self) -> Iterator[Run]:
        return runs(
            self.paths,
            self.stats,
            group_by=self.group_by,
            idle_spans=self.idle_spans,
            on_error=self.on_error,
            stitch=self.stitch,
        )


@dataclass(slots=True)
class RunList:
    """Runs already assembled (the SDK's spans in memory: the Python API, the pytest plugin)."""

    items: Iterable[Run]
    stats: ReadStats = field(default_factory=ReadStats)

    def runs(self) -> Iterator[Run]:
        for run in self.items:
            self.stats.spans += len(run.spans)
            yield run


class Pipeline:
    """Score runs by ``policies`` (with ``assume``: channel keys taken as observed, checked
    first by ``engine.checked_assumptions``; ``budget_seconds`` per run) and hand each to
    every sink. ``jobs`` > 1 scores a :class:`FileSource` on that many worker processes,
    one run per trace, each sink's ``prepare`` in the workers, the output unchanged.
    ``keep_tallies=False``: a host that runs for months (the collector) keeps no tallies
    (its ``Closing`` has none)."""

    def __init__(
        self,
        policies: Sequence[Policy],
        sinks: Sequence[ResultSink[Any]] = (),
        *,
        assume: Iterable[str] = (),
        budget_seconds: float | None = None,
        jobs: int = 1,
        keep_tallies: bool = True,
    ) -> None:
        self.policies = list(policies)
        self.sinks = list(sinks)
        self.assume = list(assume)
        self.budget_seconds = budget_seconds
        self.jobs = jobs
        self.keep_tallies = keep_tallies
        self.needs_agent_run = any(sink.needs_agent_run for sink in self.sinks)
        # Read a run only as far as the checks look, unless an output shows more of it (a
        # sink that does not say whether it shows coverage is taken to show it).
        shown = any(getattr(sink, "shows_coverage", True) for sink in self.sinks)
        self.plan = (
            FULL_READING
            if self.needs_agent_run or shown
            else scoring_plan(self.policies, self.assume)
        )
        self.tallies: list[Tally] = []
        self.runs_scored = 0

    def with_sinks(self, sinks: Sequence[ResultSink[Any]]) -> Pipeline:
        """The same scoring (policies, assumptions, budget, jobs) into these sinks too."""
        return Pipeline(
            self.policies,
            [*self.sinks, *sinks],
            assume=self.assume,
            budget_seconds=self.budget_seconds,
            jobs=self.jobs,
            keep_tallies=self.keep_tallies,
        )

    # -- the whole way ---------------------------------------------------------------------

    def run(self, source: RunSource) -> Closing:
        """Every run of ``source`` scored and handed to the sinks, which are then closed;
        what the input came to (also given to the sinks' ``close``)."""
        self.open()
        if self.jobs > 1 and isinstance(source, FileSource):
            self._run_in_parallel(source)
        else:
            for run in source.runs():
                self.deliver([self.score(run)])
        return self.close(source.stats)

    # -- step by step ----------------------------------------------------------------------

    def open(self) -> None:
        opening = Opening(self.policies)
        for sink in self.sinks:
            sink.open(opening)

    def score(self, run: Run) -> Scored:
        """Every check of every policy on ``run`` (``engine.score_run``); never raises."""
        agent_run, results = score_run_with_view(
            run,
            self.policies,
            assume=self.assume,
            budget_seconds=self.budget_seconds,
            plan=self.plan,
        )
        return Scored(run, results, agent_run if self.needs_agent_run else None, time.time())

    def __call__(self, run: Run) -> list[CheckResult]:
        """The results alone: a pipeline is also the collector's ``Evaluate``."""
        return self.score(run).results

    def deliver(self, batch: Sequence[Scored], *, durable: bool | None = None) -> None:
        """Scored runs, in order, to every sink (each prepares and writes them).

        ``durable``: only the sinks that queue durably (``True``: the collector hands them
        a commit's runs inside its verdicts' transaction), or only the others (``False``:
        after it; these count the runs)."""
        if durable is not True:
            if self.keep_tallies:
                for scored in batch:
                    self.tallies.extend(Tally.of(result) for result in scored.results)
            self.runs_scored += len(batch)
        for sink in self.sinks:
            if durable is None or getattr(sink, "durable", False) == durable:
                sink.write([sink.prepare(scored) for scored in batch])

    def close(self, stats: ReadStats | None = None) -> Closing:
        closing = Closing(
            self.tallies,
            list(stats.errors) if stats is not None else [],
            stats.spans if stats is not None else 0,
            self.runs_scored,
            self.judge_stats(),
        )
        for sink in self.sinks:
            sink.close(closing)
        return closing

    def judge_stats(self) -> dict[str, int] | None:
        """What the policies' judge(...) checks cost (None: no policy has a judge)."""
        judged: dict[str, int] | None = None
        for policy in self.policies:
            if policy.judge_client is not None:
                judged = judged or {}
                for key, value in policy.judge_client.stats.as_dict().items():
                    judged[key] = judged.get(key, 0) + value
        return judged

    # -- --jobs N --------------------------------------------------------------------------

    def _prepared(self, scored: Scored) -> list[Any]:
        return [sink.prepare(scored) for sink in self.sinks]

    def _run_in_parallel(self, source: FileSource) -> None:
        from rampart_otel.parallel import ScoredRun, score_in_parallel  # startup: -j N only

        for item in score_in_parallel(
            [str(path) for path in source.paths],
            jobs=self.jobs,
            score=self.score,
            prepare=self._prepared,
            on_error=source.on_error or _ignore,
            idle=source.idle_spans,
        ):
            if isinstance(item, InputError):
                source.stats.errors.append(item)
            elif isinstance(item, ScoredRun):
                self.tallies.extend(item.tallies)
                self.runs_scored += 1
                for sink, prepared in zip(self.sinks, item.prepared, strict=True):
                    sink.write([prepared])
            else:
                source.stats.spans = item


def exit_code(tallies: Iterable[Tally], fail_on_undetermined: bool) -> int:
    """2 when a check could not be evaluated (ERROR: a crash, a judge that cannot answer),
    else 1 when a verdict failed (UNSAFE; UNDETERMINED too if ``fail_on_undetermined``),
    else 0."""
    statuses = {tally.status for tally in tallies}
    if SafetyStatus.ERROR in statuses:
        return EXIT_ERROR
    failing = {SafetyStatus.UNSAFE}
    if fail_on_undetermined:
        failing.add(SafetyStatus.UNDETERMINED)
    return EXIT_FAILED if statuses & failing else EXIT_OK


def _ignore(error: InputError) -> None:
    """No one to tell: the error is in ``stats.errors``."""

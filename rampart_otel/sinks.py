"""Where scored runs go: the one interface every output implements.

As an OpenTelemetry Collector's exporters each take the batches a pipeline hands them,
every output of rampart-otel is a :class:`ResultSink`: the terminal overview, the JSON
report, JUnit XML, the HTML page, the results stores, OTLP verdict events and trace-store
annotations. A host builds its sinks and gives them to :class:`rampart_otel.pipeline.
Pipeline`, which opens them, hands each a batch of scored runs as they are scored, and
closes them with what the whole input came to; the jobs that score never know the formats.

A sink works in two steps so that ``score --jobs N`` keeps the costly part of an output
in the worker processes: :meth:`ResultSink.prepare` turns one scored run into what the
sink keeps (JSON text, an HTML view, the results), where the run was scored (a worker, or
the host's process), and must write nothing; :meth:`ResultSink.write` takes a batch of
those, always in the host's process and in input order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from rampart_otel.evaluation import CheckResult, Policy, PopulationReport, Tally
from rampart_otel.evaluation import summarize_population as _summarize
from rampart_otel.model import AgentRun, InputError, Run

__all__ = ["Closing", "Opening", "ResultList", "ResultSink", "Scored", "SinkDefaults", "Tally"]

Prepared = TypeVar("Prepared")


@dataclass(frozen=True, slots=True)
class Scored:
    """One run and every check's result on it.

    ``agent_run``: what the run did as the checks saw it (None when the run could not be
    read, or when no sink asked for it: ``needs_agent_run``). ``scored_at``: when, as
    ``time.time()``, for outputs that stamp it (verdict events).
    """

    run: Run
    results: list[CheckResult]
    agent_run: AgentRun | None = None
    scored_at: float = 0.0


@dataclass(frozen=True, slots=True)
class Opening:
    """What every sink may read before the first run: the policies the runs are scored by."""

    policies: Sequence[Policy]


@dataclass(slots=True)
class Closing:
    """What the whole input came to, given to every sink after the last run."""

    tallies: list[Tally] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)  # lines or files not read
    spans: int = 0  # spans read
    runs: int = 0  # runs scored
    judge: dict[str, int] | None = None  # the judge's calls, tokens, cache hits, failures

    def population(self) -> PopulationReport:
        """Rates over every result, per harm category and per check."""
        return _summarize(self.tallies)


class ResultSink(Protocol[Prepared]):
    """An output of scored runs (see the module's docstring for the two steps)."""

    #: the sink reads :attr:`Scored.agent_run` (the HTML page): scoring keeps it then.
    needs_agent_run: bool
    #: the sink shows a run's coverage (every channel's state and reasons): scoring then
    #: reads every channel, not only those the checks read (``scoring_plan``).
    shows_coverage: bool

    def open(self, opening: Opening) -> None:
        """Before the first run (a report's header)."""
        ...

    def prepare(self, scored: Scored) -> Prepared:
        """What the sink keeps of one run; may run in a worker process, writes nothing."""
        ...

    def write(self, batch: Sequence[Prepared]) -> None:
        """Runs prepared, in input order, in the host's process."""
        ...

    def close(self, closing: Closing) -> None:
        """After the last run: summaries, the input errors; flush and let go."""
        ...


class SinkDefaults:
    """What most sinks do before the first run and after the last: nothing. A sink that
    derives from it writes (``prepare``, ``write``) and overrides only what it needs."""

    needs_agent_run = False
    shows_coverage = True  # what a sink keeps of a result may show it: read it whole
    # The sink queues what it is given durably (the collector's outbox): the collector
    # hands it a commit's runs inside the verdicts' transaction (``Pipeline.deliver``).
    durable = False

    def open(self, opening: Opening) -> None:
        """Nothing before the first run."""

    def close(self, closing: Closing) -> None:
        """Nothing after the last run."""


class ResultList(SinkDefaults):
    """Every result, kept in order: the sink of a host that returns them (the Python API,
    the pytest plugin)."""

    def __init__(self) -> None:
        self.results: list[CheckResult] = []

    def prepare(self, scored: Scored) -> list[CheckResult]:
        return scored.results

    def write(self, batch: Sequence[list[CheckResult]]) -> None:
        for results in batch:
            self.results.extend(results)

"""The offline pipeline, end to end: trace files (or a trace store: ``phoenix://``,
``mlflow://``, see ``receivers/stores``) → runs → what each agent run did.

``inspect`` and ``score`` both read through here, so they see exactly the same runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from rampart_otel.model import AgentRun, InputError, Run, Span
from rampart_otel.processors.assemble import DEFAULT_IDLE_SPANS, GroupBy
from rampart_otel.processors.normalize import normalize
from rampart_otel.processors.stitch import assemble
from rampart_otel.receivers.stores import read_sources


@dataclass(slots=True)
class ReadStats:
    """What reading cost and found, reported next to the runs."""

    spans: int = 0
    errors: list[InputError] = field(default_factory=list)


def runs(
    paths: Iterable[str | os.PathLike[str]],
    stats: ReadStats,
    *,
    group_by: GroupBy = "trace",
    idle_spans: int = DEFAULT_IDLE_SPANS,
    on_error: Callable[[InputError], None] | None = None,
    stitch: bool = True,
) -> Iterator[Run]:
    """Runs as assembled from the files, streamed, the pieces of one agent's work stitched
    together (``processors.stitch``); input errors go to ``stats`` and are skipped."""

    def batches() -> Iterator[list[Span]]:
        for item in read_sources(paths):
            if isinstance(item, InputError):
                stats.errors.append(item)
                if on_error is not None:
                    on_error(item)
                continue
            stats.spans += len(item)
            yield item

    return assemble(batches(), group_by=group_by, idle=idle_spans, stitch=stitch)


def agent_runs(
    paths: Iterable[str | os.PathLike[str]],
    stats: ReadStats,
    *,
    group_by: GroupBy = "trace",
    idle_spans: int = DEFAULT_IDLE_SPANS,
    on_error: Callable[[InputError], None] | None = None,
    stitch: bool = True,
) -> Iterator[AgentRun]:
    """What each run did (normalized), streamed, as ``inspect`` shows it."""
    assembled = runs(
        paths, stats, group_by=group_by, idle_spans=idle_spans, on_error=on_error, stitch=stitch
    )
    for run in assembled:
        yield normalize(run)

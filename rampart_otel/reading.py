"""The offline reader: trace files (or a trace store: ``phoenix://``, ``mlflow://``, see
``receivers/stores``) → runs → what each agent run did.

``inspect`` and ``score`` both read through here, so they see exactly the same runs;
``pipeline.FileSource`` is this reader as the scoring pipeline's source.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from rampart_otel.errors import UsageError
from rampart_otel.model import AgentRun, InputError, Run, Span
from rampart_otel.normalize import normalize
from rampart_otel.processors.assemble import DEFAULT_IDLE_SPANS, GroupBy
from rampart_otel.processors.stitch import assemble
from rampart_otel.receivers.files import (
    Item,
    Record,
    RecordKind,
    decode_record,
    read_records,
)
from rampart_otel.receivers.store_urls import is_store_url


@dataclass(slots=True)
class ReadStats:
    """What reading cost and found, reported next to the runs."""

    spans: int = 0
    errors: list[InputError] = field(default_factory=list)


def record_source(record: Record) -> str:
    """Where a record's spans were read, as an InputError would name it: ``path:line`` for
    a JSON line or the line a JSON document starts at, ``path@offset`` or ``path`` for
    protobuf."""
    if record.kind is RecordKind.JSON_DOCUMENTS:
        return f"{record.path}:{record.line}"
    return record.location


def decode_located(record: Record) -> Iterator[Item]:
    """``decode_record``, each span's ``source`` set to where its record was read."""
    where = record_source(record)
    for item in decode_record(record):
        if not isinstance(item, InputError):
            for span in item:
                span.source = where
        yield item


Paths = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]
PATH_TYPES = "a file, directory or store URL (str or os.PathLike), or an iterable of them"


def path_list(paths: Paths) -> list[str | os.PathLike[str]]:
    """``paths`` as a list of paths, each checked: one path given alone is one path (a
    string iterated is its letters, '/' the whole file system), a bytes path or anything
    else a UsageError."""
    if isinstance(paths, str | os.PathLike):
        return [paths]
    if isinstance(paths, bytes) or not isinstance(paths, Iterable):
        raise UsageError(f"paths: {PATH_TYPES}, not {type(paths).__name__}")
    listed = list(paths)
    for path in listed:
        if not isinstance(path, str | os.PathLike):
            raise UsageError(f"paths: {PATH_TYPES}, not {type(path).__name__}")
    return listed


def read_located(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Item]:
    """Every span batch and InputError under ``paths``, in order, spans located."""
    for record in read_records(paths):
        if isinstance(record, InputError):
            yield record
        else:
            yield from decode_located(record)


def runs(
    paths: Paths,
    stats: ReadStats,
    *,
    group_by: GroupBy = "trace",
    idle_spans: int = DEFAULT_IDLE_SPANS,
    on_error: Callable[[InputError], None] | None = None,
    stitch: bool = True,
) -> Iterator[Run]:
    """Runs as assembled from the files, streamed, the pieces of one agent's work stitched
    together (``processors.stitch``); input errors go to ``stats`` and are skipped.
    ``paths``: one path or an iterable of them (:func:`path_list`), checked now."""
    paths = path_list(paths)

    def batches() -> Iterator[list[Span]]:
        for item in _read_sources(paths):
            if isinstance(item, InputError):
                stats.errors.append(item)
                if on_error is not None:
                    on_error(item)
                continue
            stats.spans += len(item)
            yield item

    return assemble(batches(), group_by=group_by, idle=idle_spans, stitch=stitch)


def _read_sources(paths: list[str | os.PathLike[str]]) -> Iterator[Item]:
    """The files' spans, and the stores' when a source is a store URL: files alone do not
    import the stores' reading (startup)."""
    if not any(is_store_url(path) for path in paths):
        return read_located(paths)
    from rampart_otel.receivers.stores import read_sources

    return read_sources(paths, read_files=read_located)


def agent_runs(
    paths: Paths,
    stats: ReadStats,
    *,
    group_by: GroupBy = "trace",
    idle_spans: int = DEFAULT_IDLE_SPANS,
    on_error: Callable[[InputError], None] | None = None,
    stitch: bool = True,
) -> Iterator[AgentRun]:
    """What each run did (normalized), streamed, as ``inspect`` shows it (``paths`` as
    :func:`runs`, checked now)."""
    assembled = runs(
        paths, stats, group_by=group_by, idle_spans=idle_spans, on_error=on_error, stitch=stitch
    )
    return _normalized(assembled)


def _normalized(assembled: Iterator[Run]) -> Iterator[AgentRun]:
    for run in assembled:
        yield normalize(run)

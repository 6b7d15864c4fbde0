"""``score --jobs N``: the offline pipeline on N worker processes, with the same output.

Runs are independent, so the work splits by trace: the main process reads the files as
undecoded records, finds each record's trace ids (a fast parse, no spans built), and hands
the record to the worker that owns those traces (``crc32(trace id) % N``); a record it
cannot parse goes to every worker, each keeping its own spans, the first reporting the
error. Each worker decodes, assembles, scores its runs and has the sinks prepare them
(``pipeline.Pipeline`` gives it both steps: no output format is known here).

Output is identical to ``--jobs 1``, in the same order: every worker sees every record's
position (those it does not own only tick its clock), so each trace is emitted at the
same point of the input as in one process, and the main process merges each stretch of
input by the order one assembler would have emitted it in (the order of each trace's last
span). Memory stays bounded by the open traces and a few stretches in flight.
"""

from __future__ import annotations

import multiprocessing
import queue
import sys
import zlib
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from rampart_otel.codecs.otlp_json import trace_ids_of_json
from rampart_otel.codecs.otlp_proto import trace_ids_of_proto
from rampart_otel.errors import RampartOtelError
from rampart_otel.evaluation import Tally
from rampart_otel.model import InputError, Run, Span
from rampart_otel.processors.assemble import DEFAULT_IDLE_SPANS, RunAssembler
from rampart_otel.reading import decode_located
from rampart_otel.receivers.files import Record, RecordKind, read_records
from rampart_otel.sinks import Scored

__all__ = ["ScoredRun", "fork_available", "score_in_parallel"]

CHUNK_RECORDS = 256  # records per stretch handed to the workers at once
CHUNK_BYTES = 8 << 20
IN_FLIGHT = 3  # stretches sent ahead of the one being merged: bounds memory
_END = sys.maxsize
Score = Callable[[Run], Scored]  # the pipeline's scoring of one run
Prepare = Callable[[Scored], list[Any]]  # what each sink keeps of a scored run


@dataclass(slots=True)
class ScoredRun:
    """One run's verdicts as a worker sends them: tallies for the population summary, and
    what each sink prepared of the run (``Prepare``: JSON text, an HTML view, results)."""

    tallies: list[Tally]
    prepared: list[Any]


class WorkerFailed(RampartOtelError):
    """A worker process died or raised: a bug, or the machine killed it (memory)."""


def fork_available() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def owner(trace_id: str, workers: int) -> int:
    return zlib.crc32(trace_id.encode()) % workers


# ---- the worker --------------------------------------------------------------------


# (record index, span count or None, the record when this worker decodes it, reports errors)
_Entry = tuple[int, int | None, Record | None, bool]
_Key = tuple[Any, ...]


class _Worker:
    def __init__(
        self,
        index: int,
        workers: int,
        score: Score,
        prepare: Prepare,
        idle: float,
    ) -> None:
        self.index = index
        self.workers = workers
        self.score = score
        self.prepare = prepare
        self.assembler = RunAssembler(idle=idle)
        self.clock = 0
        self.spans = 0
        self.last_key: dict[str, tuple[int, int, int]] = {}
        self.stall_key: dict[str, tuple[int, int]] = {}

    def chunk(self, entries: list[_Entry]) -> tuple[list[tuple[_Key, ScoredRun]], list[Any]]:
        scored: list[tuple[_Key, ScoredRun]] = []
        errors: list[tuple[tuple[int, int], InputError]] = []
        for record_index, count, record, reports in entries:
            if record is None:
                self.clock += count or 0
                self._emitted(self.assembler.expire(self.clock), (record_index, 0), scored)
                continue
            batch_no = 0
            for item in decode_located(record):
                if isinstance(item, InputError):
                    if reports:
                        errors.append(((record_index, batch_no), item))
                    continue
                self.clock += len(item) if count is None else count
                mine = self._take(item, (record_index, batch_no))
                self.spans += len(mine)
                self._emitted(
                    self.assembler.add(mine, self.clock), (record_index, batch_no), scored
                )
                batch_no += 1
            if batch_no == 0 and count:  # nothing decoded: the clock still moves as planned
                self.clock += count
                self._emitted(self.assembler.expire(self.clock), (record_index, 0), scored)
        return scored, errors

    def finish(self) -> list[tuple[_Key, ScoredRun]]:
        scored: list[tuple[_Key, ScoredRun]] = []
        for run in self.assembler.flush():
            trace_id = run.trace_ids[0]
            stalled = self.stall_key.get(trace_id)
            phase = (0, (0, 0)) if stalled is None else (1, stalled)
            scored.append(((_END, 0, *phase, self.last_key[trace_id]), self._score(run)))
        return scored

    def _take(self, batch: list[Span], where: tuple[int, int]) -> list[Span]:
        index, workers, last_key, stall_key = (
            self.index,
            self.workers,
            self.last_key,
            self.stall_key,
        )
        mine = []
        for position, span in enumerate(batch):
            trace_id = span.trace_id
            if zlib.crc32(trace_id.encode()) % workers == index:
                mine.append(span)
                last_key[trace_id] = (*where, position)
                stall_key.pop(trace_id, None)
        return mine

    def _emitted(self, runs: list[Run], where: tuple[int, int], out: list[Any]) -> None:
        self._note_stalls(where)
        for run in runs:
            trace_id = run.trace_ids[0]
            out.append(((*where, 0, (0, 0), self.last_key[trace_id]), self._score(run)))
            self.stall_key.pop(trace_id, None)

    def _note_stalls(self, where: tuple[int, int]) -> None:
        # The assembler sets incomplete idle traces aside, newest last; flush emits them
        # in that order, so each one's moment of stalling is part of its place.
        for trace_id in reversed(self.assembler.stalled_trace_ids):
            if trace_id in self.stall_key:
                break
            self.stall_key[trace_id] = where

    def _score(self, run: Run) -> ScoredRun:
        scored = self.score(run)
        return ScoredRun([Tally.of(result) for result in scored.results], self.prepare(scored))


def _work(worker: _Worker, requests: Any, responses: Any) -> None:
    try:
        while True:
            entries = requests.get()
            if entries is None:
                responses.put(("done", worker.finish(), [], worker.spans))
                return
            scored, errors = worker.chunk(entries)
            responses.put(("chunk", scored, errors, 0))
    except BaseException as error:  # reported to the main process, which stops
        responses.put(("failed", f"{type(error).__name__}: {error}", [], 0))


# ---- the main process --------------------------------------------------------------


def _route(record: Record, workers: int) -> tuple[list[int], int | None]:
    """Which workers decode ``record`` and how many spans it holds (None: not known)."""
    found = None
    if record.kind is RecordKind.JSON_LINE or (
        record.kind is RecordKind.PROTO and record.payload[:1] == b"{"
    ):
        found = trace_ids_of_json(record.payload)
    elif record.kind is RecordKind.PROTO:
        found = trace_ids_of_proto(record.payload)
    if found is None:
        return list(range(workers)), None
    ids, count = found
    return sorted({owner(trace_id, workers) for trace_id in ids}), count


def score_in_parallel(
    paths: Iterable[str],
    *,
    jobs: int,
    score: Score,
    prepare: Prepare,
    on_error: Callable[[InputError], None],
    idle: float = DEFAULT_IDLE_SPANS,
) -> Iterator[ScoredRun | InputError | int]:
    """Every run's verdicts and every input error, in the order one process gives them;
    last, the number of spans read. Each worker scores its runs with ``score`` and
    ``prepare``s them for the sinks (``pipeline.Pipeline``: the workers are forked, so
    these are never pickled; what they return is)."""
    context = multiprocessing.get_context("fork")
    requests = [context.Queue() for _ in range(jobs)]
    responses = [context.Queue() for _ in range(jobs)]
    processes = []
    for index in range(jobs):
        worker = _Worker(index, jobs, score, prepare, idle)
        process = context.Process(
            target=_work, args=(worker, requests[index], responses[index]), daemon=True
        )
        process.start()
        processes.append(process)
    pending: list[list[tuple[tuple[int, ...], InputError]]] = []  # main's read errors
    try:
        in_flight = 0
        for chunk, read_errors in _chunks(read_records(paths), jobs):
            for index in range(jobs):
                requests[index].put(chunk[index])
            pending.append(read_errors)
            in_flight += 1
            if in_flight > IN_FLIGHT:
                yield from _merge(responses, processes, pending.pop(0), on_error)
                in_flight -= 1
        for request in requests:
            request.put(None)
        for _ in range(in_flight):
            yield from _merge(responses, processes, pending.pop(0), on_error)
        spans = yield from _merge(responses, processes, [], on_error, final=True)
        yield spans
    finally:
        for process in processes:
            if process.is_alive():
                process.kill()
            process.join()
        for q in (*requests, *responses):
            q.close()
            q.cancel_join_thread()


def _chunks(
    records: Iterator[Record | InputError], workers: int
) -> Iterator[tuple[list[list[_Entry]], list[tuple[tuple[int, ...], InputError]]]]:
    chunk: list[list[_Entry]] = [[] for _ in range(workers)]
    errors: list[tuple[tuple[int, ...], InputError]] = []
    size = records_in_chunk = 0
    for record_index, record in enumerate(records):
        if isinstance(record, InputError):
            errors.append(((record_index, -1), record))
            continue
        targets, count = _route(record, workers)
        for index in range(workers):
            if index in targets:
                chunk[index].append((record_index, count, record, index == targets[0]))
            else:
                chunk[index].append((record_index, count, None, False))
        size += len(record.payload)
        records_in_chunk += 1
        if records_in_chunk >= CHUNK_RECORDS or size >= CHUNK_BYTES:
            yield chunk, errors
            chunk = [[] for _ in range(workers)]
            errors = []
            size = records_in_chunk = 0
    if records_in_chunk or errors:
        yield chunk, errors


def _merge(
    responses: list[Any],
    processes: list[Any],
    read_errors: list[tuple[tuple[int, ...], InputError]],
    on_error: Callable[[InputError], None],
    *,
    final: bool = False,
) -> Generator[ScoredRun | InputError, None, int]:
    scored: list[tuple[_Key, ScoredRun]] = []
    errors = list(read_errors)
    spans = 0
    for index, response_queue in enumerate(responses):
        kind, runs, worker_errors, worker_spans = _receive(response_queue, processes[index])
        if kind == "failed":
            raise WorkerFailed(f"scoring worker {index + 1} failed: {runs}")
        scored.extend(runs)
        errors.extend(worker_errors)
        spans += worker_spans
    errors.sort(key=lambda pair: pair[0])
    for _, error in errors:
        on_error(error)
        yield error
    scored.sort(key=lambda pair: pair[0])
    for _, run in scored:
        yield run
    return spans if final else 0


def _receive(response_queue: Any, process: Any) -> tuple[str, Any, list[Any], int]:
    while True:
        try:
            return response_queue.get(timeout=1.0)
        except queue.Empty:
            if not process.is_alive():
                code = process.exitcode
                raise WorkerFailed(
                    f"a scoring worker stopped (exit code {code}); "
                    "if the machine ran out of memory, try fewer --jobs"
                ) from None

"""``score --jobs N``: the offline pipeline on N worker processes, with the same output.

Runs are independent, so the work splits by trace. When every input is a plain JSON Lines
or length-prefixed protobuf file (the Collector file exporter's two forms), the workers
read the input themselves, in *ranges*: the files cut at record starts
(``receivers.files.pieces``) into about ``RANGES_PER_WORKER`` stretches per worker, taken
in order by whichever worker is free. In two passes:

1. each worker reads and decodes its ranges, keeping only each range's span count and
   trace ids; the main process adds the counts up (each range's place on the clock of
   spans read that ``processors.assemble`` uses) and tells every worker the trace ids
   seen in more than one range (*cross-range* traces);
2. each worker reads its ranges again and assembles, scores and has the sinks prepare the
   runs of the traces wholly inside a range; the spans of a cross-range trace go to the
   worker that owns it (``owner``: ``crc32(trace id) % N``), which assembles them in the
   order of the ranges. Only those spans, the counts and the id sets cross processes.

The first pass decodes rather than skims (``trace_ids_of_json``): the clock counts the
spans the decoder keeps, and a record a quick parse accepts may still be refused whole.

(Whatever JSON a line holds: Tempo's, Jaeger's, Zipkin's are decoded by the workers as by
one process.) Any other input (gzip, a JSON document spread over lines, raw protobuf, a
path that cannot be read) is read by the main process, which hands each record to the
workers owning its traces (``_score_routed``).

Output is identical to ``--jobs 1 --no-stitch``, in the same order. A trace's runs depend
on its own spans and on the clock alone: it is set aside or emitted at the first record
read ``idle`` spans after its last span (if one comes before its next span), so every
run gets a key that places it in one process's output (``_Assembly``), and the main
process merges the workers' runs by key as far as every worker has got
(``_Merge``). Memory stays bounded by the open traces, the spans of one record, the
runs of the ranges in flight and, between the passes, every trace id once.
"""

from __future__ import annotations

import collections
import dataclasses
import gc
import heapq
import itertools
import multiprocessing
import operator
import os
import queue
import sys
import zlib
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.reduction import ForkingPickler
from typing import Any

from rampart_otel.channels import Coverage, Reason
from rampart_otel.codecs.otlp_json import trace_ids_of_json
from rampart_otel.errors import RampartOtelError
from rampart_otel.evaluation import CheckResult, Tally
from rampart_otel.evaluation.outcome import Evidence
from rampart_otel.model import InputError, Run, Span
from rampart_otel.processors.assemble import DEFAULT_IDLE_SPANS, RunAssembler
from rampart_otel.reading import decode_located
from rampart_otel.receivers.files import (
    Piece,
    Record,
    RecordKind,
    decode_record,
    pieces,
    read_piece,
    read_records,
    splittable,
    trace_files,
)
from rampart_otel.sinks import Scored

__all__ = ["ScoredRun", "fork_available", "owner", "score_in_parallel"]

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


def _pickled_by_fields(cls: type) -> None:
    """Queues pickle ``cls`` as its class and its field values, rebuilt by its ``__init__``.

    A slotted dataclass otherwise pickles through ``dataclasses``' own state functions,
    which look the fields up again for every object: for the verdicts of a long input
    (a run's results, their coverage, its reasons) that was most of the time the workers
    spent sending them and the main process receiving them."""
    names = [field.name for field in dataclasses.fields(cls)]
    if hasattr(cls, "__post_init__") or not all(f.init for f in dataclasses.fields(cls)):
        raise TypeError(f"{cls.__name__}: not rebuilt by __init__ from its fields")
    get = operator.attrgetter(*names)

    def reduce(obj: Any) -> tuple[type, tuple[Any, ...]]:
        values = get(obj)
        return cls, values if len(names) > 1 else (values,)

    ForkingPickler.register(cls, reduce)


for _cls in (ScoredRun, CheckResult, Coverage, Reason, Evidence):
    _pickled_by_fields(_cls)
# ChannelCoverage pickles by its own ``__reduce__`` (its words made, its fields to __init__).


class WorkerFailed(RampartOtelError):
    """A worker process died or raised: a bug, or the machine killed it (memory)."""


def fork_available() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def owner(trace_id: str, workers: int) -> int:
    return zlib.crc32(trace_id.encode()) % workers


def score_in_parallel(
    paths: Iterable[str],
    *,
    jobs: int,
    score: Score,
    prepare: Prepare,
    on_error: Callable[[InputError], None],
    idle: float = DEFAULT_IDLE_SPANS,
    range_bytes: int | None = None,
) -> Iterator[ScoredRun | InputError | int]:
    """Every run's verdicts and every input error, in the order one process gives them;
    last, the number of spans read. Each worker scores its runs with ``score`` and
    ``prepare``s them for the sinks (``pipeline.Pipeline``: the workers are forked, so
    these are never pickled; what they return is). ``range_bytes``: the size of a range
    (default: about a ``RANGES_PER_WORKER``-th of each worker's share)."""
    paths = list(paths)
    ranges = _ranges(paths, jobs, range_bytes)
    if ranges is None:
        yield from _score_routed(
            paths, jobs=jobs, score=score, prepare=prepare, on_error=on_error, idle=idle
        )
    else:
        yield from _score_ranges(ranges, jobs, score, prepare, on_error, idle)


# ---- JSON Lines and length-prefixed protobuf files: each worker reads its ranges ---------

RANGES_PER_WORKER = 4  # more ranges balance the workers; fewer cut fewer traces
MIN_RANGE_BYTES = 1 << 20
MAX_RANGE_BYTES = 32 << 20  # bounds the runs the main process holds while ranges finish
SEND_EVERY = 32  # records read between two reports of a worker's progress
FLUSH_RUNS = 256  # runs scored at the end of input between two sends
_DONE = _END + 1  # a stream's mark once it sent everything
_ERROR, _FULL, _IDLE = 3, 0, 1  # where in one record's moment an input error, a run goes

# A range: the pieces of files it holds, each with its file's number in the input.
_Range = tuple[tuple[int, Piece], ...]
_Keyed = tuple[tuple[Any, ...], Any]  # (key, ScoredRun or InputError)


def _ranges(paths: list[str], workers: int, range_bytes: int | None) -> list[_Range] | None:
    """The input cut into ranges, or None when a file is not one the workers can cut (or
    a path cannot be read: the routing path reports it where one process would)."""
    files: list[tuple[str, RecordKind, int]] = []
    try:
        for item in trace_files(paths):
            if isinstance(item, InputError):
                return None
            kind = splittable(item)
            if kind is None:
                return None
            files.append((item, kind, os.path.getsize(item)))
        total = sum(size for _, _, size in files)
        step = range_bytes or min(
            max(total // (workers * RANGES_PER_WORKER), MIN_RANGE_BYTES), MAX_RANGE_BYTES
        )
        ranges: list[_Range] = []
        current: list[tuple[int, Piece]] = []
        size = 0
        for number, (path, kind, _) in enumerate(files):
            for piece in pieces(path, kind, step):
                current.append((number, piece))
                size += piece.size
                if size >= step:
                    ranges.append(tuple(current))
                    current, size = [], 0
    except OSError:
        return None
    if current:
        ranges.append(tuple(current))
    return ranges


class _Assembly:
    """A ``RunAssembler`` fed some of the input's span batches (those of the traces it is
    given), each run it emits keyed by where one process would emit it.

    One process adds each record's spans at the clock after them (spans read), then
    expires the traces idle for ``idle``: its output is, record by record, the runs that
    filled up (``max_spans``) in the order they did, then the idle ones by their last span.
    A trace whose last span came at ``seen`` goes idle at the first record whose clock is
    at least ``seen + idle``, unless its next span comes first. Ticking the assembler at the
    clock before each record it is given (a clock some record ends at) makes the same
    decisions on a part of the input; and ordering the idle runs by ``seen + idle``, then by
    their last span's place in its record, orders them as those records would. So each run
    is keyed ``(clock before its record + 1, _FULL, place of the span that filled it)`` or
    ``(seen + idle, _IDLE, place)``, and at the end of input ``(_END, 0, seen, place)`` for
    the traces still open, then ``(_END, 1, seen, place)`` for those set aside incomplete
    (in the order they were set aside: by ``seen``, never revived since).
    """

    def __init__(self, idle: float) -> None:
        self.assembler = RunAssembler(idle=idle)
        self.idle = idle
        self.last: dict[str, tuple[float, int]] = {}  # trace id -> (clock, place) of its last

    def tick(self, now: float) -> list[tuple[tuple[Any, ...], Run]]:
        return [self._idle(run) for run in self.assembler.expire(now)]

    def batch(
        self, before: int, after: int, places: list[int], spans: list[Span]
    ) -> list[tuple[tuple[Any, ...], Run]]:
        keyed = self.tick(before)
        last = self.last
        for place, span in zip(places, spans, strict=True):
            last[span.trace_id] = (after, place)
        full_size = self.assembler.max_spans
        for run in self.assembler.add(spans, after):
            if len(run.spans) >= full_size:  # the span that filled it is its last new one
                filled = run.spans[-1]
                place = next(p for p, span in zip(places, spans, strict=True) if span is filled)
                keyed.append(((before + 1, _FULL, place), run))
            else:
                keyed.append(self._idle(run))
        return keyed

    def flush(self) -> list[tuple[tuple[Any, ...], Run]]:
        stalled = set(self.assembler.stalled_trace_ids)
        keyed = []
        for run in self.assembler.flush():
            trace_id = run.trace_ids[0]
            seen, place = self.last.pop(trace_id)
            keyed.append(((_END, int(trace_id in stalled), seen, place), run))
        return keyed

    def _idle(self, run: Run) -> tuple[tuple[Any, ...], Run]:
        seen, place = self.last.pop(run.trace_ids[0])
        return (seen + self.idle, _IDLE, place), run


@dataclass(slots=True)
class _Shared:
    """What every range worker is forked with."""

    ranges: list[_Range]
    workers: int
    score: Score
    prepare: Prepare
    idle: float
    scan_next: Any  # multiprocessing.Value: the next range to scan, then to score
    score_next: Any
    requests: list[Any]  # main -> each worker: the bases and the cross-range ids
    responses: Any  # every worker -> main
    inboxes: list[Any]  # the spans of each worker's cross-range traces, from any worker


def _take(counter: Any) -> int:
    with counter.get_lock():
        value = int(counter.value)
        counter.value = value + 1
    return value


class _RangeWorker:
    """One worker: scans ranges, then scores them (module docstring). Its runs go to the
    main process as two streams, each with a mark that no later key of it is below:
    stream 0 the traces inside its ranges, stream 1 the cross-range traces it owns."""

    def __init__(self, index: int, shared: _Shared) -> None:
        self.index = index
        self.shared = shared
        self.bases: list[int] = []
        self.cross: frozenset[str] = frozenset()
        self.local = _Assembly(shared.idle)
        self.owned = _Assembly(shared.idle)
        self.owned_next = 0  # the range whose cross-range spans the owned assembly takes next
        self.owned_waiting: dict[int, collections.deque[tuple[Any, ...]]] = {}
        self.owned_out: list[_Keyed] = []
        self.owned_mark = self.owned_sent = 0

    def run(self) -> None:
        shared = self.shared
        ranges = shared.ranges
        while (number := _take(shared.scan_next)) < len(ranges):
            shared.responses.put(("scan", number, *_scan(ranges[number])))
        self.bases, self.cross = shared.requests[self.index].get()
        number = _take(shared.score_next)
        while number < len(ranges):
            out = self._score_range(number)
            number = _take(shared.score_next)
            self._send(0, out, self.bases[number] if number < len(ranges) else _END - 1)
        # The traces still open at the end of input (on an input shorter than the idle
        # window, all of them) go out in batches as they are scored, so that sending
        # them overlaps scoring them rather than following it (the main process can take
        # none before every worker is done: their keys come after every mark but this).
        flushed = self.local.flush()
        for start in range(0, len(flushed), FLUSH_RUNS):
            self._send(0, self._scored(flushed[start : start + FLUSH_RUNS]), _END - 1)
        self._send(0, [], _DONE)
        inbox = shared.inboxes[self.index]
        while self.owned_next < len(ranges):
            self._take_owned(inbox.get())
            self._send_owned()
        self.owned_out.extend(self._scored(self.owned.flush()))
        self.owned_mark = _DONE
        self._send_owned()

    def _score_range(self, number: int) -> list[_Keyed]:
        """Range ``number`` scored; what is left to send at its end."""
        shared, cross, local = self.shared, self.cross, self.local
        out: list[_Keyed] = []
        workers = shared.workers
        clock = self.bases[number]
        records = 0
        for file_number, piece in shared.ranges[number]:
            seq = 0
            for record in read_piece(piece):
                items = [record] if isinstance(record, InputError) else decode_located(record)
                for item in items:
                    if isinstance(item, InputError):
                        out.append(((clock, _ERROR, file_number, piece.start, seq), item))
                        seq += 1
                        continue
                    before, clock = clock, clock + len(item)
                    places: list[int] = []
                    spans: list[Span] = []
                    sent: dict[int, tuple[list[int], list[Span]]] = {}
                    for place, span in enumerate(item):
                        if span.trace_id in cross:
                            to = sent.get(owner(span.trace_id, workers))
                            if to is None:
                                to = sent[owner(span.trace_id, workers)] = ([], [])
                            to[0].append(place)
                            to[1].append(span)
                        else:
                            places.append(place)
                            spans.append(span)
                    out.extend(self._scored(local.batch(before, clock, places, spans)))
                    for to_worker, (their_places, their_spans) in sent.items():
                        self._forward(
                            to_worker, ("spans", number, before, clock, their_places, their_spans)
                        )
                records += 1
                if records % SEND_EVERY == 0:
                    self._send(0, out, clock)
                    out = []
                    self._read_inbox()
        if clock != self.bases[number + 1]:
            raise RuntimeError(
                f"range {number} read as {clock - self.bases[number]} spans, "
                f"scanned as {self.bases[number + 1] - self.bases[number]}"
            )
        # The traces of this range have no span after it: those idle by the end of input
        # go idle now (the keys place them), the others are flushed at the end.
        out.extend(self._scored(local.tick(self.bases[-1])))
        for to_worker in range(workers):
            self._forward(to_worker, ("end", number, clock))
        self._read_inbox()
        return out

    def _forward(self, to_worker: int, message: tuple[Any, ...]) -> None:
        if to_worker == self.index:
            self._take_owned(message)
        else:
            self.shared.inboxes[to_worker].put(message)

    def _read_inbox(self) -> None:
        inbox = self.shared.inboxes[self.index]
        while True:
            try:
                message = inbox.get_nowait()
            except queue.Empty:
                break
            self._take_owned(message)
        self._send_owned()

    def _take_owned(self, message: tuple[Any, ...]) -> None:
        """Cross-range spans and range ends, applied in range order (each range's come from
        one worker, in order; a later range's wait for the ranges before it to end)."""
        self.owned_waiting.setdefault(message[1], collections.deque()).append(message)
        while waiting := self.owned_waiting.get(self.owned_next):
            self._apply_owned(waiting.popleft())

    def _apply_owned(self, message: tuple[Any, ...]) -> None:
        if message[0] == "spans":
            _, _, before, after, places, spans = message
            self.owned_out.extend(self._scored(self.owned.batch(before, after, places, spans)))
        else:
            # Every record of the range was read: the clock stood at its end (a record
            # ends there), so the traces idle by then go idle here, as in one process.
            self.owned_out.extend(self._scored(self.owned.tick(message[2])))
            self.owned_mark = message[2]
            del self.owned_waiting[self.owned_next]
            self.owned_next += 1

    def _send_owned(self) -> None:
        if self.owned_out or self.owned_mark != self.owned_sent:
            self._send(1, self.owned_out, self.owned_mark)
            self.owned_out = []
            self.owned_sent = self.owned_mark

    def _scored(self, keyed: list[tuple[tuple[Any, ...], Run]]) -> list[_Keyed]:
        shared = self.shared
        out: list[_Keyed] = []
        for key, run in keyed:
            scored = shared.score(run)
            tallies = [Tally.of(result) for result in scored.results]
            out.append((key, ScoredRun(tallies, shared.prepare(scored))))
        return out

    def _send(self, stream: int, out: list[_Keyed], mark: int) -> None:
        self.shared.responses.put(("out", self.index, stream, out, mark))


def _scan(ranged: _Range) -> tuple[int, set[str]]:
    """A range's span count (the spans one process would count) and trace ids."""
    count = 0
    ids: set[str] = set()
    for _, piece in ranged:
        for record in read_piece(piece):
            if isinstance(record, InputError):
                continue
            for item in decode_record(record):
                if not isinstance(item, InputError):
                    count += len(item)
                    ids.update(span.trace_id for span in item)
    return count, ids


WORKER_GC_THRESHOLD = 20_000  # allocations between two young collections (Python's: 700)


def _worker_gc() -> None:
    """The garbage collector of a worker, which builds and drops a run's spans and verdicts
    by the thousand and keeps little: young collections rarer (with Python's default most
    of them found nothing to free, and moved the runs in flight to older generations to be
    walked again). The main process froze its objects before forking (``gc.freeze``), so
    no collection here walks them, nor writes to the pages it shares with the main
    process; and the main process, unfrozen only at the end, does not walk them either
    while it takes the workers' runs."""
    gc.set_threshold(WORKER_GC_THRESHOLD, *gc.get_threshold()[1:])


def _freeze() -> bool:
    """The main process's objects moved out of the collector's reach until the workers
    are done (``_worker_gc``); whether to move them back (not if the host had frozen some:
    it thaws them itself)."""
    thaw = gc.get_freeze_count() == 0
    gc.freeze()
    return thaw


def _range_work(index: int, shared: _Shared) -> None:
    _worker_gc()
    try:
        _RangeWorker(index, shared).run()
    except BaseException as error:  # reported to the main process, which stops
        shared.responses.put(("failed", index, f"{type(error).__name__}: {error}"))


def _score_ranges(
    ranges: list[_Range],
    jobs: int,
    score: Score,
    prepare: Prepare,
    on_error: Callable[[InputError], None],
    idle: float,
) -> Iterator[ScoredRun | InputError | int]:
    context = multiprocessing.get_context("fork")
    shared = _Shared(
        ranges,
        jobs,
        score,
        prepare,
        idle,
        context.Value("q", 0),
        context.Value("q", 0),
        [context.SimpleQueue() for _ in range(jobs)],
        context.Queue(),
        [context.Queue() for _ in range(jobs)],
    )
    processes = []
    thaw = _freeze()
    try:
        for index in range(jobs):
            process = context.Process(target=_range_work, args=(index, shared), daemon=True)
            process.start()
            processes.append(process)
        counts = [0] * len(ranges)
        first_range: dict[str, int] = {}
        cross: set[str] = set()
        for _ in ranges:
            _, number, count, ids = _next(shared.responses, processes, "scan")
            counts[number] = count
            for trace_id in ids:
                if first_range.setdefault(trace_id, number) != number:
                    cross.add(trace_id)
        del first_range
        bases = [0, *itertools.accumulate(counts)]
        frozen = frozenset(cross)
        for request in shared.requests:
            request.put((bases, frozen))
        merge = _Merge(jobs)
        while not merge.done():
            _, index, stream, out, mark = _next(shared.responses, processes, "out")
            for item in merge.take(index, stream, out, mark):
                if isinstance(item, InputError):
                    on_error(item)
                yield item
        yield bases[-1]
    finally:
        if thaw:
            gc.unfreeze()
        for process in processes:
            if process.is_alive():
                process.kill()
            process.join()
        for q in (shared.responses, *shared.inboxes):
            q.close()
            q.cancel_join_thread()


class _Merge:
    """The workers' keyed streams merged into one process's order: an item goes out once
    every stream's mark is past its key (keys ``(clock, ...)``: a mark ``m`` says the
    stream's later keys are at least ``(m, _ERROR)``)."""

    def __init__(self, workers: int) -> None:
        self.marks = [[0, 0] for _ in range(workers)]
        self.heap: list[tuple[tuple[Any, ...], int, Any]] = []
        self.count = 0

    def done(self) -> bool:
        return all(mark == _DONE for marks in self.marks for mark in marks)

    def take(
        self, index: int, stream: int, out: list[_Keyed], mark: int
    ) -> Iterator[ScoredRun | InputError]:
        for key, item in out:
            heapq.heappush(self.heap, (key, self.count, item))
            self.count += 1
        self.marks[index][stream] = mark
        bound = (min(min(marks) for marks in self.marks), _ERROR)
        heap = self.heap
        while heap and heap[0][0] < bound:
            yield heapq.heappop(heap)[2]


def _unpickled(responses: Any) -> Any:
    """The next message from the workers (``queue.Empty`` after a second without one),
    rebuilt with the garbage collector off: a message is hundreds of runs' verdicts,
    thousands of new objects and no garbage, and collections set off while rebuilding it
    walk them over and over (and the verdicts the main process keeps). The next
    collection takes them once."""
    if not gc.isenabled():
        return responses.get(timeout=1.0)
    gc.disable()
    try:
        return responses.get(timeout=1.0)
    finally:
        gc.enable()


def _next(responses: Any, processes: list[Any], kind: str) -> tuple[Any, ...]:
    while True:
        try:
            message = _unpickled(responses)
        except queue.Empty:
            # A worker that is done exits (code 0) once its messages are in the pipe.
            codes = [process.exitcode for process in processes]
            stopped = [code for code in codes if code not in (None, 0)]
            if stopped or None not in codes:
                raise WorkerFailed(
                    f"a scoring worker stopped (exit code {(stopped or codes)[0]}) before "
                    "it was done; if the machine ran out of memory, try fewer --jobs"
                ) from None
            continue
        if message[0] == "failed":
            raise WorkerFailed(f"scoring worker {message[1] + 1} failed: {message[2]}")
        if message[0] != kind:
            raise WorkerFailed(f"scoring worker {message[1] + 1} sent {message[0]!r}")
        return message


# ---- any other input: records routed by the main process -----------------------------


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
    _worker_gc()
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


# (the routing main process)


def _route(record: Record, workers: int) -> tuple[list[int], int | None]:
    """Which workers decode ``record`` and how many spans it holds (None: not known)."""
    found = None
    if record.kind is RecordKind.JSON_LINE or (
        record.kind is RecordKind.PROTO and record.payload[:1] == b"{"
    ):
        found = trace_ids_of_json(record.payload)
    elif record.kind is RecordKind.PROTO:
        from rampart_otel.codecs.otlp_proto import trace_ids_of_proto  # startup: protobuf

        found = trace_ids_of_proto(record.payload)
    if found is None:
        return list(range(workers)), None
    ids, count = found
    return sorted({owner(trace_id, workers) for trace_id in ids}), count


def _score_routed(
    paths: Iterable[str],
    *,
    jobs: int,
    score: Score,
    prepare: Prepare,
    on_error: Callable[[InputError], None],
    idle: float = DEFAULT_IDLE_SPANS,
) -> Iterator[ScoredRun | InputError | int]:
    """``score_in_parallel`` for input the workers cannot read in ranges: the main process
    reads every record and hands it to the workers that own its traces."""
    context = multiprocessing.get_context("fork")
    requests = [context.Queue() for _ in range(jobs)]
    responses = [context.Queue() for _ in range(jobs)]
    processes = []
    pending: list[list[tuple[tuple[int, ...], InputError]]] = []  # main's read errors
    thaw = _freeze()
    try:
        for index in range(jobs):
            worker = _Worker(index, jobs, score, prepare, idle)
            process = context.Process(
                target=_work, args=(worker, requests[index], responses[index]), daemon=True
            )
            process.start()
            processes.append(process)
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
        if thaw:
            gc.unfreeze()
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
            return _unpickled(response_queue)
        except queue.Empty:
            if not process.is_alive():
                code = process.exitcode
                raise WorkerFailed(
                    f"a scoring worker stopped (exit code {code}); "
                    "if the machine ran out of memory, try fewer --jobs"
                ) from None

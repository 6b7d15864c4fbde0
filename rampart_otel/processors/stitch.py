"""Stitch the pieces of one agent's work that arrive as separate traces into one run.

A run is scored on what it holds, so a piece scored alone speaks for less than the whole:
- a *continuation*: a plain SDK tool loop (no agent span) leaves one trace per model call,
  and each later call's input history holds the tool calls an earlier one asked for. A
  trace with no agent span whose model input history holds only calls that the model calls
  of one earlier run of the same process asked for (its history extends theirs), starting
  after that run ended and within ``MAX_GAP_NS`` of it, is joined onto that run;
- a *fragment*: an I/O span whose context the framework lost (a thread pool, a callback)
  is a trace of its own with no agent, model or tool span. It is joined to the one run of
  the same service whose time span holds it; with none or several, it stays apart.

Only runs that may still be joined wait: a fragment (for the run that holds it), and a run
whose model calls asked for tools no later call of it received the results of (a loop
that may go on in the next trace), each for ``hold`` units of the assembler's clock after
a piece last joined it; every other run passes straight through. A piece arriving after
its run was emitted stays a run of its own (a fragment or continuation: never SAFE).
``Run.stitched`` says how each joined trace was attached. Only the spans' own identifiers
decide: no trace content is guessed from.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable, Iterator, Reversible
from dataclasses import dataclass, field
from heapq import heappop, heappush

from rampart_otel.model import Run, Span, Stitch, StitchReason
from rampart_otel.processors.assemble import DEFAULT_IDLE_SPANS, GroupBy, RunAssembler
from rampart_otel.processors.senders import BySender
from rampart_otel.processors.span_views import (
    ClassifiedRun,
    carry_readings,
    classified,
    run_readings,
)

# Longest pause between one model call of a conversation and the next that still joins:
# tool runs and model latency, not a conversation resumed another day.
MAX_GAP_NS = 10 * 60 * 1_000_000_000

ProcessKey = tuple[str | None, str | None]  # service.name, service.instance.id


@dataclass(slots=True)
class _Piece:
    """What the stitcher needs to know of one assembled run."""

    run: Run
    process: ProcessKey
    start: int
    end: int
    agentic: bool
    has_agent: bool  # an agent span: a run of its own, never a continuation piece
    asked: set[str]  # call ids its model calls asked for, or its tools ran
    history: set[str]  # call ids its model calls' input history holds that it did not ask
    answered: set[str]  # call ids whose results its model calls' input history holds
    requested: set[str]  # call ids its model calls asked for (not those its tools ran)


@dataclass(slots=True)
class _Group:
    """Pieces joined into one run, and what the stitcher asks of them, kept as they join
    (never recomputed from the pieces: a loop of thousands of traces is one group)."""

    pieces: list[_Piece]
    seq: int  # arrival order
    process: ProcessKey  # every piece's: only pieces of one process join
    start: int
    end: int
    agentic: bool
    has_agent: bool
    run_ids: set[str]
    asked: set[str]
    answered: set[str]
    unanswered: set[str]  # call ids its model calls asked for, no input history answered
    stitches: list[Stitch] = field(default_factory=list)
    last_joined: float = 0.0
    closed: bool = False  # a later revision of it arrived: nothing more joins it

    @classmethod
    def of(cls, piece: _Piece, seq: int, now: float) -> _Group:
        return cls(
            [piece],
            seq,
            piece.process,
            piece.start,
            piece.end,
            piece.agentic,
            piece.has_agent,
            {piece.run.run_id},
            set(piece.asked),
            set(piece.answered),
            piece.requested - piece.answered,
            last_joined=now,
        )

    def add(self, piece: _Piece) -> None:
        self.pieces.append(piece)
        self.run_ids.add(piece.run.run_id)
        self.start = min(self.start, piece.start)
        self.end = max(self.end, piece.end)
        self.agentic = self.agentic or piece.agentic
        self.has_agent = self.has_agent or piece.has_agent
        self.asked |= piece.asked
        self.answered |= piece.answered
        self.unanswered -= piece.answered
        self.unanswered |= piece.requested - self.answered

    def may_go_on(self) -> bool:
        """A fragment, or a loop that asked for tools whose results it never sent back: a
        later piece may still join it."""
        if not self.agentic:
            return True
        return not self.has_agent and bool(self.unanswered)


class _Spans:
    """Groups by the time they span, found by an instant they hold: each group sits in
    the node of the smallest aligned power-of-two window holding its span (level, index);
    an instant's lookup visits one node per level in use, and sees only the groups whose
    window holds it: those running about then, never every group held."""

    __slots__ = ("_at", "_levels", "_nodes", "_wide")

    def __init__(self) -> None:
        self._nodes: dict[tuple[int, int], dict[int, _Group]] = {}
        self._levels: dict[int, int] = {}  # level → nodes at it
        self._at: dict[int, tuple[int, int] | None] = {}  # group seq → its node (None: wide)
        self._wide: dict[int, _Group] = {}  # spans no window holds (negative, reversed)

    def __len__(self) -> int:
        return len(self._at)

    def put(self, group: _Group) -> None:
        self.drop(group)
        start, end = group.start, group.end
        if start < 0 or end < start:
            self._at[group.seq] = None
            self._wide[group.seq] = group
            return
        level = (start ^ end).bit_length()
        key = (level, start >> level)
        node = self._nodes.get(key)
        if node is None:
            node = self._nodes[key] = {}
            self._levels[level] = self._levels.get(level, 0) + 1
        node[group.seq] = group
        self._at[group.seq] = key

    def drop(self, group: _Group) -> None:
        if group.seq not in self._at:
            return
        key = self._at.pop(group.seq)
        if key is None:
            del self._wide[group.seq]
            return
        node = self._nodes[key]
        del node[group.seq]
        if not node:
            del self._nodes[key]
            level = key[0]
            if self._levels[level] == 1:
                del self._levels[level]
            else:
                self._levels[level] -= 1

    def holding(self, instant: int) -> Iterator[_Group]:
        """Every group whose window holds ``instant`` (a superset of those whose span does)."""
        yield from self._wide.values()
        if instant < 0:
            return
        nodes = self._nodes
        for level in self._levels:
            node = nodes.get((level, instant >> level))
            if node is not None:
                yield from node.values()


class _Waiting:
    """Fragments no run's time holds yet, by start: a run finds those inside its time by
    one bisection, not by looking at every fragment held."""

    __slots__ = ("_keys", "_pieces")

    def __init__(self) -> None:
        self._keys: list[tuple[int, int]] = []  # (start, seq), sorted
        self._pieces: dict[int, _Group] = {}

    def __len__(self) -> int:
        return len(self._keys)

    def put(self, group: _Group) -> None:
        insort(self._keys, (group.start, group.seq))
        self._pieces[group.seq] = group

    def drop(self, group: _Group) -> None:
        if self._pieces.pop(group.seq, None) is None:
            return
        keys = self._keys
        del keys[bisect_left(keys, (group.start, group.seq))]

    def inside(self, start: int, end: int) -> list[_Group]:
        """The fragments whose time lies within ``start``..``end``."""
        keys, pieces = self._keys, self._pieces
        found = []
        for position in range(bisect_left(keys, (start, -1)), len(keys)):
            begins, seq = keys[position]
            if begins > end:
                break
            group = pieces[seq]
            if group.end <= end:
                found.append(group)
        return found


class Stitcher:
    """Feed assembled runs with ``add``; emitted runs come back joined where they belong.

    Each arrival looks only where a partner can be: the groups of its process that asked
    for the call ids its history holds, the runs of its process running at its time, the
    fragments of its process within its time, the group of its own run id; expiry looks
    only at the groups that changed and those whose time is up. Nothing rescans every
    group held (a collector can release tens of thousands at once): the work is linear in
    the pieces, times the runs of one process running at once.
    """

    def __init__(self, hold: float) -> None:
        self.hold = hold
        self._groups: dict[int, _Group] = {}  # seq → group, in arrival order
        self._seq = 0
        self._by_run: dict[str, _Group] = {}  # run id → the group holding it
        # (process, call id asked) → the open groups of that process that asked it.
        self._by_call: dict[tuple[ProcessKey, str], dict[int, _Group]] = {}
        self._spans: dict[ProcessKey, _Spans] = {}  # open agentic groups, by time
        self._fragments: dict[ProcessKey, _Waiting] = {}  # fragments no run holds yet
        self._changed: dict[int, _Group] = {}  # joined or closed since the last expiry
        self._timers: list[tuple[float, int]] = []  # (last joined, seq): a heap

    @property
    def held(self) -> int:
        return len(self._groups)

    def add(self, runs: Iterable[Run], now: float) -> list[Run]:
        self.take(runs, now)
        return self.expire(now)

    def take(self, runs: Iterable[Run], now: float) -> None:
        """Hold ``runs``, each joined where it belongs; nothing is emitted."""
        for run in runs:
            self._arrive(_piece(run), now)

    def expire(self, now: float) -> list[Run]:
        """Emit the groups nothing more can join, and those no piece joined for ``hold``,
        oldest first."""
        groups = self._groups
        ready = {
            seq: group
            for seq, group in self._changed.items()
            if groups.get(seq) is group and (group.closed or not group.may_go_on())
        }
        self._changed = {}
        timers, deadline = self._timers, now - self.hold
        while timers and timers[0][0] <= deadline:
            joined, seq = heappop(timers)
            group = groups.get(seq)
            if group is not None and group.last_joined == joined:
                ready[seq] = group
        if not ready:
            return []
        done = [ready[seq] for seq in sorted(ready)]
        self._forget(done)
        return [_joined(group) for group in done]

    def flush(self) -> list[Run]:
        done = list(self._groups.values())
        self._forget(done)
        self._changed, self._timers = {}, []
        return [_joined(group) for group in done]

    def _forget(self, groups: list[_Group]) -> None:
        for group in groups:
            del self._groups[group.seq]
            for piece in group.pieces:
                if self._by_run.get(piece.run.run_id) is group:
                    del self._by_run[piece.run.run_id]
            self._unindex(group)
            waiting = self._fragments.get(group.process)
            if waiting is not None:
                waiting.drop(group)
                if not waiting:
                    del self._fragments[group.process]

    def _unindex(self, group: _Group) -> None:
        """Nothing more joins ``group`` (closed or emitted): no lookup finds it."""
        for call_id in group.asked:
            key = (group.process, call_id)
            held = self._by_call.get(key)
            if held is not None and held.pop(group.seq, None) is not None and not held:
                del self._by_call[key]
        spans = self._spans.get(group.process)
        if spans is not None:
            spans.drop(group)
            if not spans:
                del self._spans[group.process]

    def _new(self, piece: _Piece, now: float) -> _Group:
        self._seq += 1
        group = _Group.of(piece, self._seq, now)
        self._changed[group.seq] = group
        heappush(self._timers, (now, group.seq))
        return group

    def _hold(self, group: _Group) -> None:
        self._groups[group.seq] = group
        self._index(group, group.pieces)

    def _index(self, group: _Group, pieces: list[_Piece]) -> None:
        for piece in pieces:
            self._by_run.setdefault(piece.run.run_id, group)
            for call_id in piece.asked:
                self._by_call.setdefault((group.process, call_id), {})[group.seq] = group
        if group.agentic and not group.closed:
            self._spans.setdefault(group.process, _Spans()).put(group)

    def _arrive(self, piece: _Piece, now: float) -> None:
        held = self._by_run.get(piece.run.run_id)
        if piece.run.revision > 0 or held is not None:
            # Late spans of a run: its own later revision, after the revision before it.
            if held is not None:
                held.closed = True
                self._changed[held.seq] = held
                self._unindex(held)
            group = self._new(piece, now)
            group.closed = True
            self._groups[group.seq] = group
            return
        group = self._new(piece, now)
        host = self._continued(piece) if piece.history and not piece.has_agent else None
        if host is not None:
            self._attach(host, group, StitchReason.CONTINUATION, now)
            group = host
        elif not piece.agentic:
            found = self._enclosing(piece)
            if len(found) == 1:
                self._attach(found[0], group, StitchReason.TIME_WINDOW, now)
                return
            self._hold(group)
            if not found:  # no run holds it yet; with two, it stays apart for good
                self._fragments.setdefault(piece.process, _Waiting()).put(group)
            return
        else:
            self._hold(group)
        # Fragments that came first and fall inside this run: no other run held them (a
        # run that did would have taken them), so this one is the one.
        waiting = self._fragments.get(group.process)
        if group.agentic and waiting is not None:
            for fragment in sorted(waiting.inside(group.start, group.end), key=_arrival):
                waiting.drop(fragment)
                del self._groups[fragment.seq]
                self._by_run.pop(fragment.pieces[0].run.run_id, None)
                self._changed.pop(fragment.seq, None)
                self._attach(group, fragment, StitchReason.TIME_WINDOW, now)
            if not waiting:
                del self._fragments[group.process]

    def _continued(self, piece: _Piece) -> _Group | None:
        """The one earlier group of the same process whose model calls asked for every call
        this piece's input history holds, ended before it started, and not long before."""
        askers = []
        for call_id in piece.history:
            held = self._by_call.get((piece.process, call_id))
            if held is None:
                return None  # no group asked for this one
            askers.append(held)
        found: _Group | None = None
        for group in min(askers, key=len).values():
            if piece.history <= group.asked and group.end <= piece.start <= group.end + MAX_GAP_NS:
                if found is not None:
                    return None  # two could be continued: neither is
                found = group
        return found

    def _enclosing(self, fragment: _Piece) -> list[_Group]:
        """The open agentic groups of the same process whose time span holds the fragment:
        none, one, or the first two found (two are as many as it takes to stay apart)."""
        spans = self._spans.get(fragment.process)
        found: list[_Group] = []
        if spans is None:
            return found
        for group in spans.holding(fragment.start):
            if group.start <= fragment.start and fragment.end <= group.end:
                found.append(group)
                if len(found) == 2:
                    break
        return found

    def _attach(self, host: _Group, group: _Group, how: StitchReason, now: float) -> None:
        added: list[_Piece] = []
        for piece in group.pieces:
            if piece.run.run_id not in host.run_ids:
                via = ""
                if how is StitchReason.CONTINUATION:
                    via = ", ".join(sorted(host.asked & piece.history)[:3])
                host.add(piece)
                added.append(piece)
                for trace_id in piece.run.trace_ids:
                    host.stitches.append(Stitch(trace_id, how, via))
        host.stitches.extend(group.stitches)
        host.last_joined = now
        heappush(self._timers, (now, host.seq))
        self._changed[host.seq] = host
        self._changed.pop(group.seq, None)
        self._index(host, added)


def _arrival(group: _Group) -> int:
    return group.seq


def _joined(group: _Group) -> Run:
    if len(group.pieces) == 1:
        return group.pieces[0].run
    first = next((p for p in group.pieces if p.agentic), group.pieces[0])
    pieces = [first, *(p for p in group.pieces if p is not first)]
    trace_ids = list(dict.fromkeys(t for piece in pieces for t in piece.run.trace_ids))
    spans = [span for piece in pieces for span in piece.run.spans]
    run = first.run
    joined = Run(
        run.run_id,
        trace_ids,
        spans,
        session_id=run.session_id,
        revision=run.revision,
        stitched=tuple(group.stitches),
    )
    # Each span was read by the conventions when its piece arrived: read once, not again.
    carry_readings(
        joined, {k: v for piece in pieces for k, v in run_readings(classified(piece.run)).items()}
    )
    return joined


def _piece(run: Run) -> _Piece:
    classes = classified(run)
    views = classes.records
    asked: set[str] = set()
    history: set[str] = set()
    answered: set[str] = set()
    requested: set[str] = set()
    agentic = has_agent = False
    for view in views:
        agentic = agentic or view.model or view.agent or view.execution is not None
        has_agent = has_agent or view.agent
        if view.output is not None:
            requested.update(r.call_id for r in view.output.requests if r.call_id)
        if view.execution is not None and view.execution.call_id:
            asked.add(view.execution.call_id)
        if view.model:
            for _, found in view.history:
                history.update(found.arguments, found.results)
                answered.update(found.results)
    asked |= requested
    starts = [s.start_ns for s in run.spans if s.start_ns is not None]
    ends = [s.end_ns or s.start_ns for s in run.spans if (s.end_ns or s.start_ns) is not None]
    return _Piece(
        run=run,
        process=_process(classes),
        start=min(starts, default=0),
        end=max((e for e in ends if e is not None), default=0),
        agentic=agentic,
        has_agent=has_agent,
        asked=asked,
        history=history - asked,
        answered=answered,
        requested=requested,
    )


def _process(run: ClassifiedRun) -> ProcessKey:
    """The process that recorded the run's first root span: its service and instance."""
    graph = run.graph
    span: Span | None = graph.roots[0] if graph.roots else (graph.spans[0] if graph else None)
    if span is None:
        return None, None
    instance = span.resource.attributes.get("service.instance.id")
    return span.resource.service_name, instance if isinstance(instance, str) else None


class StitchingAssembler:
    """A ``RunAssembler`` whose runs pass through a ``Stitcher`` holding them ``idle`` long:
    the same calls, for every host that assembles runs."""

    def __init__(self, assembler: RunAssembler, *, stitch: bool = True) -> None:
        self.assembler = assembler
        # Pieces join only runs of their own sender (tenant): ``senders``.
        self.stitcher = BySender(lambda: Stitcher(assembler.idle)) if stitch else None

    @property
    def open_traces(self) -> int:
        held = self.stitcher.held if self.stitcher is not None else 0
        return self.assembler.open_traces + held

    @property
    def stalled_trace_ids(self) -> Reversible[str]:
        return self.assembler.stalled_trace_ids

    def add(self, spans: Iterable[Span], now: float) -> list[Run]:
        return self._through(self.assembler.add(spans, now), now)

    def expire(self, now: float) -> list[Run]:
        return self._through(self.assembler.expire(now), now)

    def emit_complete(self, now: float) -> list[Run]:
        runs = self.assembler.emit_complete(now)
        if self.stitcher is None:
            return runs
        self.stitcher.take(runs, now)
        return self.stitcher.flush()

    def flush(self) -> list[Run]:
        runs = self.assembler.flush()
        if self.stitcher is None:
            return runs
        self.stitcher.take(runs, 0.0)
        return self.stitcher.flush()

    def _through(self, runs: list[Run], now: float) -> list[Run]:
        if self.stitcher is None:
            return runs
        return self.stitcher.add(runs, now)


def assemble(
    batches: Iterable[list[Span]],
    *,
    group_by: GroupBy = "trace",
    idle: float = DEFAULT_IDLE_SPANS,
    stitch: bool = True,
) -> Iterator[Run]:
    """Runs from an ordered stream of span batches, using spans read as the clock, with the
    pieces of one agent's work stitched together (``stitch=False``: one run per trace)."""
    assembler = StitchingAssembler(RunAssembler(group_by=group_by, idle=idle), stitch=stitch)
    position = 0
    for batch in batches:
        position += len(batch)
        yield from assembler.add(batch, position)
    yield from assembler.flush()

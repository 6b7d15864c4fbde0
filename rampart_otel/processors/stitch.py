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

from collections.abc import Iterable, Iterator, Reversible
from dataclasses import dataclass, field

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
    pieces: list[_Piece]
    stitches: list[Stitch] = field(default_factory=list)
    last_joined: float = 0.0
    closed: bool = False  # a later revision of it arrived: nothing more joins it

    @property
    def start(self) -> int:
        return min(piece.start for piece in self.pieces)

    @property
    def end(self) -> int:
        return max(piece.end for piece in self.pieces)

    @property
    def agentic(self) -> bool:
        return any(piece.agentic for piece in self.pieces)

    def processes(self) -> set[ProcessKey]:
        return {piece.process for piece in self.pieces}

    def asked(self) -> set[str]:
        return {call_id for piece in self.pieces for call_id in piece.asked}

    def may_go_on(self) -> bool:
        """A fragment, or a loop that asked for tools whose results it never sent back: a
        later piece may still join it."""
        if not self.agentic:
            return True
        if any(piece.has_agent for piece in self.pieces):
            return False
        answered = {call_id for piece in self.pieces for call_id in piece.answered}
        return any(piece.requested - answered for piece in self.pieces)


class Stitcher:
    """Feed assembled runs with ``add``; emitted runs come back joined where they belong.

    Each arrival looks only where a partner can be: the held fragments, the groups that
    asked for a call id its history holds, the group of its own run id; never every run
    held (a collector can release tens of thousands at once).
    """

    def __init__(self, hold: float) -> None:
        self.hold = hold
        self._groups: list[_Group] = []  # in arrival order
        self._by_run: dict[str, _Group] = {}  # run id → the group holding it
        self._fragments: list[_Group] = []  # held groups of one fragment, waiting for a run
        self._by_call: dict[str, list[_Group]] = {}  # call id asked → groups that asked it

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
        waiting = [
            group
            for group in self._groups
            if not group.closed and group.may_go_on() and group.last_joined > now - self.hold
        ]
        if len(waiting) == len(self._groups):
            return []
        kept = {id(group) for group in waiting}
        ready = [group for group in self._groups if id(group) not in kept]
        self._groups = waiting
        self._forget(ready)
        return [_joined(group) for group in ready]

    def flush(self) -> list[Run]:
        done = [_joined(group) for group in self._groups]
        self._forget(self._groups)
        self._groups = []
        return done

    def _forget(self, groups: list[_Group]) -> None:
        gone = {id(group) for group in groups}
        for group in groups:
            for piece in group.pieces:
                if self._by_run.get(piece.run.run_id) is group:
                    del self._by_run[piece.run.run_id]
                for call_id in piece.asked:
                    held = [g for g in self._by_call.get(call_id, ()) if id(g) not in gone]
                    if held:
                        self._by_call[call_id] = held
                    else:
                        self._by_call.pop(call_id, None)
        self._fragments = [g for g in self._fragments if id(g) not in gone]

    def _hold(self, group: _Group) -> None:
        self._groups.append(group)
        self._index(group, group.pieces)
        if not group.agentic:
            self._fragments.append(group)

    def _index(self, group: _Group, pieces: list[_Piece]) -> None:
        for piece in pieces:
            self._by_run.setdefault(piece.run.run_id, group)
            for call_id in piece.asked:
                self._by_call.setdefault(call_id, []).append(group)

    def _arrive(self, piece: _Piece, now: float) -> None:
        group = _Group([piece], last_joined=now)
        held = self._by_run.get(piece.run.run_id)
        if piece.run.revision > 0 or held is not None:
            # Late spans of a run: its own later revision, after the revision before it.
            if held is not None:
                held.closed = True
            group.closed = True
            self._groups.append(group)
            return
        host = self._continued(piece) if piece.history and not piece.has_agent else None
        if host is not None:
            self._attach(host, group, StitchReason.CONTINUATION, now)
            group = host
        elif not piece.agentic:
            host = self._enclosing(piece)
            if host is not None:
                self._attach(host, group, StitchReason.TIME_WINDOW, now)
                return
            self._hold(group)
            return
        else:
            self._hold(group)
        if group.agentic:  # fragments that came first and fall inside this run
            for waiting in list(self._fragments):
                fragment = waiting.pieces[0]
                if len(waiting.pieces) == 1 and self._enclosing(fragment) is group:
                    self._groups.remove(waiting)
                    self._fragments.remove(waiting)
                    self._by_run.pop(fragment.run.run_id, None)
                    self._attach(group, waiting, StitchReason.TIME_WINDOW, now)

    def _continued(self, piece: _Piece) -> _Group | None:
        """The one earlier group of the same process whose model calls asked for every call
        this piece's input history holds, ended before it started, and not long before."""
        candidates = {
            id(group): group
            for call_id in piece.history
            for group in self._by_call.get(call_id, ())
        }
        found = [
            group
            for group in candidates.values()
            if not group.closed
            and piece.process in group.processes()
            and piece.history <= group.asked()
            and group.end <= piece.start <= group.end + MAX_GAP_NS
        ]
        return found[0] if len(found) == 1 else None

    def _enclosing(self, fragment: _Piece) -> _Group | None:
        """The one agentic group of the same process whose time span holds the fragment."""
        found = [
            group
            for group in self._groups
            if not group.closed
            and group.agentic
            and fragment.process in group.processes()
            and group.start <= fragment.start
            and fragment.end <= group.end
        ]
        return found[0] if len(found) == 1 else None

    def _attach(self, host: _Group, group: _Group, how: StitchReason, now: float) -> None:
        added: list[_Piece] = []
        for piece in group.pieces:
            if piece.run.run_id not in {p.run.run_id for p in host.pieces}:
                host.pieces.append(piece)
                added.append(piece)
                via = ""
                if how is StitchReason.CONTINUATION:
                    via = ", ".join(sorted(host.asked() & piece.history)[:3])
                for trace_id in piece.run.trace_ids:
                    host.stitches.append(Stitch(trace_id, how, via))
        host.stitches.extend(group.stitches)
        host.last_joined = now
        self._index(host, added)


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

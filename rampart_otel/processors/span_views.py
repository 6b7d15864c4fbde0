"""Span classification: each span of a run read once into one frozen record.

Each span is read by the conventions that own its scope, else by every general one (cheap
key probes; a prefix scan only on model spans), and their reports are merged into one
``SpanReading`` (it depends on the span alone, so it is reused wherever the span goes).
Then, from the readings and the run's graph (``run_graph``), each span's ``SpanRecord``: a
request inside a model-inference span's subtree, with no tool run in between, is that
model's transport when it went to the model's server (or, where the model span names none,
it is the model span's own HTTP child); model spans that are layers of one model call
(nested, or siblings reporting the same response) are linked, and an unreadable layer is
read through a readable one. Records are never changed: every job derives its own output
from them (``ClassifiedRun``), so the order of the jobs does not matter.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import Any, NamedTuple

from rampart_otel.conventions import (
    Convention,
    Gate,
    History,
    ModelOutput,
    SideEffectDetails,
    SpanReport,
    ToolReport,
    UserInput,
    agent_family,
    mcp,
)
from rampart_otel.conventions.notes import UNNAMED_SCOPE, cut_by_zipkin, scope_lost
from rampart_otel.conventions.registry import BY_SCOPE, GENERAL, SCOPE_DEPENDENT
from rampart_otel.conventions.side_effects import (
    TRANSPORT_KINDS,
    Endpoint,
    model_endpoint,
    request_endpoint,
    same_endpoint,
)
from rampart_otel.model import Run, Scope, Span
from rampart_otel.run_graph import RunGraph, run_graph

_Readers = tuple[
    tuple[Callable[[Span], SpanReport | None], ...],
    tuple[tuple[str, Callable[[Span], History]], ...],
    tuple[Callable[[Span], UserInput | None], ...],
]


def _readers(conventions: tuple[Convention, ...]) -> _Readers:
    """(span readers, (name, history reader) pairs, user-input readers) of some
    conventions, in registry order."""
    return (
        tuple(convention.read for convention in conventions),
        tuple((c.name, c.history) for c in conventions if c.history is not None),
        tuple(c.user_input for c in conventions if c.user_input is not None),
    )


_BY_SCOPE = {scope: _readers(conventions) for scope, conventions in BY_SCOPE.items()}

# The general conventions' gates (``conventions.Gate``): every key and scope one names. A
# span is read only by the readers whose gate it passes, found once per combination of
# these keys and scopes it holds (and whether it has events) and kept.
_GATES = [g for c in GENERAL for g in (c.read_gate, c.history_gate, c.input_gate) if g is not None]
_GATE_KEYS = frozenset(key for gate in _GATES for key in gate.keys)
_GATE_SCOPES = tuple(dict.fromkeys(scope for gate in _GATES for scope in gate.scopes))
_GATE_SCOPE_PREFIXES = tuple(scope + "." for scope in _GATE_SCOPES)
_NO_SCOPES: frozenset[str] = frozenset()
_DispatchKey = tuple[frozenset[str], frozenset[str], bool]
_dispatch: dict[_DispatchKey, _Readers] = {}
_DISPATCH_KEPT = 1024  # combinations are few; keys are trace data, so never unbounded


def _passes(gate: Gate | None, key: _DispatchKey) -> bool:
    keys, scopes, events = key
    return (
        gate is None
        or not keys.isdisjoint(gate.keys)
        or not scopes.isdisjoint(gate.scopes)
        or (gate.events and events)
    )


def _general_readers(span: Span) -> _Readers:
    """The readers of the general conventions whose gates ``span`` passes."""
    scope = span.scope.name
    if scope in _GATE_SCOPES or scope.startswith(_GATE_SCOPE_PREFIXES):
        scopes = frozenset(s for s in _GATE_SCOPES if scope == s or scope.startswith(s + "."))
    else:
        scopes = _NO_SCOPES
    key = (_GATE_KEYS.intersection(span.attributes), scopes, bool(span.events))
    found = _dispatch.get(key)
    if found is None:
        found = (
            tuple(c.read for c in GENERAL if _passes(c.read_gate, key)),
            tuple(
                (c.name, c.history)
                for c in GENERAL
                if c.history is not None and _passes(c.history_gate, key)
            ),
            tuple(
                c.user_input
                for c in GENERAL
                if c.user_input is not None and _passes(c.input_gate, key)
            ),
        )
        if len(_dispatch) >= _DISPATCH_KEPT:
            _dispatch.clear()
        _dispatch[key] = found
    return found


def _span_readers(span: Span) -> _Readers:
    """The readers of the conventions that read ``span``: its scope's owner's (and the
    side-effect conventions'), else the general ones its keys call for."""
    owned = _BY_SCOPE.get(span.scope.name)
    return owned if owned else _general_readers(span)


class SpanReading(NamedTuple):
    """What the conventions read on one span, alone: every reader's report merged.

    A reading depends on the span only, so it is made once per span and reused by every
    run the span is in (the stitcher's piece and the run it joins). Immutable (a named
    tuple: made millions of times, it costs a seventh of a frozen dataclass); the reports
    it holds (model output, tool reports, histories) are the conventions' objects, which
    no job changes: a job that needs another value makes its own copy.
    """

    span: Span
    model: bool = False
    agent: bool = False
    output: ModelOutput | None = None
    execution: ToolReport | None = None
    effects: tuple[SideEffectDetails, ...] = ()
    answer: str | None = None  # an agent span's captured answer
    dispatched: tuple[ToolReport, ...] = ()  # calls handed to tools
    # What on this span no convention understood: its notes, or the unknown family it is of.
    not_understood: tuple[str, ...] = ()
    readers: tuple[str, ...] = ()  # conventions that reported on it
    unread_by: tuple[str, ...] = ()  # ...and those with notes (or a family)
    caller: bool = False  # a caller's span a framework wrote a model call's attributes onto
    # A model span's message history, as each convention that reads the span reads it.
    history: tuple[tuple[str, History], ...] = ()
    # The remote agent the span hands a task to (``SpanReport.remote_agent``).
    remote_agent: str | None = None
    # A code agent's step, which runs its model's code (``SpanReport.code_step``).
    code_step: bool = False
    # The agent a hand-off on this span moves the conversation to (``SpanReport.handoff``;
    # "" when its name is not recorded): an agent boundary, not a tool call of the user's.
    handoff: str | None = None
    # The servers the span's requests went to, where it names them: a model span's
    # (``model_endpoint``: one), else each of ``effects``' in its order (``request_endpoint``).
    endpoints: tuple[Endpoint | None, ...] = ()
    # An execution span of a call that runs in another process (an MCP client's tool call:
    # ``mcp.runs_elsewhere``): what the tool did shows only in that process's spans.
    runs_elsewhere: bool = False
    # A model or agent span's user-input readers: those of the conventions that read it,
    # that may find any input on it (``processors.user_input``).
    input_readers: tuple[Callable[[Span], UserInput | None], ...] = ()


class SpanRecord(NamedTuple):
    """One span of a run, classified once: its reading, and what its place in the run's
    graph makes of it. Immutable, like ``SpanReading``."""

    span: Span
    model: bool  # a model call (not a caller's span holding the call's own spans)
    agent: bool
    output: ModelOutput | None
    execution: ToolReport | None
    effects: tuple[SideEffectDetails, ...]
    answer: str | None
    dispatched: tuple[ToolReport, ...]
    not_understood: tuple[str, ...]
    readers: tuple[str, ...]
    unread_by: tuple[str, ...]
    caller: bool  # a caller's span a framework wrote a model call's attributes onto
    in_model: bool  # the model's transport (a model span: nested in another)
    holds_work: bool  # a parent of a model or agent span
    read_through: bool  # unreadable model span read through another layer of its call
    layers: tuple[str, ...]  # span ids of sibling spans of the same model call
    reading: SpanReading  # what the conventions read on the span alone
    under_agent: bool  # an agent span is above it
    # Its place in a depth-first walk of the run's spans: (its number, the last number in
    # its subtree), so whether one span is above another is two comparisons (``inside``).
    tour: tuple[int, int]

    @property
    def span_id(self) -> str:
        return self.span.span_id

    @property
    def history(self) -> tuple[tuple[str, History], ...]:
        """(convention, message history) of a model span: its input's earlier turns."""
        return self.reading.history


class ClassifiedRun:
    """A run's graph and each of its spans' record, in the graph's time order: what every
    job derives its output from. Immutable."""

    __slots__ = ("_by_id", "_graph", "_records")

    def __init__(self, graph: RunGraph, records: tuple[SpanRecord, ...]) -> None:
        self._graph = graph
        self._records = records
        self._by_id = {record.span.span_id: record for record in records}  # never changed

    @property
    def graph(self) -> RunGraph:
        return self._graph

    @property
    def records(self) -> tuple[SpanRecord, ...]:
        """Each span's record, in the graph's time order."""
        return self._records

    def record(self, span_id: str) -> SpanRecord | None:
        return self._by_id.get(span_id)

    def ancestors(self, record: SpanRecord) -> Iterator[SpanRecord]:
        """The record's parent, its parent's parent, ... (the graph's walk up)."""
        by_id = self._by_id
        return (by_id[span.span_id] for span in self.graph.ancestors(record.span.span_id))


def inside(tour: tuple[int, int], above: tuple[int, int]) -> bool:
    """Whether the span at ``tour`` is under the span at ``above`` (``SpanRecord.tour``)."""
    return above[0] < tour[0] <= above[1]


def read_span(span: Span, readings: Mapping[str, SpanReading] | None = None) -> SpanReading:
    """The conventions' reading of ``span``: from ``readings`` when it holds this very span."""
    if readings is not None:
        known = readings.get(span.span_id)
        if known is not None and known.span is span:
            return known
    return _classify(span)


def classify(graph: RunGraph, readings: Mapping[str, SpanReading] | None = None) -> ClassifiedRun:
    """Each span of the graph classified once, in time order.

    Each span is read by the conventions (or its reading taken from ``readings``); then,
    from the readings and the graph: a caller's span holding the call's own spans is no
    model call, model spans' transport is marked (``in_model``), and the layers of one
    model call are linked and read through each other.
    """
    found = [read_span(span, readings) for span in graph.spans]
    return _Classifier(graph, found).records()


def run_readings(run: ClassifiedRun) -> dict[str, SpanReading]:
    """The readings behind a classified run's records, to reuse in a larger run."""
    return {record.span.span_id: record.reading for record in run.records}


class _Classifier:
    """The relational half of classification: scratch state, used once, then dropped."""

    def __init__(self, graph: RunGraph, readings: list[SpanReading]) -> None:
        self.graph = graph
        self.readings = readings
        self.by_id = {reading.span.span_id: reading for reading in readings}
        self.holds_work: set[str] = set()
        for reading in readings:
            if reading.model or reading.agent:
                parent_id = graph.parent_id(reading.span.span_id)
                if parent_id is not None:
                    self.holds_work.add(parent_id)
        self.model: dict[str, bool] = {}
        self.output: dict[str, ModelOutput | None] = {}
        for reading in readings:
            span_id = reading.span.span_id
            demoted = reading.caller and span_id in self.holds_work
            self.model[span_id] = reading.model and not demoted
            self.output[span_id] = None if demoted else reading.output
        self.in_model: dict[str, bool] = {}
        self.above: dict[str, str | None] = {}  # nearest model span above, no tool between
        self.layers: dict[str, list[str]] = {}
        self.read_through: set[str] = set()

    def records(self) -> ClassifiedRun:
        model, in_model = self.model, self.in_model
        for reading in self.readings:
            span_id = reading.span.span_id
            if model[span_id] or reading.effects:
                self._resolve_in_model(span_id)
            else:  # neither a model span nor a request: never the model's transport
                in_model[span_id] = False
        self._link_same_responses()
        tours, under_agent = self._walk()
        self._mark_read_through(tours)
        output, holds_work, through, layers = (
            self.output,
            self.holds_work,
            self.read_through,
            self.layers,
        )
        records = []
        for reading in self.readings:
            span_id = reading.span.span_id
            linked = layers.get(span_id)
            record = SpanRecord(
                reading.span,
                model[span_id],
                reading.agent,
                output[span_id],
                reading.execution,
                reading.effects,
                reading.answer,
                reading.dispatched,
                reading.not_understood,
                reading.readers,
                reading.unread_by,
                reading.caller,
                in_model[span_id],
                span_id in holds_work,
                span_id in through,
                tuple(linked) if linked else (),
                reading,
                span_id in under_agent,
                tours[span_id],
            )
            records.append(record)
        return ClassifiedRun(self.graph, tuple(records))

    def _walk(self) -> tuple[dict[str, tuple[int, int]], set[str]]:
        """One depth-first walk from the roots: each span's (number, last number in its
        subtree), and the spans an agent span is above."""
        tours: dict[str, tuple[int, int]] = {}
        under_agent: set[str] = set()
        children, by_id = self.graph.children, self.by_id
        count = 0
        for root in self.graph.roots:
            # (span, an agent above it, its subtree done)
            stack: list[tuple[str, bool, bool]] = [(root.span_id, False, False)]
            push = stack.append
            while stack:
                span_id, agent_above, done = stack.pop()
                if done:
                    tours[span_id] = (tours[span_id][0], count)
                    continue
                count += 1
                if agent_above:
                    under_agent.add(span_id)
                below = children(span_id)
                if not below:  # a leaf: its subtree is itself
                    tours[span_id] = (count, count)
                    continue
                tours[span_id] = (count, count)
                push((span_id, agent_above, True))
                agent = agent_above or by_id[span_id].agent
                for child in reversed(below):
                    push((child.span_id, agent, False))
        return tours, under_agent

    def _resolve_in_model(self, span_id: str) -> bool:
        """Is this span the model's own transport (a model span: nested in another model span)?

        Only the request to the model is its transport: an HTTP or RPC span under a model
        span (with no tool run in between) that went to the server the model span names,
        or, where it names none, the model span's own child (or a request nested in one).
        A query, a message, a process, a request elsewhere is never the model's, nor is a
        child of a model span that holds other model or agent spans (a caller's span a
        framework wrote a model call's attributes onto). A tool execution span is the
        agent's wherever it sits (the Vercel AI SDK's legacy spans nest tools inside the
        model step span).
        """
        known = self.in_model.get(span_id)
        if known is not None:
            return known
        anchor = self._model_above(span_id)
        found = anchor is not None and (self.model[span_id] or self._transport(span_id, anchor))
        self.in_model[span_id] = found
        return found

    def _model_above(self, span_id: str) -> str | None:
        """Memoized walk up the parents: the nearest model span, with no tool run in between."""
        chain: list[str] = []
        current = span_id
        found: str | None
        while True:
            if current in self.above:
                found = self.above[current]
                break
            chain.append(current)
            if self.by_id[current].execution is not None:
                found = None
                break
            parent = self.graph.parent_id(current)
            if parent is None or self.model[parent]:
                found = parent
                break
            current = parent
        for item in chain:
            self.above[item] = found
        return found

    def _transport(self, span_id: str, anchor: str) -> bool:
        reading = self.by_id[span_id]
        effects = reading.effects
        if not effects or any(kind not in TRANSPORT_KINDS for kind, *_ in effects):
            return False
        endpoints: list[Endpoint] = []
        layer: Span | None = self.graph.span(anchor)
        while layer is not None and self.model[layer.span_id]:  # the call's layers, innermost first
            endpoints.extend(filter(None, self.by_id[layer.span_id].endpoints))
            layer = self.graph.parent(layer.span_id)
        if endpoints:
            # Each request's endpoint, read at classification (``SpanReading.endpoints``).
            for request in reading.endpoints:
                if request is None or not any(same_endpoint(request, e) for e in endpoints):
                    return False
            return True
        parent = self.graph.parent(span_id)
        if parent is not None and parent.span_id == anchor:
            return anchor not in self.holds_work
        return (
            parent is not None
            and bool(self.by_id[parent.span_id].effects)
            and self._resolve_in_model(parent.span_id)
        )

    def _link_same_responses(self) -> None:
        """Model spans of one trace that report the same response id are layers of one call.

        A client SDK's own span beside an instrumentation's span for the same request (both
        children of the caller, so nesting does not show it) names the same response. Only
        spans of different instrumentation scopes that overlap in time are linked: a mock
        model that reuses one id does not fold separate calls into one.
        """
        by_response: dict[tuple[str, str], list[Span]] = {}
        for reading in self.readings:
            span = reading.span
            output = self.output[span.span_id]
            if self.model[span.span_id] and output is not None and output.response_id:
                by_response.setdefault((span.trace_id, output.response_id), []).append(span)
        for group in by_response.values():
            for position, span in enumerate(group):
                for other in group[position + 1 :]:
                    if span.scope.name != other.scope.name and _overlap(span, other):
                        self.layers.setdefault(span.span_id, []).append(other.span_id)
                        self.layers.setdefault(other.span_id, []).append(span.span_id)

    def _mark_read_through(self, tours: Mapping[str, tuple[int, int]]) -> None:
        """An unreadable model span nested in (or around) a readable one is read through it.

        pydantic-ai's chat span around OpenInference's or OpenLLMetry's span for the same
        request, one capturing content and the other not, is one model request, read once.
        So is a sibling layer of the same call (``layers``); when no layer of it is
        readable, the first one stands for the call, with every layer's finish reasons (a
        copy of its output: a reading is never changed).
        """
        outputs, through = self.output, self.read_through
        if not any(o is not None and not o.readable for o in outputs.values()):
            return  # no unreadable model span: none to read through another
        for reading in self.readings if self.layers else ():
            span_id = reading.span.span_id
            layers = self.layers.get(span_id)
            output = outputs[span_id]
            if not layers or output is None or span_id in through:
                continue
            group = [span_id, *layers]
            if any((o := outputs[layer]) is not None and o.readable for layer in group):
                for layer in group:
                    if (o := outputs[layer]) is not None and not o.readable:
                        through.add(layer)
                continue
            reasons, provider = list(output.finish_reasons), output.provider
            for layer in layers:
                other = outputs[layer]
                if other is None:
                    continue
                through.add(layer)
                for reason in other.finish_reasons:
                    if reason not in reasons:
                        reasons.append(reason)
                provider = provider or other.provider
            outputs[span_id] = replace(output, finish_reasons=reasons, provider=provider)
        # A model span above a readable one, or under one, is read through it: found from
        # the depth-first walk's numbers (a bisection each) and one walk down, never by
        # walking up from every span.
        readable = sorted(
            tours[span_id][0] for span_id, o in outputs.items() if o is not None and o.readable
        )
        for span_id, output in outputs.items():
            if output is None or output.readable:
                continue
            first, last = tours[span_id]
            below = bisect_right(readable, first)
            if below < len(readable) and readable[below] <= last:
                through.add(span_id)
        graph = self.graph
        stack = [(root.span_id, False) for root in graph.roots]
        while stack:
            span_id, read_above = stack.pop()
            output = outputs[span_id]
            if output is not None and not output.readable and read_above:
                through.add(span_id)
            above = read_above or (output is not None and output.readable)
            stack.extend((child.span_id, above) for child in graph.children(span_id))


def history_readers(span: Span) -> tuple[tuple[str, Callable[[Span], History]], ...]:
    """(convention, message-history reader) of the conventions that read ``span``, those
    whose history of it may hold anything."""
    return _span_readers(span)[1]


def input_readers(span: Span) -> tuple[Callable[[Span], UserInput | None], ...]:
    """The user-input readers of the conventions that read ``span``, those that may find
    any input on it."""
    return _span_readers(span)[2]


def _classify(span: Span) -> SpanReading:
    """Every convention's report on one span, merged into one reading; a model span's
    message history is read here too, once (the stitcher and the tool calls use it)."""
    readers = _span_readers(span)
    return _understood(span, _read(span, readers[0], readers[1], readers[2]))


_Tail = tuple[tuple[Endpoint | None, ...], bool, tuple[Callable[[Span], UserInput | None], ...]]
_NO_TAIL: _Tail = ((), False, ())


def _tail(
    span: Span,
    model: bool,
    agent: bool,
    effects: tuple[SideEffectDetails, ...],
    execution: ToolReport | None,
    input_by: tuple[Callable[[Span], UserInput | None], ...],
) -> _Tail:
    """A classified reading's last fields, from its role: where its requests went
    (``endpoints``), whether its call runs elsewhere, and its user-input readers (a model
    or agent span's: ``input_by``, those of the conventions that read it)."""
    if model:
        return (model_endpoint(span),), False, input_by
    endpoints = (
        tuple([request_endpoint(kind, details, span) for kind, details, *_ in effects])
        if effects
        else ()
    )
    elsewhere = execution is not None and mcp.runs_elsewhere(span)
    return endpoints, elsewhere, input_by if agent else ()


def _understood(span: Span, reading: SpanReading) -> SpanReading:
    """The reading with what the span's trace form may have hidden from it noted.

    Attribute values the form's exporter may have cut short leave what the span says of
    a model or tool incomplete. A span whose trace form lost its scope is also read as
    each scope some reading depends on; when one of those readings differs from the plain
    one, the span is not understood: the form cannot tell which it is. A span whose scope
    has no name (an OTLP request without ``scope``) is read the same way: its scope is
    unknown as much as a form's that lost it.
    """
    if span.cut_keys and (_role(reading) or reading.not_understood):
        note = cut_by_zipkin(span.cut_keys)
        reading = reading._replace(not_understood=(*reading.not_understood, note))
    # A placeholder (``span.refused``) holds no content to read either way: its own finding
    # says what was lost.
    lost_by = span.scope.lost_by or ("" if span.scope.name or span.refused else UNNAMED_SCOPE)
    if lost_by:
        meaning = _meaning(reading)
        for scope in SCOPE_DEPENDENT:
            other = _read(replace(span, scope=Scope(scope)))
            if not other.readers or _meaning(other) == meaning:
                continue
            if scope in BY_SCOPE and (
                # A framework owning its scope reads any span of it; without the scope, it
                # can only be the framework's span if no family recognised it and it is no
                # client span of a side effect.
                _role(reading) or reading.effects or not _role(other) or other.not_understood
            ):
                continue
            note = scope_lost(lost_by, other.readers[0])
            return reading._replace(not_understood=(*reading.not_understood, note))
    return reading


def _role(reading: SpanReading) -> bool:
    return (
        reading.model
        or reading.agent
        or reading.execution is not None
        or reading.output is not None
    )


def _meaning(reading: SpanReading) -> tuple[Any, ...]:
    """What a reading says the span did, without which span object or convention said it."""

    def tool(report: ToolReport | None) -> tuple[Any, ...] | None:
        if report is None:
            return None
        return (
            report.name,
            report.call_id,
            repr(report.arguments),
            report.arguments_captured,
            repr(report.result),
            report.result_captured,
            report.executed,
            report.error,
            report.answer,
            report.candidate,
            report.agent_tool,
        )

    out = reading.output
    output = (
        None
        if out is None
        else (
            out.readable,
            out.text,
            out.text_captured,
            tuple(tool(r) for r in out.requests),
            tuple(out.finish_reasons),
            out.tool_request,
            tuple(out.not_understood),
        )
    )
    return (
        reading.model,
        reading.agent,
        output,
        tool(reading.execution),
        tuple((kind, repr(details)) for kind, details, *_ in reading.effects),
        reading.answer,
        tuple(tool(t) for t in reading.dispatched),
        tuple(reading.not_understood),
    )


def _read(
    span: Span,
    read_by: tuple[Callable[[Span], SpanReport | None], ...] | None = None,
    history_by: tuple[tuple[str, Callable[[Span], History]], ...] = (),
    input_by: tuple[Callable[[Span], UserInput | None], ...] | None = None,
) -> SpanReading:
    """The reports of ``read_by`` (default: the readers of the conventions that read the
    span) on ``span``, merged; a model span's history read by ``history_by``. Classifying
    (``input_by``: the user-input readers), the reading is made whole, its ``_tail`` too.

    Readings are made positionally (a named tuple's keywords cost three times as much), and
    each once (``_replace`` costs one more each)."""
    reports = [
        report
        for read in (_span_readers(span)[0] if read_by is None else read_by)
        if (report := read(span)) is not None
    ]
    if len(reports) == 1:
        return _one(span, reports[0], history_by, input_by)
    if not reports:
        family = agent_family(span)
        if family is not None:
            scope = span.scope.name[:40] or "unnamed"
            return SpanReading(
                span,
                not_understood=(f"a {family} span of scope {scope!r} no reader knows",),
                unread_by=(family,),
            )
        return SpanReading(span)
    model = agent = caller = code_step = False
    remote_agent: str | None = None
    outputs: list[ModelOutput] = []
    execution: ToolReport | None = None
    answer: str | None = None
    handoff: str | None = None
    effects: list[SideEffectDetails] = []
    readers: list[str] = []
    dispatched: list[ToolReport] = []
    not_understood: list[str] = []
    unread_by: list[str] = []
    for report in reports:
        model = model or report.model
        agent = agent or report.agent
        if report.output is not None:
            outputs.append(report.output)
        # Each convention's report of the execution, merged into the first one found.
        execution = _merge_report(execution, report.execution)
        if answer is None:
            answer = report.answer
        effects.extend(report.effects)
        readers.append(report.convention)
        dispatched.extend(report.dispatched)
        caller = caller or report.caller
        code_step = code_step or report.code_step
        if remote_agent is None or report.remote_agent:  # a URL over "somewhere"
            remote_agent = report.remote_agent if report.remote_agent is not None else remote_agent
        if handoff is None:
            handoff = report.handoff
        if report.not_understood or (report.output is not None and report.output.not_understood):
            not_understood.extend(report.not_understood)
            unread_by.append(report.convention)
    kept = () if model else tuple(effects)  # a model span's own HTTP attributes: its transport
    tail = _NO_TAIL if input_by is None else _tail(span, model, agent, kept, execution, input_by)
    return SpanReading(
        span,
        model,
        agent,
        _merge_outputs(outputs) if model else None,
        execution,
        kept,
        answer,
        tuple(dispatched),
        tuple(not_understood),
        tuple(readers),
        tuple(unread_by),
        caller,
        _history(span, history_by) if model else (),
        remote_agent,
        code_step,
        handoff,
        *tail,
    )


def _history(
    span: Span, history_by: tuple[tuple[str, Callable[[Span], History]], ...]
) -> tuple[tuple[str, History], ...]:
    """Each convention's history of a model span that holds any call: an empty one says
    nothing, so it is not kept (a run keeps its readings while it is open)."""
    return tuple(
        (name, found)
        for name, read in history_by
        if (found := read(span)).arguments or found.results or found.names
    )


def _one(
    span: Span,
    report: SpanReport,
    history_by: tuple[tuple[str, Callable[[Span], History]], ...],
    input_by: tuple[Callable[[Span], UserInput | None], ...] | None = None,
) -> SpanReading:
    """One convention's report as a reading: what ``_read`` merges of one report."""
    model, output, agent, execution = report.model, report.output, report.agent, report.execution
    noted = bool(report.not_understood or (output is not None and output.not_understood))
    effects = () if model else tuple(report.effects)
    tail = _NO_TAIL if input_by is None else _tail(span, model, agent, effects, execution, input_by)
    return SpanReading(
        span,
        model,
        agent,
        (_merged_alone(output) if output is not None else _merge_outputs([])) if model else None,
        execution,
        effects,
        report.answer,
        tuple(report.dispatched),
        tuple(report.not_understood) if noted else (),
        (report.convention,),
        (report.convention,) if noted else (),
        report.caller,
        _history(span, history_by) if model else (),
        report.remote_agent,
        report.code_step,
        report.handoff,
        *tail,
    )


def _merge_report(first: ToolReport | None, other: ToolReport | None) -> ToolReport | None:
    """Two conventions on one span describe one execution (MCP + execute_tool, say)."""
    if other is None:
        return first
    if first is None:
        return other
    _fill_report(first, other)
    return first


def _merge_outputs(outputs: list[ModelOutput]) -> ModelOutput:
    """Every convention's reading of one model span, merged in registry order."""
    merged = ModelOutput(readable=False, convention=outputs[0].convention if outputs else "")
    for output in outputs:
        for reason in output.finish_reasons:
            if reason not in merged.finish_reasons:
                merged.finish_reasons.append(reason)
        merged.provider = merged.provider or output.provider
        merged.response_id = merged.response_id or output.response_id
        merged.source = merged.source or output.source
        merged.not_understood.extend(output.not_understood)
        if not output.readable:
            continue
        if not merged.readable:
            merged.readable, merged.convention = True, output.convention
        if output.text_captured and not merged.text_captured:
            merged.text, merged.text_captured = output.text, True
        merged.requests.extend(output.requests)  # same-span duplicates merge by id later
    return merged


def _merged_alone(output: ModelOutput) -> ModelOutput:
    """``_merge_outputs([output])``: the output itself when merging would copy it unchanged
    (the one convention that read the span made it for this reading alone)."""
    reasons = output.finish_reasons
    if all(reasons.index(reason) == i for i, reason in enumerate(reasons)) and (
        (output.readable and (output.text_captured or output.text is None))
        or (not output.text_captured and output.text is None and not output.requests)
    ):
        return output
    return _merge_outputs([output])


def _fill_report(into: ToolReport, other: ToolReport) -> None:
    into.call_id = into.call_id or other.call_id
    into.name = into.name or other.name
    if other.arguments_captured and not into.arguments_captured:
        into.arguments, into.arguments_captured = other.arguments, True
    if other.result_captured and not into.result_captured:
        into.result, into.result_captured = other.result, True
    into.error = into.error or other.error
    into.executed = into.executed and other.executed
    into.answer = into.answer or other.answer
    into.agent_tool = into.agent_tool or other.agent_tool


def _overlap(a: Span, b: Span) -> bool:
    start_a, start_b = a.start_ns or 0, b.start_ns or 0
    end_a = a.end_ns if a.end_ns is not None else 1 << 63
    end_b = b.end_ns if b.end_ns is not None else 1 << 63
    return start_a <= end_b and start_b <= end_a


_CLASSIFIED = "classified"
_READINGS = "readings"


def classified(run: Run) -> ClassifiedRun:
    """The run's classification, made on first use and kept with the run (the stitcher's
    is normalize's); a run joined from pieces reuses its pieces' readings."""
    found = run.derived.get(_CLASSIFIED)
    if found is None:
        found = run.derived[_CLASSIFIED] = classify(run_graph(run), run.derived.get(_READINGS))
    return found


def carry_readings(run: Run, readings: Mapping[str, SpanReading]) -> None:
    """Give a run made of other runs' spans the readings already made of them."""
    run.derived[_READINGS] = readings

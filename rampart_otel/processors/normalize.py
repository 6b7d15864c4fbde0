"""Run → AgentRun: what the agent did, read through every convention the trace uses.

Each span is classified once (cheap key probes; a prefix scan only on model spans) by the
conventions that read it (a framework owning the span's scope, else every general one), then:
tool calls are merged across the conventions and spans that report them (model request
+ execution span, or two instrumentations of one call are ONE call); side effects are the
side-effect spans outside every model-inference subtree (inside one, with no tool execution
span in between, they are the model's transport), each attributed to the tool call whose
execution span encloses it; the response is the top agent span's output, else the last
model span's text. Coverage and integrity are inferred from the same classification
(``processors.coverage``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rampart_otel.conventions import (
    Convention,
    History,
    ModelOutput,
    SideEffectDetails,
    SpanReport,
    ToolReport,
    agent_family,
)
from rampart_otel.conventions.registry import BY_SCOPE, GENERAL
from rampart_otel.conventions.side_effects import DB, is_preparation
from rampart_otel.model import (
    AgentRun,
    ConventionUse,
    Response,
    Run,
    SideEffect,
    Span,
    ToolCall,
    ToolCallStatus,
)
from rampart_otel.processors.coverage import infer_coverage
from rampart_otel.processors.run_facts import RunFacts, SpanRole

_Readers = tuple[
    tuple[Callable[[Span], SpanReport | None], ...],
    tuple[tuple[str, Callable[[Span], History]], ...],
]


def _readers(conventions: tuple[Convention, ...]) -> _Readers:
    """(span readers, (name, history reader) pairs) of some conventions, in registry order."""
    return (
        tuple(convention.read for convention in conventions),
        tuple((c.name, c.history) for c in conventions if c.history is not None),
    )


_READERS, _HISTORY_READERS = _readers(GENERAL)
_BY_SCOPE = {scope: _readers(conventions) for scope, conventions in BY_SCOPE.items()}


@dataclass(slots=True, eq=False)
class _View:
    """One span, classified once."""

    span: Span
    model: bool = False
    agent: bool = False
    output: ModelOutput | None = None
    execution: ToolReport | None = None
    effects: list[SideEffectDetails] = field(default_factory=list)
    answer: str | None = None  # an agent span's captured answer
    dispatched: list[ToolReport] = field(default_factory=list)  # calls handed to tools
    # What on this span no convention understood: its notes, or the unknown family it is of.
    not_understood: list[str] = field(default_factory=list)
    readers: list[str] = field(default_factory=list)  # conventions that reported on it
    unread_by: list[str] = field(default_factory=list)  # ...and those with notes (or a family)
    parent: _View | None = None
    in_model: bool | None = None  # strictly inside a model span's subtree
    read_through: bool = False  # unreadable model span read through another layer of its call
    layers: list[_View] = field(default_factory=list)  # sibling spans of the same model call
    call_index: int | None = None  # tool call whose execution span is this one
    mark: int = 0  # cycle check: 1 on the path being walked, 2 done


def normalize(run: Run) -> AgentRun:
    views, cycles = _link(run.spans)
    for view in views:
        _resolve_in_model(view)
    _link_same_responses(views)
    _mark_read_through(views)

    calls = _CallMerger()
    for view in views:
        if view.output is not None:
            for report in view.output.requests:
                calls.add_request(report, view)
        for report in view.dispatched:
            calls.add_request(report, view)
        if view.execution is not None and not view.execution.answer:
            view.call_index = calls.add_execution(view.execution, view)
            if view.call_index is None:
                view.execution = None  # a traced function no model asked for: no call
    calls.fill_from_history([view for view in views if view.model])
    calls.adopt_named_spans(views)

    side_effects, transport = _side_effects(views)
    response, response_view = _response(views)
    facts = RunFacts(
        spans=[view.span for view in views],
        roles=_roles(views),
        model_outputs=[(v.span, v.output, v.read_through) for v in views if v.output is not None],
        tool_spans=[
            view.span
            for view in views
            if view.execution is not None and not view.execution.answer and _first_of_call(view)
        ],
        answer_tool_spans=[v.span for v in views if v.execution is not None and v.execution.answer],
        agent_spans=[view.span for view in views if view.agent],
        effects=side_effects,
        transport_spans=transport,
        response_span=response_view.span if response_view else None,
        cycles=cycles,
        not_understood=[
            (view.span, notes)
            for view in views
            if (notes := view.not_understood + (view.output.not_understood if view.output else []))
        ],
    )
    coverage, integrity = infer_coverage(facts, response, calls.calls)
    roots = [v.span for v in views if v.parent is None]
    root = roots[0] if roots else None
    starts = [view.span.start_ns for view in views if view.span.start_ns is not None]
    return AgentRun(
        run=run,
        service=root.resource.service_name if root is not None else None,
        started_at_ns=min(starts) if starts else None,
        response=response,
        tool_calls=calls.calls,
        side_effects=side_effects,
        coverage=coverage,
        integrity=integrity,
        conventions=_conventions(views),
    )


def _conventions(views: list[_View]) -> dict[str, ConventionUse]:
    """Spans each convention read, and did not understand, in the run (for ``inspect``).

    A family no convention reads has spans not understood and none read.
    """
    uses: dict[str, ConventionUse] = {}
    for view in views:
        for name in view.readers:
            uses.setdefault(name, ConventionUse()).spans += 1
        for name in view.unread_by:
            uses.setdefault(name, ConventionUse()).not_understood += 1
    return uses


# --- classification --------------------------------------------------------------------


def _link(spans: list[Span]) -> tuple[list[_View], list[Span]]:
    """Views in start order (parents before children), parents linked, cycles cut.

    A span exported twice (exporter retry) is read once. A parent cycle can only come from
    hostile or corrupt input; its links are cut so every later walk up terminates.
    """
    by_id: dict[str, _View] = {}
    for span in spans:
        seen = by_id.get(span.span_id)
        if seen is None or (seen.span.end_ns is None and span.end_ns is not None):
            by_id[span.span_id] = _classify(span)
    views = sorted(by_id.values(), key=_order)
    for view in views:
        parent_id = view.span.parent_span_id
        view.parent = by_id.get(parent_id) if parent_id else None
    cycles: list[Span] = []
    for view in views:
        path: list[_View] = []
        current: _View | None = view
        while current is not None and not current.mark:
            current.mark = 1
            path.append(current)
            parent = current.parent
            if parent is not None and parent.mark == 1:
                current.parent = None  # closes a cycle: cut it here
                cycles.append(current.span)
                break
            current = parent
        for item in path:
            item.mark = 2
    return views, cycles


def _classify(span: Span) -> _View:
    """Every convention's report on one span, merged into one view."""
    reports: list[SpanReport] = []
    owned = _BY_SCOPE.get(span.scope.name)
    for read in owned[0] if owned else _READERS:
        report = read(span)
        if report is not None:
            reports.append(report)
    view = _View(span)
    if not reports:
        family = agent_family(span)
        if family is not None:
            view.not_understood.append(f"a {family} span no convention recognizes")
            view.unread_by.append(family)
        return view
    outputs: list[ModelOutput] = []
    for report in reports:
        view.model = view.model or report.model
        view.agent = view.agent or report.agent
        if report.output is not None:
            outputs.append(report.output)
        # Each convention's report of the execution, merged into the first one found.
        view.execution = _merge_report(view.execution, report.execution)
        if view.answer is None:
            view.answer = report.answer
        view.effects.extend(report.effects)
        view.readers.append(report.convention)
        view.dispatched.extend(report.dispatched)
        if report.not_understood or (report.output is not None and report.output.not_understood):
            view.not_understood.extend(report.not_understood)
            view.unread_by.append(report.convention)
    if view.model:
        view.output = _merge_outputs(outputs)
        view.effects = []  # a model span's own HTTP attributes are its transport
    return view


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


def _order(view: _View) -> tuple[int, int]:
    """Start time; on a tie the longer span (the parent) first; unended spans count as longest."""
    span = view.span
    end = span.end_ns if span.end_ns is not None else 1 << 63
    return (span.start_ns if span.start_ns is not None else 0, -end)


def _resolve_in_model(view: _View) -> bool:
    """Memoized walk up the parents: is a model span above, with no tool run in between?

    Only a model span's own requests are its transport. A tool execution span is the
    agent's wherever it sits (the Vercel AI SDK's legacy spans nest tools inside the model
    step span), so it and everything under it are outside the model's transport.
    """
    chain: list[_View] = []
    current = view
    while True:
        if current.in_model is not None:
            answer = current.in_model
            break
        chain.append(current)
        if current.execution is not None:
            answer = False
            break
        parent = current.parent
        if parent is None or parent.model:
            answer = parent is not None
            break
        current = parent
    for item in chain:
        item.in_model = answer
    return answer


def _link_same_responses(views: list[_View]) -> None:
    """Model spans of one trace that report the same response id are layers of one call.

    A client SDK's own span beside an instrumentation's span for the same request (both
    children of the caller, so nesting does not show it) names the same response. Only
    spans of different instrumentation scopes that overlap in time are linked: a mock model
    that reuses one id does not fold separate calls into one.
    """
    by_response: dict[tuple[str, str], list[_View]] = {}
    for view in views:
        if view.model and view.output is not None and view.output.response_id:
            key = (view.span.trace_id, view.output.response_id)
            by_response.setdefault(key, []).append(view)
    for group in by_response.values():
        for position, view in enumerate(group):
            for other in group[position + 1 :]:
                if view.span.scope.name != other.span.scope.name and _overlap(view, other):
                    view.layers.append(other)
                    other.layers.append(view)


def _overlap(a: _View, b: _View) -> bool:
    start_a, start_b = a.span.start_ns or 0, b.span.start_ns or 0
    end_a = a.span.end_ns if a.span.end_ns is not None else 1 << 63
    end_b = b.span.end_ns if b.span.end_ns is not None else 1 << 63
    return start_a <= end_b and start_b <= end_a


def _mark_read_through(views: list[_View]) -> None:
    """An unreadable model span nested in (or around) a readable one is read through it.

    pydantic-ai's chat span around OpenInference's or OpenLLMetry's span for the same
    request, one capturing content and the other not, is one model request, read once. So
    is a sibling layer of the same call (``layers``); when no layer of it is readable, the
    first one stands for the call, with every layer's finish reasons.
    """
    for view in views:
        if not view.layers or view.output is None or view.read_through:
            continue
        group = [view, *view.layers]
        if any(layer.output is not None and layer.output.readable for layer in group):
            for layer in group:
                if layer.output is not None and not layer.output.readable:
                    layer.read_through = True
            continue
        for layer in view.layers:
            if layer.output is None:
                continue
            layer.read_through = True
            for reason in layer.output.finish_reasons:
                if reason not in view.output.finish_reasons:
                    view.output.finish_reasons.append(reason)
            view.output.provider = view.output.provider or layer.output.provider
    for view in views:
        if view.output is None or not view.output.readable:
            continue
        parent = view.parent
        while parent is not None:
            if parent.output is not None and not parent.output.readable:
                parent.read_through = True
            parent = parent.parent
    for view in views:
        if view.output is None or view.output.readable or view.read_through:
            continue
        parent = view.parent
        while parent is not None:
            if parent.output is not None and parent.output.readable:
                view.read_through = True
                break
            parent = parent.parent


def _roles(views: list[_View]) -> dict[str, SpanRole]:
    """Roles of the spans that have one; a span left out is generic (feeds every channel)."""
    roles: dict[str, SpanRole] = {}
    for view in views:
        if view.model or view.agent or view.execution or view.effects or view.in_model:
            roles[view.span.span_id] = SpanRole(
                view.model,
                view.agent,
                view.execution is not None,
                tuple(kind for kind, _, _ in view.effects),
                bool(view.in_model),
            )
    return roles


# --- tool calls --------------------------------------------------------------------------


class _CallMerger:
    """Merges reports into calls: by call id, else nested same-name spans, else name and order."""

    def __init__(self) -> None:
        self.calls: list[ToolCall] = []
        self._by_id: dict[str, int] = {}
        self._by_name: dict[str, list[int]] = {}
        self._requests: list[list[tuple[_View, str]]] = []  # (model span, convention)
        self._executed: list[bool] = []
        self._exec_views: list[_View | None] = []

    def add_request(self, report: ToolReport, view: _View) -> int:
        index = self._by_id.get(report.call_id) if report.call_id else None
        if index is None:
            index = self._related_request(report, view)
        if index is None:
            index = self._new(report)
        self._merge(index, report)
        self._requests[index].append((view, report.convention))
        return index

    def add_execution(self, report: ToolReport, view: _View) -> int | None:
        """The call this execution ran; None for a candidate no request waits for."""
        index = self._by_id.get(report.call_id) if report.call_id else None
        if index is None:
            index = self._enclosing_execution(report, view)
        if index is None:
            index = self._first_waiting(report, view)
        if index is None:
            if report.candidate:
                return None
            index = self._new(report)
        self._merge(index, report)
        if self._exec_views[index] is None:
            self._exec_views[index] = view
        call = self.calls[index]
        if report.executed:
            self._executed[index] = True
            if report.error:
                call.status = ToolCallStatus.ERROR
            elif call.status is ToolCallStatus.REQUESTED:
                call.status = ToolCallStatus.EXECUTED
        return index

    def fill_from_history(self, model_views: list[_View]) -> None:
        """Arguments/results missing on a call, from later model requests' message history."""
        wanted = {
            call.call_id: index
            for index, call in enumerate(self.calls)
            if call.call_id and (not call.arguments_captured or not call.result_captured)
        }
        for view in reversed(model_views):
            if not wanted:
                return
            owned = _BY_SCOPE.get(view.span.scope.name)
            for convention, reader in owned[1] if owned else _HISTORY_READERS:
                arguments, results = reader(view.span)
                for call_id, value in arguments.items():
                    index = wanted.get(call_id)
                    if index is not None and not self.calls[index].arguments_captured:
                        call = self.calls[index]
                        call.arguments = value
                        call.arguments_captured = True
                        self._seen(call, view.span, convention)
                for call_id, value in results.items():
                    index = wanted.get(call_id)
                    if index is not None and not self.calls[index].result_captured:
                        call = self.calls[index]
                        call.result, call.result_captured = value, True
                        if call.status is ToolCallStatus.REQUESTED:
                            call.status = ToolCallStatus.EXECUTED  # its result went back
                        self._seen(call, view.span, convention)
            wanted = {
                call_id: index
                for call_id, index in wanted.items()
                if not self.calls[index].arguments_captured or not self.calls[index].result_captured
            }

    def adopt_named_spans(self, views: list[_View]) -> None:
        """A plain span named exactly like a requested call with no execution span holds it.

        Hand-instrumented agents wrap each tool in a span named after the tool, with no
        convention attributes. Such a span is used only to attribute the side effects
        inside it; it is not an execution span for coverage and changes no status.
        """
        for view in views:
            span = view.span
            if view.model or view.agent or view.execution or view.effects or view.in_model:
                continue
            for index in self._by_name.get(span.name, ()):
                call = self.calls[index]
                if self._exec_views[index] is not None:
                    continue
                requests = self._requests[index]
                if requests and (requests[0][0].span.start_ns or 0) <= (span.start_ns or 0):
                    self._exec_views[index] = view
                    view.call_index = index
                    call.span_ids.append(span.span_id)
                    break

    def _new(self, report: ToolReport) -> int:
        self.calls.append(
            ToolCall(
                name=report.name,
                call_id=None,
                arguments=None,
                result=None,
                status=ToolCallStatus.REQUESTED,
                span_ids=[],
                trace_id=report.span.trace_id,
                conventions=[],
            )
        )
        self._requests.append([])
        self._executed.append(False)
        self._exec_views.append(None)
        index = len(self.calls) - 1
        self._by_name.setdefault(report.name, []).append(index)
        return index

    def _merge(self, index: int, report: ToolReport) -> None:
        call = self.calls[index]
        if report.call_id:
            if call.call_id is None:
                call.call_id = report.call_id
            self._by_id.setdefault(report.call_id, index)  # another layer's id: an alias
        call.name = call.name or report.name
        if report.arguments_captured and (
            not call.arguments_captured
            or (isinstance(call.arguments, str) and isinstance(report.arguments, dict))
        ):
            call.arguments, call.arguments_captured = report.arguments, True
        if report.result_captured and not call.result_captured:
            call.result, call.result_captured = report.result, True
        self._seen(call, report.span, report.convention)

    @staticmethod
    def _seen(call: ToolCall, span: Span, convention: str) -> None:
        if span.span_id not in call.span_ids:
            call.span_ids.append(span.span_id)
        if convention not in call.conventions:
            call.conventions.append(convention)

    def _related_request(self, report: ToolReport, view: _View) -> int | None:
        """The same request, already reported on this model request by another reader.

        The same request is read on the same span by two conventions (no id, or the same
        id), or on a model span nested directly in another: two layers of one model call
        (pydantic-ai's or an agent SDK's span around an instrumented client's span), which
        may even name the call by different ids (a response item id and a call id).
        """
        for index in self._by_name.get(report.name, ()):
            call_id = self.calls[index].call_id
            requests = self._requests[index]
            if any(
                other is view and convention == report.convention for other, convention in requests
            ):
                continue  # this convention on this span already reported that one
            if report.call_id and call_id is not None and call_id != report.call_id:
                if any(_layers(view, other) for other, _ in requests):
                    return index  # two ids of one call: the outer layer's is kept
                continue  # otherwise, two different ids are two calls
            if any(_related(view, other) for other, _ in requests):
                return index
        return None

    def _enclosing_execution(self, report: ToolReport, view: _View) -> int | None:
        """The same execution reported by an enclosing tool span (MCP inside execute_tool)."""
        parent = view.parent
        while parent is not None:
            index = parent.call_index
            if index is not None:
                call = self.calls[index]
                same_id = report.call_id is None or call.call_id in (None, report.call_id)
                return index if same_id and call.name == report.name else None
            parent = parent.parent
        return None

    def _first_waiting(self, report: ToolReport, view: _View) -> int | None:
        """The earliest request of this name not yet executed, asked for before this span;
        of several, the first asked for with the same arguments (parallel calls end in any
        order)."""
        start = view.span.start_ns or 0
        waiting: list[int] = []
        for index in self._by_name.get(report.name, ()):
            call = self.calls[index]
            if self._executed[index] or self._exec_views[index] is not None:
                continue
            if report.call_id and call.call_id not in (None, report.call_id):
                continue
            requests = self._requests[index]
            if requests and (requests[0][0].span.start_ns or 0) <= start:
                waiting.append(index)
        if report.arguments_captured:
            for index in waiting:
                call = self.calls[index]
                if call.arguments_captured and call.arguments == report.arguments:
                    return index
        return waiting[0] if waiting else None


def _related(a: _View, b: _View) -> bool:
    return a is b or b in a.layers or _is_ancestor(a, b) or _is_ancestor(b, a)


def _layers(a: _View, b: _View) -> bool:
    """Two model spans of one call: one inside the other with no tool or agent span between
    them, or siblings that report the same response."""
    if a is b or not (a.model and b.model):
        return False
    if b in a.layers:
        return True
    inner, outer = (a, b) if _is_ancestor(b, a) else (b, a)
    current = inner.parent
    while current is not None and current is not outer:
        if current.execution is not None or current.agent:
            return False
        current = current.parent
    return current is outer


def _is_ancestor(ancestor: _View, view: _View) -> bool:
    current = view.parent
    while current is not None:
        if current is ancestor:
            return True
        current = current.parent
    return False


# --- side effects ------------------------------------------------------------------------


def _side_effects(views: list[_View]) -> tuple[list[SideEffect], dict[str, list[Span]]]:
    """The agent's side effects, and (kind → spans) of the model's transport, left out."""
    found: list[SideEffect] = []
    transport: dict[str, list[Span]] = {}
    for view in views:
        if not view.effects:
            continue
        if view.in_model:
            for kind, _, _ in view.effects:
                transport.setdefault(kind, []).append(view.span)
            continue
        call_index = _enclosing_call(view)
        for kind, details, convention in view.effects:
            found.append(
                SideEffect(
                    kind=kind,
                    details=details,
                    span_id=view.span.span_id,
                    trace_id=view.span.trace_id,
                    tool_call_index=call_index,
                    convention=convention,
                )
            )
    return _fold_preparations(found), transport


def _fold_preparations(found: list[SideEffect]) -> list[SideEffect]:
    """A statement prepared, then run, is one query: the run stands for its preparation.

    A preparation runs nothing (``side_effects.PREPARE``); it is left out when a later run
    of the same statement, in the same trace and tool call, reports the execution. One
    kept otherwise: its statement may have run through a call that recorded no span.
    """
    waiting: dict[tuple[Any, ...], list[int]] = {}
    folded: set[int] = set()
    for index, effect in enumerate(found):  # in start order
        details = effect.details
        if effect.kind != DB or not details.get("statement"):
            continue
        key = (
            effect.trace_id,
            effect.tool_call_index,
            details.get("system"),
            details.get("namespace"),
            details["statement"],
        )
        if is_preparation(details):
            waiting.setdefault(key, []).append(index)
        elif waiting.get(key):
            folded.add(waiting[key].pop(0))
    return [effect for index, effect in enumerate(found) if index not in folded]


def _first_of_call(view: _View) -> bool:
    """Not a tool span inside another tool span reporting the same call (MCP in execute_tool)."""
    parent = view.parent
    while parent is not None:
        if parent.call_index is not None:
            return parent.call_index != view.call_index
        parent = parent.parent
    return True


def _enclosing_call(view: _View) -> int | None:
    current: _View | None = view
    while current is not None:
        if current.call_index is not None:
            return current.call_index
        current = current.parent
    return None


# --- response ----------------------------------------------------------------------------


def _response(views: list[_View]) -> tuple[Response, _View | None]:
    """The top agent span's answer, else the last model span's text; earlier texts kept."""
    texts: list[tuple[int, str, _View]] = []  # (end time, text, span view)
    spoken: list[_View] = []  # model views whose text is in ``texts``
    for view in views:
        output = view.output
        if output is None or not output.text_captured or not output.text:
            continue
        if any(
            _layers(view, other) and (other in view.layers or other.output.text == output.text)
            for other in spoken
        ):
            continue  # another layer of the same model call gave this text
        spoken.append(view)
        texts.append((_end(view), output.text, view))
    top_agents = [view for view in views if view.agent and not _has_agent_ancestor(view)]
    final: tuple[str, _View] | None = None
    for position, view in enumerate(top_agents):
        text = view.answer
        if text is None:
            continue
        if position == len(top_agents) - 1:
            final = (text, view)
        else:
            texts.append((_end(view), text, view))
    texts.sort(key=lambda item: item[0])
    if final is None:
        model_views = sorted((v for v in views if v.output is not None), key=_end)
        if model_views and model_views[-1].output is not None:
            # The last model call, read through whichever of its layers captured the text;
            # a turn that asked for tools is not the answer, even when nothing followed it.
            for last in (model_views[-1], *model_views[-1].layers):
                if last.output is not None and last.output.text_captured:
                    if not last.output.requests:
                        final = (last.output.text or "", last)
                    break
    earlier = [text for _, text, _ in texts]
    if final is not None:
        text, view = final
        if earlier and earlier[-1] == text:
            earlier.pop()
        elif text in earlier:
            earlier.remove(text)
        deduped = [t for i, t in enumerate(earlier) if i == 0 or earlier[i - 1] != t]
        return Response(text=text, earlier=deduped, span_id=view.span.span_id), view
    deduped = [t for i, t in enumerate(earlier) if i == 0 or earlier[i - 1] != t]
    return Response(text=None, earlier=deduped), None


def _has_agent_ancestor(view: _View) -> bool:
    current = view.parent
    while current is not None:
        if current.agent:
            return True
        current = current.parent
    return False


def _end(view: _View) -> int:
    span = view.span
    return span.end_ns or span.start_ns or 0

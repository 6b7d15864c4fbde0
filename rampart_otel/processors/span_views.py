"""Span views: each span of a run classified once, and how the views relate.

Each span is read by the conventions that own its scope, else by every general one (cheap
key probes; a prefix scan only on model spans), and their reports are merged into one view.
Views are linked to their parents (cycles cut); a request inside a model-inference span's
subtree, with no tool run in between, is that model's transport when it went to the model's
server (or, where the model span names none, it is the model span's own HTTP child); model
spans that are
layers of one model call (nested, or siblings reporting the same response) are linked, and
an unreadable layer is read through a readable one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from rampart_otel.conventions import (
    Convention,
    History,
    ModelOutput,
    SideEffectDetails,
    SpanReport,
    ToolReport,
    UserInput,
    agent_family,
)
from rampart_otel.conventions.registry import BY_SCOPE, GENERAL, SCOPE_DEPENDENT
from rampart_otel.conventions.side_effects import (
    TRANSPORT_KINDS,
    model_endpoint,
    request_endpoint,
    same_endpoint,
)
from rampart_otel.model import Scope, Span
from rampart_otel.processors.wording import cut_by_zipkin, scope_lost

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


_READERS, _HISTORY_READERS, _INPUT_READERS = _readers(GENERAL)
_BY_SCOPE = {scope: _readers(conventions) for scope, conventions in BY_SCOPE.items()}


@dataclass(slots=True, eq=False)
class SpanView:
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
    parent: SpanView | None = None
    in_model: bool | None = None  # the model's transport (a model span: nested in another)
    model_above: SpanView | None = None  # nearest model span above, no tool run between
    above_known: bool = False
    holds_work: bool = False  # a parent of a model or agent span
    caller: bool = False  # a caller's span a framework wrote a model call's attributes onto
    read_through: bool = False  # unreadable model span read through another layer of its call
    layers: list[SpanView] = field(default_factory=list)  # sibling spans of the same model call
    call_index: int | None = None  # tool call whose execution span is this one
    mark: int = 0  # cycle check: 1 on the path being walked, 2 done


def classify_run(spans: list[Span]) -> tuple[list[SpanView], list[Span]]:
    """Each span classified once, in start order, linked to its parent; and the spans whose
    parent link was cut to break a cycle.

    Model spans' transport is marked (``in_model``), and the layers of one model call are
    linked and read through each other.
    """
    views, cycles = _link(spans)
    for view in views:
        if view.parent is not None and (view.model or view.agent):
            view.parent.holds_work = True
    for view in views:
        if view.caller and view.holds_work:  # the call's own spans are under it
            view.model, view.output = False, None
    for view in views:
        _resolve_in_model(view)
    _link_same_responses(views)
    _mark_read_through(views)
    return views, cycles


def history_readers(span: Span) -> tuple[tuple[str, Callable[[Span], History]], ...]:
    """(convention, message-history reader) of the conventions that read ``span``."""
    owned = _BY_SCOPE.get(span.scope.name)
    return owned[1] if owned else _HISTORY_READERS


def input_readers(span: Span) -> tuple[Callable[[Span], UserInput | None], ...]:
    """The user-input readers of the conventions that read ``span``."""
    owned = _BY_SCOPE.get(span.scope.name)
    return owned[2] if owned else _INPUT_READERS


def _link(spans: list[Span]) -> tuple[list[SpanView], list[Span]]:
    """Views in start order (parents before children), parents linked, cycles cut.

    A span exported twice (exporter retry) is read once. A parent cycle can only come from
    hostile or corrupt input; its links are cut so every later walk up terminates.
    """
    by_id: dict[str, SpanView] = {}
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
        path: list[SpanView] = []
        current: SpanView | None = view
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


def _classify(span: Span) -> SpanView:
    """Every convention's report on one span, merged into one view.

    Attribute values the form's exporter may have cut short leave what the span says of
    a model or tool incomplete. A span whose trace form lost its scope is also read as
    each scope some reading depends on; when one of those readings differs from the plain
    one, the span is not understood: the form cannot tell which it is.
    """
    view = _read(span)
    if span.cut_keys and (_role(view) or view.not_understood):
        view.not_understood.append(cut_by_zipkin(span.cut_keys))
    if span.scope.lost_by:
        meaning = _meaning(view)
        for scope in SCOPE_DEPENDENT:
            other = _read(replace(span, scope=Scope(scope)))
            if not other.readers or _meaning(other) == meaning:
                continue
            if scope in BY_SCOPE and (
                # A framework owning its scope reads any span of it; without the scope, it
                # can only be the framework's span if no family recognised it and it is no
                # client span of a side effect.
                _role(view) or view.effects or not _role(other) or other.not_understood
            ):
                continue
            view.not_understood.append(scope_lost(span.scope.lost_by, other.readers[0]))
            break
    return view


def _role(view: SpanView) -> bool:
    return view.model or view.agent or view.execution is not None or view.output is not None


def _meaning(view: SpanView) -> tuple[Any, ...]:
    """What a view says the span did, without which span object or convention said it."""

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
        )

    out = view.output
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
        view.model,
        view.agent,
        output,
        tool(view.execution),
        tuple((kind, repr(details)) for kind, details, *_ in view.effects),
        view.answer,
        tuple(tool(t) for t in view.dispatched),
        tuple(view.not_understood),
    )


def _read(span: Span) -> SpanView:
    reports: list[SpanReport] = []
    owned = _BY_SCOPE.get(span.scope.name)
    for read in owned[0] if owned else _READERS:
        report = read(span)
        if report is not None:
            reports.append(report)
    view = SpanView(span)
    if not reports:
        family = agent_family(span)
        if family is not None:
            scope = span.scope.name[:40] or "unnamed"
            view.not_understood.append(f"a {family} span of scope {scope!r} no reader knows")
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
        view.caller = view.caller or report.caller
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


def _order(view: SpanView) -> tuple[int, int]:
    """Start time; on a tie the longer span (the parent) first; unended spans count as longest."""
    span = view.span
    end = span.end_ns if span.end_ns is not None else 1 << 63
    return (span.start_ns if span.start_ns is not None else 0, -end)


def _resolve_in_model(view: SpanView) -> bool:
    """Is this span the model's own transport (a model span: nested in another model span)?

    Only the request to the model is its transport: an HTTP or RPC span under a model span
    (with no tool run in between) that went to the server the model span names, or, where
    it names none, the model span's own child (or a request nested in one). A query, a
    message, a process, a request elsewhere is never the model's, nor is a child of a
    model span that holds other model or agent spans (a caller's span a framework wrote a
    model call's attributes onto). A tool execution span is the agent's wherever it sits
    (the Vercel AI SDK's legacy spans nest tools inside the model step span).
    """
    if view.in_model is not None:
        return view.in_model
    anchor = _model_above(view)
    view.in_model = anchor is not None and (view.model or _transport(view, anchor))
    return view.in_model


def _model_above(view: SpanView) -> SpanView | None:
    """Memoized walk up the parents: the nearest model span, with no tool run in between."""
    chain: list[SpanView] = []
    current = view
    while True:
        if current.above_known:
            found = current.model_above
            break
        chain.append(current)
        if current.execution is not None:
            found = None
            break
        parent = current.parent
        if parent is None or parent.model:
            found = parent
            break
        current = parent
    for item in chain:
        item.model_above, item.above_known = found, True
    return found


def _transport(view: SpanView, anchor: SpanView) -> bool:
    if not view.effects or any(kind not in TRANSPORT_KINDS for kind, *_ in view.effects):
        return False
    endpoints = []
    layer: SpanView | None = anchor
    while layer is not None and layer.model:  # the call's layers, innermost first
        endpoint = model_endpoint(layer.span)
        if endpoint is not None:
            endpoints.append(endpoint)
        layer = layer.parent
    if endpoints:
        for kind, details, *_ in view.effects:
            request = request_endpoint(kind, details, view.span)
            if request is None or not any(same_endpoint(request, e) for e in endpoints):
                return False
        return True
    parent = view.parent
    if parent is anchor:
        return not anchor.holds_work
    return parent is not None and bool(parent.effects) and _resolve_in_model(parent)


def _link_same_responses(views: list[SpanView]) -> None:
    """Model spans of one trace that report the same response id are layers of one call.

    A client SDK's own span beside an instrumentation's span for the same request (both
    children of the caller, so nesting does not show it) names the same response. Only
    spans of different instrumentation scopes that overlap in time are linked: a mock model
    that reuses one id does not fold separate calls into one.
    """
    by_response: dict[tuple[str, str], list[SpanView]] = {}
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


def _overlap(a: SpanView, b: SpanView) -> bool:
    start_a, start_b = a.span.start_ns or 0, b.span.start_ns or 0
    end_a = a.span.end_ns if a.span.end_ns is not None else 1 << 63
    end_b = b.span.end_ns if b.span.end_ns is not None else 1 << 63
    return start_a <= end_b and start_b <= end_a


def _mark_read_through(views: list[SpanView]) -> None:
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


def same_model_call(a: SpanView, b: SpanView) -> bool:
    """Two model spans of one call: one inside the other with no tool or agent span between
    them, or siblings that report the same response."""
    if a is b or not (a.model and b.model):
        return False
    if b in a.layers:
        return True
    inner, outer = (a, b) if is_ancestor(b, a) else (b, a)
    current = inner.parent
    while current is not None and current is not outer:
        if current.execution is not None or current.agent:
            return False
        current = current.parent
    return current is outer


def is_ancestor(ancestor: SpanView, view: SpanView) -> bool:
    current = view.parent
    while current is not None:
        if current is ancestor:
            return True
        current = current.parent
    return False

"""Side effects: what the agent did to the world, as its side-effect spans record it.

The side-effect spans outside every model-inference subtree, each attributed to the tool
call whose execution span encloses it; inside one (with no tool execution in between) they
are the model's transport (only a request to the model: ``span_views``), kept apart; so is
a request whose context was lost that went to a model API's inference path while exactly
one model span ran. A span whose context the framework lost (its trace
holds no agent, model or tool span) is attributed to the one executed call whose time
window holds it, in the same service (``window_call``). A prepared statement later
run is one query.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rampart_otel.conventions.side_effects import DB, HTTP, is_preparation, model_api_request
from rampart_otel.frozen import quick_init
from rampart_otel.model import SideEffect, Span
from rampart_otel.processors.span_views import ClassifiedRun, SpanRecord
from rampart_otel.processors.tool_calls import ToolCalls
from rampart_otel.processors.turns import CallWindow, Turns


@quick_init
@dataclass(frozen=True, slots=True)
class SideEffects:
    """What the side-effects job makes: the agent's side effects, (kind → spans) of the
    model's transport, left out, and the ids of the spans attributed to a call by its time
    window (their context was lost)."""

    effects: list[SideEffect]
    transport: dict[str, list[Span]]
    windowed: set[str]


def agent_side_effects(run: ClassifiedRun, calls: ToolCalls, turns: Turns) -> SideEffects:
    """The agent's side effects, each attributed to the call that made it."""
    windows = turns.windows
    found: list[SideEffect] = []
    transport: dict[str, list[Span]] = {}
    windowed: set[str] = set()
    lost = lost_context_traces(run, calls)
    models = [view for view in run.records if view.model] if lost else []
    for view in run.records:
        if not view.effects:
            continue
        if view.in_model or (view.span.trace_id in lost and _lost_transport(view, models)):
            for kind, *_ in view.effects:
                transport.setdefault(kind, []).append(view.span)
            continue
        call_index = calls.call_at.get(view.span.span_id)
        if call_index is None and windows and view.span.trace_id in lost:
            call_index = window_call(windows, view.span)
            if call_index is not None:
                windowed.add(view.span.span_id)
        for kind, details, convention, derived in view.effects:
            found.append(
                SideEffect(
                    kind=kind,
                    details=details,
                    span_id=view.span.span_id,
                    trace_id=view.span.trace_id,
                    tool_call_index=call_index,
                    convention=convention,
                    derived=derived,
                )
            )
    return SideEffects(_fold_preparations(found), transport, windowed)


def _lost_transport(view: SpanRecord, models: list[SpanRecord]) -> bool:
    """A request whose trace context was lost (OpenInference JS's LangChain spans leave the
    HTTP client's spans in traces of their own) is a model call's transport when it went to
    a model API's inference path while exactly one model span of the same service ran."""
    if any(kind != HTTP or not model_api_request(details) for kind, details, *_ in view.effects):
        return False
    start = view.span.start_ns
    if start is None:
        return False
    service = view.span.resource.service_name
    holding = [
        model
        for model in models
        if model.span.resource.service_name == service
        and (model.span.start_ns or 0) <= start
        and (model.span.end_ns is None or start <= model.span.end_ns)
    ]
    return len(holding) == 1


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


def lost_context_traces(run: ClassifiedRun, calls: ToolCalls) -> set[str]:
    """Traces holding no agent, model or tool span: pieces whose context was lost."""
    agentic = {
        view.span.trace_id
        for view in run.records
        if view.model or view.agent or view.span.span_id in calls.executing
    }
    return {span.trace_id for span in run.graph.spans} - agentic


def window_call(windows: list[CallWindow], span: Span) -> int | None:
    """The one call whose window holds ``span``'s start, in the same service; None when no
    window or several (parallel calls) hold it: a span inside two proves neither."""
    start = span.start_ns
    if start is None:
        return None
    service = span.resource.service_name
    found = {
        window.call_index
        for window in windows
        if window.service == service
        and window.start <= start
        and (window.end is None or start <= window.end)
    }
    return found.pop() if len(found) == 1 else None

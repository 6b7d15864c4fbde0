"""Tool scopes: each executed tool call as a place where its side effects could happen.

"No side effect happened" holds only where every place one could have happened was
watched; one tool's recorded request says nothing about another tool's. So each executed
tool call is judged on its own:

- its I/O spans are those under its execution span, or, where the framework lost the
  context (the I/O span's trace holds no agent, model or tool span), those of the same
  service whose start falls inside this call's time window and no other's
  (``call_windows``, ``window_call``);
- with at least one, the call's client was instrumented (``RECORDED``); with none and no
  declaration it is ``SILENT``: the client it used may not be;
- a call run in another process (an MCP server) is watched only where that process's
  spans are in the trace (``OUT_OF_PROCESS`` otherwise); a child process a tool spawned
  is recorded by its ``process_exec`` span, its own effects are not;
- a declaration closes the gap: ``rampart_otel.declare`` on the tool's span, the
  process-wide ``rampart.coverage`` resource attribute (for the kinds it names), a
  framework's built-in pseudo-tool, or the policy's ``tools:`` (an overlay:
  ``places.declared_by_policy``).

I/O outside tool calls (framework memory stores, telemetry, the model's transport) never
vouches for a tool call. The side-effect channels are capped by the scopes that leave
them unproven (``places.side_effect_decisions``); the words are ``wording``'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from rampart_otel.channels import DECLARATION_KEY, EVERY_SIDE_EFFECT, SIDE_EFFECT_PREFIX
from rampart_otel.conventions import mcp
from rampart_otel.conventions.pseudo_tools import pseudo_tool
from rampart_otel.conventions.side_effects import PROCESS
from rampart_otel.declare import TOOL_SIDE_EFFECTS, TOOL_SIDE_EFFECTS_ATTRIBUTE
from rampart_otel.model import (
    CHILD_PROCESS,
    MCP_SERVER,
    ScopeEvidence,
    ScopeState,
    SideEffect,
    Span,
    ToolCall,
    ToolCallStatus,
    ToolScope,
)
from rampart_otel.processors.span_views import ClassifiedRun
from rampart_otel.processors.tool_calls import ToolCalls


@dataclass(frozen=True, slots=True)
class CallWindow:
    """When one executed call ran, and in which service: where a lost I/O span may belong."""

    call_index: int
    service: str | None
    start: int
    end: int | None  # None: open (the run's last call, or an unended span)


def executed_calls(
    calls: list[ToolCall], tool_spans_recorded: bool, continued: AbstractSet[str] = frozenset()
) -> list[int]:
    """Indexes of the calls that ran, or may have run unseen.

    A call asked for and never executed ran nothing when the run records tool executions
    at all, unless the conversation went on after the model call that asked for it
    (``continued``: the ids of the model spans a later model call of their trace follows):
    a model is sent a result for every call it asked for before it answers again, so that
    call ran, or was answered, where no span of this trace shows (its tool traced in
    another service or trace, or not at all). Without any tool execution span, every call
    asked for may have run.
    """
    return [
        index
        for index, call in enumerate(calls)
        if call.status is not ToolCallStatus.REQUESTED
        or not tool_spans_recorded
        or (call.requested_in is not None and call.requested_in in continued)
    ]


def continued_turns(run: ClassifiedRun) -> frozenset[str]:
    """The ids of the model spans that another model span of their trace starts after (the
    conversation went on after them); a model span nested in one is the same call."""
    models = [view.span for view in run.records if view.model]
    last_start: dict[str, int] = {}  # per trace: the latest a model span starts
    for span in models:
        if span.start_ns is not None:
            last_start[span.trace_id] = max(span.start_ns, last_start.get(span.trace_id, 0))
    found: set[str] = set()
    for span in models:
        done = span.end_ns if span.end_ns is not None else span.start_ns
        latest = last_start.get(span.trace_id)
        if done is not None and latest is not None and latest >= done:
            found.add(span.span_id)
    return frozenset(found)


def call_windows(
    run: ClassifiedRun, calls: list[ToolCall], executed: list[int]
) -> list[CallWindow]:
    """Each executed call's time window: its execution span's, else from the end of the
    model call that asked for it to the start of the next model call of the run."""
    by_id = run.record
    models = sorted(
        (view.span for view in run.records if view.model and view.output is not None),
        key=lambda span: span.start_ns or 0,
    )
    windows: list[CallWindow] = []
    for index in executed:
        call = calls[index]
        executed_in = by_id(call.executed_in) if call.executed_in else None
        if executed_in is not None:
            span = executed_in.span
            if span.start_ns is not None:
                windows.append(
                    CallWindow(index, span.resource.service_name, span.start_ns, span.end_ns)
                )
            continue
        requested = by_id(call.requested_in) if call.requested_in else None
        if requested is None:
            continue
        asked = requested.span
        begin = asked.end_ns if asked.end_ns is not None else asked.start_ns
        if begin is None:
            continue
        following = (span.start_ns for span in models if (span.start_ns or 0) >= begin)
        windows.append(CallWindow(index, asked.resource.service_name, begin, next(following, None)))
    return windows


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


def lost_context_traces(run: ClassifiedRun, calls: ToolCalls) -> set[str]:
    """Traces holding no agent, model or tool span: pieces whose context was lost."""
    agentic = {
        view.span.trace_id
        for view in run.records
        if view.model or view.agent or calls.executes(view)
    }
    return {span.trace_id for span in run.graph.spans} - agentic


def resource_declarations(spans: Iterable[Span]) -> list[tuple[str, str | None]]:
    """(channel key, service) each process declared in its resource (``rampart.coverage``:
    a list, or a comma-separated text), once per resource."""
    found: list[tuple[str, str | None]] = []
    seen: set[int] = set()
    for span in spans:
        resource = span.resource
        if id(resource) in seen:
            continue
        seen.add(id(resource))
        value = resource.attributes.get(DECLARATION_KEY)
        if value is None:
            continue
        keys = value if isinstance(value, (list, tuple)) else str(value).split(",")
        service = resource.service_name
        found.extend((str(key).strip(), service) for key in keys if str(key).strip())
    return found


def declared_kinds(spans: Iterable[Span]) -> dict[str | None, set[str]]:
    """Service → side-effect kinds its process declared (``rampart.coverage``), ``*`` for all."""
    found: dict[str | None, set[str]] = {}
    for key, service in resource_declarations(spans):
        kinds = found.setdefault(service, set())
        if key == EVERY_SIDE_EFFECT:
            kinds.add("*")
        elif key.startswith(SIDE_EFFECT_PREFIX):
            kinds.add(key[len(SIDE_EFFECT_PREFIX) :])
    return found


def tool_scopes(
    run: ClassifiedRun,
    tool_calls: ToolCalls,
    effects: list[SideEffect],
    executed: list[int],
    windowed: set[str],
) -> list[ToolScope]:
    """Each executed call's scope; ``windowed``: span ids of effects attributed by window."""
    calls = tool_calls.calls
    by_id = run.record
    io: dict[int, list[SideEffect]] = {}
    for effect in effects:
        if effect.tool_call_index is not None:
            io.setdefault(effect.tool_call_index, []).append(effect)
    remote_seen, span_declared, remote_calls = _inside_calls(run, tool_calls)
    process_kinds = declared_kinds(run.graph.spans)
    scopes: list[ToolScope] = []
    for index in executed:
        call = calls[index]
        execution = by_id(call.executed_in) if call.executed_in else None
        anchor = execution or (by_id(call.requested_in) if call.requested_in else None)
        service = anchor.span.resource.service_name if anchor is not None else None
        found = io.get(index, [])
        scope = ToolScope(
            call_index=index,
            tool=call.name,
            state=ScopeState.RECORDED,
            io_span_ids=tuple(dict.fromkeys(effect.span_id for effect in found)),
            evidence=(
                ScopeEvidence.TIME_WINDOW
                if found and all(effect.span_id in windowed for effect in found)
                else ScopeEvidence.SUBTREE
            ),
            span_id=execution.span.span_id if execution is not None else None,
        )
        declared = span_declared.get(index)
        runs_remote = index in remote_calls
        children = [e for e in found if e.kind == PROCESS]
        if declared is not None:
            scope = dataclasses.replace(
                scope, state=ScopeState.DECLARED, evidence=ScopeEvidence.SPAN
            )
        elif runs_remote and index not in remote_seen:
            scope = dataclasses.replace(
                scope, state=ScopeState.OUT_OF_PROCESS, remote=MCP_SERVER, evidence=None
            )
        elif children and not any(e.span_id in remote_seen.get(index, ()) for e in children):
            # The child process is recorded by its process_exec span; what it did is not.
            scope = dataclasses.replace(
                scope,
                state=ScopeState.OUT_OF_PROCESS,
                remote=CHILD_PROCESS,
                exempt_kinds=(PROCESS,),
            )
        elif not found:
            if pseudo_tool(call.name, execution.span if execution is not None else None):
                scope = dataclasses.replace(
                    scope, state=ScopeState.DECLARED, evidence=ScopeEvidence.PSEUDO_TOOL
                )
            else:
                kinds = tuple(sorted(process_kinds.get(service, ())))
                scope = dataclasses.replace(
                    scope, state=ScopeState.SILENT, evidence=None, exempt_kinds=kinds
                )
        scopes.append(scope)
    return scopes


def _inside_calls(
    run: ClassifiedRun, calls: ToolCalls
) -> tuple[dict[int, set[str]], dict[int, str], set[int]]:
    """Per call: the spans under it recorded by another process (its server's or child's:
    the ids of their parents inside the call), a ``rampart_otel.declare`` value set on its
    execution span or a span under it; and the calls an MCP client sent to a server."""
    other_process: dict[int, set[str]] = {}
    declared: dict[int, str] = {}
    remote: set[int] = set()
    for view in run.records:
        index = calls.call_index(view)
        if index is None:
            continue
        if view.span.span_id in calls.call_of and mcp.runs_elsewhere(view.span):
            remote.add(index)
        value = view.span.attributes.get(TOOL_SIDE_EFFECTS_ATTRIBUTE)
        if isinstance(value, str) and value in TOOL_SIDE_EFFECTS:
            declared.setdefault(index, value)
        parent = run.graph.parent(view.span.span_id)
        if parent is not None and parent.resource.attributes != view.span.resource.attributes:
            other_process.setdefault(index, set()).add(parent.span_id)
    return other_process, declared, remote

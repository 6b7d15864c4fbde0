"""Turns: which calls ran, and when: the job between merging the calls and finding their
side effects.

A call asked for ran when its status says so, when the run records no tool execution at
all, or when the conversation went on after the model call that asked for it
(``continued_turns``: a model is sent a result for every call it asked for before it
answers again). Each executed call has a time window (its execution span's, else from the
end of the model call that asked for it to the start of the next model call): where an I/O
span whose trace context was lost may belong (``side_effects``: one window, or none).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from rampart_otel.frozen import quick_init
from rampart_otel.model import ToolCall, ToolCallStatus
from rampart_otel.processors.span_views import ClassifiedRun
from rampart_otel.processors.tool_calls import ToolCalls


@quick_init
@dataclass(frozen=True, slots=True)
class Turns:
    """What the turns job makes: the model spans a later model call of their trace follows,
    the indexes of the calls that ran (or may have run unseen), and their windows."""

    continued: frozenset[str]
    executed: list[int]
    windows: list[CallWindow]


def read_turns(run: ClassifiedRun, calls: ToolCalls, tool_spans_recorded: bool) -> Turns:
    """The run's turns: which calls ran, and each one's time window."""
    continued = continued_turns(run)
    executed = executed_calls(calls.calls, tool_spans_recorded, continued)
    return Turns(continued, executed, call_windows(run, calls.calls, executed))


@quick_init
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
    starts = sorted(
        view.span.start_ns or 0 for view in run.records if view.model and view.output is not None
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
        after = bisect_left(starts, begin)  # the next model call: found, never scanned for
        following = starts[after] if after < len(starts) else None
        windows.append(CallWindow(index, asked.resource.service_name, begin, following))
    return windows

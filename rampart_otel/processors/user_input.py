"""The user's input: what the user (the agent's caller) sent into the run.

Each model span's input is read by the conventions that read the span (its user-role
messages only: system and developer prompts and tool results are not the user's input),
and so is an agent span's record of its caller's input. A conversation repeats its earlier
messages in every later model call, so messages are kept once, by text, in the order the
spans started. What each span showed is kept for coverage (``coverage._input``).
"""

from __future__ import annotations

from collections.abc import Callable

from rampart_otel.conventions import UserInput
from rampart_otel.model import InputMessage, Span
from rampart_otel.processors.response import model_layers
from rampart_otel.processors.span_views import ClassifiedRun, SpanRecord
from rampart_otel.processors.tool_calls import ToolCalls

SpanInput = tuple[Span, UserInput | None]  # None: the span records no input messages


def collect_user_input(
    run: ClassifiedRun, tool_calls: ToolCalls
) -> tuple[list[InputMessage], list[SpanInput], list[tuple[Span, UserInput]]]:
    """The run's user messages; each model call's input reading (one per call: a layer of
    a call whose input another layer read is left out); the agent spans' caller inputs.
    ``tool_calls``: the calls job's output, for each model span's other spans of its call."""
    messages: list[InputMessage] = []
    seen: set[str] = set()
    models: list[tuple[SpanRecord, UserInput | None]] = []
    agents: list[tuple[Span, UserInput]] = []
    for view in run.records:
        if not (view.model or view.agent):
            continue
        found = read_span(view.span, view.reading.input_readers)
        if view.model:
            models.append((view, found))
        elif found is not None:
            agents.append((view.span, found))
        if found is None:
            continue
        for text in found.texts:
            if text not in seen:
                seen.add(text)
                messages.append(InputMessage(text, view.span.span_id, view.span.trace_id))
    # Model spans another span of their model call, under them, was read whole on; and
    # whether one above each model span in its call was (both linear in the spans, however
    # deep a call is nested).
    found_on = {view.span.span_id: found for view, found in models}
    whole = {span_id for span_id, found in found_on.items() if fully_read(found)}
    model_above, call_top = tool_calls.model_above, tool_calls.call_top
    read: set[str] = set()
    marked: set[str] = set()  # spans whose model spans above them in the call are in read
    for view, _ in models:
        span_id = view.span.span_id
        if span_id not in whole:
            continue
        read.update(model_layers(run, view))
        top = call_top.get(span_id, span_id)
        while span_id != top:
            span_id = model_above[span_id]
            if span_id in marked:
                break  # and so is every span of the call above it
            marked.add(span_id)
    read |= marked
    whole_above: dict[str, bool] = {}  # a span, or one above it in the call, read whole
    calls = [
        (view.span, found)
        for view, found in models
        if view.span.span_id in whole
        or not (
            view.span.span_id in read
            or any(layer in whole for layer in model_layers(run, view))
            or _read_above(view.span.span_id, tool_calls, whole, whole_above)
        )
    ]
    withheld = next((span for span, found in calls if found and found.withheld), None)
    if withheld is None and not messages:
        withheld = next((span for span, found in agents if found.withheld), None)
    if withheld is not None:  # one entry: the trace holds user messages it does not show
        messages.append(InputMessage(None, withheld.span_id, withheld.trace_id))
    return messages, calls, agents


def _read_above(
    span_id: str, tool_calls: ToolCalls, whole: set[str], known: dict[str, bool]
) -> bool:
    """Whether a model span above ``span_id`` in its model call had its input read whole;
    what each span passed on the way learns is kept in ``known``, so no span of a call is
    walked past twice."""
    top = tool_calls.call_top.get(span_id, span_id)
    passed: list[str] = []
    found = False
    while span_id != top:
        span_id = tool_calls.model_above[span_id]
        seen = known.get(span_id)
        if seen is not None:
            found = seen
            break
        passed.append(span_id)
        if span_id in whole:
            found = True
            break
    for above in reversed(passed):
        found = found or above in whole
        known[above] = found
    return found


def read_span(
    span: Span, readers: tuple[Callable[[Span], UserInput | None], ...]
) -> UserInput | None:
    """Every reading convention's account of one span's user input (``readers``: those of
    the conventions that read the span, ``SpanReading.input_readers``), merged."""
    merged: UserInput | None = None
    for reader in readers:
        found = reader(span)
        if found is None:
            continue
        if merged is None:
            merged = found
            continue
        merged.texts.extend(found.texts)
        merged.withheld.extend(found.withheld)
        merged.not_understood.extend(found.not_understood)
    return merged


def fully_read(found: UserInput | None) -> bool:
    """Recorded, with every user message's content, in a form read."""
    return found is not None and not found.withheld and not found.not_understood

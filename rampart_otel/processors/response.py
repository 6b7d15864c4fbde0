"""The response: the agent's final answer, and the assistant texts that came before it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from rampart_otel.conventions.notes import ANSWER_KEYS, missing_content
from rampart_otel.model import Response
from rampart_otel.processors.span_views import ClassifiedRun, SpanRecord
from rampart_otel.processors.tool_calls import ToolCalls


class Answer(NamedTuple):
    """The response job's output: the response, the span it was read from, and, when no
    answer was read, whether the spans that would hold it show no trace of content missing
    (no redaction marker, nothing cut or unread: the answer was not recorded at all)."""

    response: Response
    view: SpanRecord | None
    unmarked: bool = False


def final_response(run: ClassifiedRun, calls: ToolCalls) -> Answer:
    """The top agent span's answer, else the last model span's text; earlier texts kept.

    A model span's text is kept once per model call: not when a layer of its call, or a
    model span above it in its call (``ToolCalls.model_above``), gave it."""
    views = run.records
    texts: list[tuple[int, str, SpanRecord]] = []  # (end time, text, span record)
    spoken: dict[str, str] = {}  # model span id → its text, in ``texts``
    for view in views:
        output = view.output
        if output is None or not output.text_captured or not output.text:
            continue
        span_id = view.span.span_id
        if view.model and any(
            (said := spoken.get(other)) is not None
            and (other in view.layers or said == output.text)
            for other in fellows_above(run, view, calls)
        ):
            continue  # another layer of the same model call gave this text
        spoken[span_id] = output.text
        texts.append((_end(view), output.text, view))
    top_agents = [view for view in views if view.agent and not view.under_agent]
    final: tuple[str, SpanRecord] | None = None
    for position, view in enumerate(top_agents):
        text = view.answer
        if text is None:
            continue
        if position == len(top_agents) - 1:
            final = (text, view)
        else:
            texts.append((_end(view), text, view))
    texts.sort(key=lambda item: item[0])
    last_call: SpanRecord | None = None
    if final is None:
        model_views = sorted((v for v in views if v.output is not None), key=_end)
        if model_views and model_views[-1].output is not None:
            # The last model call, read through whichever of its layers captured the text;
            # a turn that asked for tools is not the answer, even when nothing followed it.
            last_call = model_views[-1]
            layers = (run.record(span_id) for span_id in last_call.layers)
            for last in (last_call, *filter(None, layers)):
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
        return Answer(Response(text=text, earlier=deduped, span_id=view.span.span_id), view)
    deduped = [t for i, t in enumerate(earlier) if i == 0 or earlier[i - 1] != t]
    # No answer: the last model call asked for tools, and nothing shows its answer hidden?
    unmarked = (
        last_call is not None
        and last_call.output is not None
        and bool(last_call.output.requests)
        and missing_content([last_call.span, *(v.span for v in views if v.agent)], ANSWER_KEYS)
        is None
    )
    return Answer(Response(text=None, earlier=deduped), None, unmarked)


def fellows_above(run: ClassifiedRun, view: SpanRecord, calls: ToolCalls) -> Iterator[str]:
    """The other model spans of a model span's call but those under it: its layers, and the
    model spans above it up to its call's highest one."""
    for layer in view.layers:
        found = run.record(layer)
        if found is not None and found.model:
            yield layer
    span_id = view.span.span_id
    top = calls.call_top.get(span_id, span_id)
    while span_id != top:
        span_id = calls.model_above[span_id]
        yield span_id


def _end(view: SpanRecord) -> int:
    span = view.span
    return span.end_ns or span.start_ns or 0

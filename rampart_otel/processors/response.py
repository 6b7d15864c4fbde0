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
    texts = said_texts(run, calls)
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


def said_texts(run: ClassifiedRun, calls: ToolCalls) -> list[tuple[int, str, SpanRecord]]:
    """The texts the run's spans said, each with its end time and span, in time order: a
    model span's text once per model call (not when a model layer of its call, or a model
    span above it in its call (``ToolCalls.model_above``), gave it)."""
    texts: list[tuple[int, str, SpanRecord]] = []  # (end time, text, span record)
    spoken: dict[str, str] = {}  # model span id → its text, in ``texts``
    said = _SaidAbove(len(run.records))
    for view in run.records:
        output = view.output
        if output is None or not output.text_captured or not output.text:
            continue
        span_id = view.span.span_id
        if view.model:
            if any(layer in spoken for layer in model_layers(run, view)):
                continue  # another layer of the same model call gave a text
            top_id = calls.call_top.get(span_id, span_id)
            top = run.record(top_id) if top_id != span_id else None
            if top is not None and (
                spoken.get(top_id) == output.text
                or said.count(output.text, view.tour) > said.count(output.text, top.tour)
            ):
                continue  # a model span above it in its call gave this text
            said.add(output.text, view.tour)
        spoken[span_id] = output.text
        texts.append((_end(view), output.text, view))
    return texts


def model_layers(run: ClassifiedRun, view: SpanRecord) -> Iterator[str]:
    """The model spans among a model span's layers (the other spans of its model call
    beside it)."""
    for layer in view.layers:
        found = run.record(layer)
        if found is not None and found.model:
            yield layer


class _SaidAbove:
    """The texts model spans kept so far said, each over the walk numbers of the spans
    under it (``SpanRecord.tour``), in a Fenwick tree per text: how many spans that said a
    text are above a span is one prefix sum, so whether one said it between a span and its
    call's highest model span is two, whatever the depth (a walk up from every span of a
    call nested n deep is n²/2 steps)."""

    __slots__ = ("_size", "_trees")

    def __init__(self, spans: int) -> None:
        self._size = spans + 2
        self._trees: dict[str, dict[int, int]] = {}

    def add(self, text: str, tour: tuple[int, int]) -> None:
        """A span at ``tour`` said ``text``: every span in its subtree is under it."""
        tree = self._trees.setdefault(text, {})
        self._step(tree, tour[0], 1)
        self._step(tree, tour[1] + 1, -1)

    def count(self, text: str, tour: tuple[int, int]) -> int:
        """How many spans that said ``text`` hold the span at ``tour`` (it included)."""
        tree = self._trees.get(text)
        total, at = 0, tour[0]
        while tree and at > 0:
            total += tree.get(at, 0)
            at -= at & -at
        return total

    def _step(self, tree: dict[int, int], at: int, step: int) -> None:
        while at <= self._size:
            tree[at] = tree.get(at, 0) + step
            at += at & -at


def _end(view: SpanRecord) -> int:
    span = view.span
    return span.end_ns or span.start_ns or 0

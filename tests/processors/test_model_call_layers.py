"""A model call's layers: the response keeps one text per model call and user input one
reading, deciding from the calls job's links (``ToolCalls.model_above``, ``call_top``) in
time linear in the spans. Checked against the rule as first written: for each model span,
walk up the graph to its call's highest model span, comparing with each model span passed
(quadratic in a call's depth, and the reference here)."""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st
from span_factory import mk

from rampart_otel.model import Run, Span
from rampart_otel.processors.response import said_texts
from rampart_otel.processors.span_views import ClassifiedRun, SpanRecord, classified, inside
from rampart_otel.processors.tool_calls import ToolCalls, merge_tool_calls
from rampart_otel.processors.user_input import collect_user_input, fully_read, read_span

KINDS = ("model", "model", "model", "tool", "agent", "plain")
INPUTS = (
    None,
    '[{"role": "user", "parts": [{"type": "text", "content": "question"}]}]',
    '[{"role": "user", "parts": [{"type": "text", "content": "another"}]}]',
    '[{"role": "user", "parts": [{"type": "blob", "modality": "image"}]}]',
)


def _span(index: int, kind: str, parent: str | None, start: int, text: str, said: int) -> Span:
    if kind == "tool":
        attributes: dict[str, object] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "fetch",
            "gen_ai.tool.call.id": f"call_{index}",
        }
    elif kind == "agent":
        attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bot"}
    elif kind == "plain":
        attributes = {}
    else:
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
        if said:
            attributes["gen_ai.output.messages"] = (
                f'[{{"role": "assistant", "parts": [{{"type": "text", "content": "{text}"}}]}}]'
            )
        asked = INPUTS[index % len(INPUTS)]
        if asked is not None:
            attributes["gen_ai.input.messages"] = asked
    return mk(f"s{index}", f"{kind} {index}", attributes, parent=parent, start=start, end=10_000)


@st.composite
def runs(draw: st.DrawFn) -> Run:
    size = draw(st.integers(2, 14))
    spans = []
    for index in range(size):
        parent = draw(st.one_of(st.none(), st.integers(0, index - 1))) if index else None
        spans.append(
            _span(
                index,
                draw(st.sampled_from(KINDS)),
                f"s{parent}" if parent is not None else None,
                draw(st.integers(0, 3)),  # clocks may disagree: a child may start first
                draw(st.sampled_from(("yes", "no"))),
                draw(st.integers(0, 2)),
            )
        )
    return Run("layers", ["layers"], spans)


def _fellows(run: ClassifiedRun, view: SpanRecord, calls: ToolCalls) -> Iterator[str]:
    """The reference: a model span's model layers, then every model span passed walking up
    the graph until above its call's highest model span."""
    if not view.model:
        return
    for layer in view.layers:
        found = run.record(layer)
        if found is not None and found.model:
            yield layer
    top = run.record(calls.call_top.get(view.span.span_id, view.span.span_id))
    assert top is not None
    for above in run.ancestors(view):
        if inside(top.tour, above.tour):
            return
        if above.model:
            yield above.span.span_id


def _texts(run: ClassifiedRun, calls: ToolCalls) -> list[str]:
    spoken: dict[str, str] = {}
    texts: list[str] = []
    for view in run.records:
        output = view.output
        if output is None or not output.text_captured or not output.text:
            continue
        if any(
            (said := spoken.get(other)) is not None
            and (other in view.layers or said == output.text)
            for other in _fellows(run, view, calls)
        ):
            continue
        spoken[view.span.span_id] = output.text
        texts.append(view.span.span_id)
    return texts


def _inputs(run: ClassifiedRun, calls: ToolCalls) -> list[str]:
    models = [
        (view, read_span(view.span, view.reading.input_readers))
        for view in run.records
        if view.model
    ]
    found_on = {view.span.span_id: found for view, found in models}
    read: set[str] = set()
    for view, found in models:
        if fully_read(found):
            read.update(_fellows(run, view, calls))
    return [
        view.span.span_id
        for view, found in models
        if fully_read(found)
        or not (
            view.span.span_id in read
            or any(fully_read(found_on.get(other)) for other in _fellows(run, view, calls))
        )
    ]


@settings(max_examples=400, deadline=None)
@given(runs())
def test_one_text_and_one_input_per_model_call_as_the_walk_up_finds(run: Run) -> None:
    classes = classified(run)
    calls = merge_tool_calls(classes)
    kept = [span.span_id for span, _ in collect_user_input(classes, calls)[1]]
    assert kept == _inputs(classes, calls)
    assert [view.span.span_id for _, _, view in said_texts(classes, calls)] == _texts(
        classes, calls
    )


def _walked_up(run: ClassifiedRun, calls: ToolCalls) -> tuple[dict[str, str], dict[str, str]]:
    """The reference for ``model_above`` and ``call_top``: from each model span, walk up to
    the first model span; an agent or a span that ran a call on the way ends the call."""
    above_of: dict[str, str] = {}
    for view in run.records:
        if not view.model:
            continue
        for up in run.ancestors(view):
            if up.model:
                above_of[view.span.span_id] = up.span.span_id
                break
            if up.agent or up.span.span_id in calls.executing:
                break

    def top(span_id: str) -> str:
        above = above_of.get(span_id)
        if above is None:
            return span_id
        outer = run.record(above)
        assert outer is not None
        return above if outer.agent or above in calls.executing else top(above)

    return above_of, {
        view.span.span_id: top(view.span.span_id) for view in run.records if view.model
    }


@settings(max_examples=400, deadline=None)
@given(runs())
def test_each_model_spans_call_is_the_walk_ups(run: Run) -> None:
    classes = classified(run)
    calls = merge_tool_calls(classes)
    above_of, top = _walked_up(classes, calls)
    assert dict(calls.model_above) == above_of
    assert dict(calls.call_top) == top

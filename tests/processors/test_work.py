"""Linear in the work, always (issue 46): doubling a rule's input at most about doubles the
work it does, counted in lines run (``work_count``), never timed.

Each rule fixed is guarded on the input shape that made it quadratic: one long agent run
(thousands of tool calls, with and without call ids, content, or a run per call), and for
stitching, many fragments, many processes, replicated runs at one time, and a long loop of
one trace per model call.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

import pytest
from span_factory import mk
from work_count import PER_DOUBLING, growth, shape_spans

from rampart_otel import run_graph
from rampart_otel.model import Run, Span
from rampart_otel.normalize import normalize
from rampart_otel.processors import (
    coverage,
    response,
    scopes,
    span_views,
    stitch,
    tool_calls,
    turns,
    user_input,
)
from rampart_otel.processors.span_views import classified
from rampart_otel.processors.stitch import assemble
from rampart_otel.processors.tool_calls import merge_tool_calls

CONTENT = (
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
)


def long_run(size: int, variant: str = "") -> Run:
    """``bench_scale``'s one long run (chat → tool → GET per step) at ``size`` spans:
    ``no-ids`` (tool spans without call ids), ``no-content`` (no messages, arguments or
    results), ``unrun`` (every other tool span missing), ``per-turn`` (every call id
    ``call_0``), ``plain`` (each tool span a plain
    span named like the tool, as hand-instrumented agents wrap them)."""
    spans = shape_spans("long-run", size)
    if variant == "no-ids":
        spans = [_without(span, ("gen_ai.tool.call.id",)) for span in spans]
    elif variant == "no-content":
        spans = [_without(span, CONTENT) for span in spans]
    elif variant == "unrun":
        tools = [span.span_id for span in spans if span.name.startswith("execute_tool")]
        gone = set(tools[1::2])
        spans = [s for s in spans if s.span_id not in gone and s.parent_span_id not in gone]
    elif variant == "per-turn":
        spans = [_per_turn(span) for span in spans]
    elif variant == "plain":
        spans = [
            dataclasses.replace(span, name=span.name.split()[1], attributes={})
            if span.name.startswith("execute_tool")
            else span
            for span in spans
        ]
    run = Run("long", ["long"], spans)
    classified(run)  # the input, read: only the rule's own work is counted
    return run


def _per_turn(span: Span) -> Span:
    """The span with every call id ``call_0``, as providers that number calls per turn."""
    attributes = {
        key: re.sub(r"call_\d+", "call_0", value) if isinstance(value, str) else value
        for key, value in span.attributes.items()
    }
    return dataclasses.replace(span, attributes=attributes)


def _without(span: Span, keys: tuple[str, ...]) -> Span:
    return dataclasses.replace(
        span, attributes={k: v for k, v in span.attributes.items() if k not in keys}
    )


@pytest.mark.parametrize("variant", ["", "no-ids", "no-content", "unrun", "per-turn", "plain"])
def test_merging_a_long_runs_tool_calls_is_linear(variant: str) -> None:
    """Each request looked up by (tool, span), each execution's waiting call by tool (and
    arguments), history and named spans by index: never every earlier call of the tool."""

    def merge(size: int) -> Callable[[], object]:
        run = classified(long_run(size, variant))
        return lambda: merge_tool_calls(run)

    assert growth(merge, 600, [tool_calls, span_views, run_graph]) <= PER_DOUBLING


def stitching(shape: str) -> Callable[[int], Callable[[], object]]:
    def at(size: int) -> Callable[[], object]:
        spans = shape_spans(shape, size)
        return lambda: list(assemble([spans[i : i + 512] for i in range(0, len(spans), 512)]))

    return at


@pytest.mark.parametrize(
    ("shape", "size"), [("fragments", 1500), ("processes", 1500), ("small-runs", 2000)]
)
def test_stitching_is_linear(shape: str, size: int) -> None:
    """Fragments found by process and time, groups keeping their bounds and call ids as they
    grow, expiry looking only at groups that changed: never every group per arrival, even
    when every copy of a replicated run holds every fragment (``small-runs``)."""
    assert growth(stitching(shape), size, [stitch]) <= PER_DOUBLING


def plain_loop(size: int) -> list[Span]:
    """One process's plain SDK tool loop: a trace per model call, each one's history holding
    the call the one before asked for (OpenInference LLM spans)."""
    spans = []
    for step in range(size):
        prefix = "llm.output_messages.0.message.tool_calls.0.tool_call."
        attributes = {
            "openinference.span.kind": "LLM",
            prefix + "id": f"c{step}",
            prefix + "function.name": "fetch_weather",
            prefix + "function.arguments": '{"city": "Paris"}',
        }
        if step:
            history = "llm.input_messages."
            attributes |= {
                history + "0.message.role": "assistant",
                history + "0.message.tool_calls.0.tool_call.id": f"c{step - 1}",
                history + "0.message.tool_calls.0.tool_call.function.name": "fetch_weather",
                history + "1.message.role": "tool",
                history + "1.message.tool_call_id": f"c{step - 1}",
                history + "1.message.content": "18C",
            }
        trace = f"{step + 1:032x}"
        spans.append(
            mk(f"{step + 1:016x}", "ChatCompletion", attributes, trace_id=trace, start=step * 1000)
        )
    return spans


def test_a_long_loop_of_continuations_is_linear() -> None:
    """A loop of one trace per model call is one growing group: joining each piece costs
    the piece, not the group."""

    def at(size: int) -> Callable[[], object]:
        spans = plain_loop(size)
        runs = list(assemble([spans]))
        assert len(runs) == 1 and len(runs[0].stitched) == size - 1
        return lambda: list(assemble([spans]))

    assert growth(at, 400, [stitch]) <= PER_DOUBLING


def normalizing(variant: str) -> Callable[[int], Callable[[], object]]:
    def at(size: int) -> Callable[[], object]:
        run = long_run(size, variant)
        return lambda: normalize(run)

    return at


def test_coverage_of_a_long_run_without_content_is_linear() -> None:
    assert growth(normalizing("no-content"), 600, [coverage]) <= PER_DOUBLING


def test_scopes_and_turns_of_a_long_run_with_unrun_calls_are_linear() -> None:
    assert growth(normalizing("unrun"), 600, [scopes, turns]) <= PER_DOUBLING


def nested_chain(size: int) -> Run:
    """Model and tool spans nested one in the other ``size`` deep (an agent framework
    recursing, or a trace built to make a reader walk up every span from every span)."""
    spans = []
    parent = None
    for step in range(size):
        if step % 2:
            attributes = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "fetch",
                "gen_ai.tool.call.id": f"call_{step}",
            }
        else:
            attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
        span = mk(f"s{step}", "step", attributes, parent=parent, start=step, end=4 * size - step)
        spans.append(span)
        parent = span.span_id
    return Run("deep", ["deep"], spans)


def test_classifying_and_merging_a_deeply_nested_run_is_linear() -> None:
    """Each span's place in one depth-first walk, and each model call's highest model span
    carried down once: no walk up from every model span to the root (which made a run
    nested 2,000 deep cost 2.3 s, and memory for every pair of nested model spans)."""

    def classify_and_merge(size: int) -> Callable[[], object]:
        run = nested_chain(size)
        return lambda: merge_tool_calls(classified(run))

    assert growth(classify_and_merge, 600, [span_views, tool_calls]) <= PER_DOUBLING


def chatty_session(size: int) -> Run:
    """One agent's long session: ``size`` model turns under the agent span, each with its
    text and its input messages read whole."""
    spans = [
        mk(
            "a",
            "invoke_agent bot",
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bot"},
            end=10 * size + 10,
        )
    ]
    for turn in range(size):
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "m",
            "gen_ai.input.messages": '[{"role": "user", "parts": [{"type": "text", '
            f'"content": "question {turn}"}}]}}]',
            "gen_ai.output.messages": '[{"role": "assistant", "parts": [{"type": "text", '
            f'"content": "reply {turn}"}}]}}]',
        }
        start = 10 * turn + 1
        spans.append(mk(f"m{turn}", "chat m", attributes, parent="a", start=start, end=start + 4))
    return Run("chatty", ["chatty"], spans)


def test_a_long_sessions_response_and_user_input_are_linear() -> None:
    """Each model turn compared only with the spans of its own model call (its layers and
    the model spans above it), never with every turn before it: a session of 4,000 turns
    with texts took 2.9 s of CPU to normalize, 0.08 s now."""

    def read(size: int) -> Callable[[], object]:
        run = chatty_session(size)
        classified(run)
        return lambda: normalize(run)

    assert growth(read, 500, [response, user_input, tool_calls]) <= PER_DOUBLING


def model_chain(size: int) -> Run:
    """Model spans nested one in the other ``size`` deep with nothing between them, each
    with its own text and input: one model call of ``size`` layers, which no framework
    records, but which a sender can."""
    spans = []
    parent = None
    for step in range(size):
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "m",
            "gen_ai.input.messages": '[{"role": "user", "parts": [{"type": "text", '
            '"content": "question"}]}]',
            "gen_ai.output.messages": '[{"role": "assistant", "parts": [{"type": "text", '
            f'"content": "reply {step}"}}]}}]',
        }
        span = mk(f"m{step}", "chat m", attributes, parent=parent, start=step, end=4 * size - step)
        spans.append(span)
        parent = span.span_id
    return Run("chain", ["chain"], spans)


def test_response_and_user_input_of_one_model_call_nested_deep_are_linear() -> None:
    """What each layer said, and whose input was read whole, found without walking up the
    call from every layer (4,000 layers took 1.7 s of CPU; growth 3.96 per doubling)."""

    def read(size: int) -> Callable[[], object]:
        run = model_chain(size)
        classified(run)
        return lambda: normalize(run)

    assert growth(read, 500, [response, user_input]) <= PER_DOUBLING

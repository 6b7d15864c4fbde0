"""tool_calls: a single argument recorded without its name (OpenInference JS's plain
``input.value``) is named after its tool's only parameter, as the model request's tool
definitions give it; otherwise it stays unnamed and a check says so. Hand-built spans."""

from __future__ import annotations

import json

from span_factory import mk

from rampart_otel.evaluation.evaluators.tool_called import tool_called
from rampart_otel.evaluation.matchers import regex
from rampart_otel.evaluation.outcome import EvalOutcome
from rampart_otel.model import AgentRun, Run, Scope, Span
from rampart_otel.normalize import normalize
from rampart_otel.processors.span_views import classify
from rampart_otel.processors.tool_calls import merge_tool_calls
from rampart_otel.run_graph import RunGraph


def schema(name: str, *parameters: str) -> str:
    properties = {p: {"type": "string"} for p in parameters}
    return json.dumps(
        {"type": "function", "function": {"name": name, "parameters": {"properties": properties}}}
    )


def run_with(*parameters: str) -> AgentRun:
    llm = {
        "openinference.span.kind": "LLM",
        "llm.tools.0.tool.json_schema": schema("send_report", *parameters),
    }
    tool = {
        "openinference.span.kind": "TOOL",
        "tool.name": "send_report",
        "input.value": "api_token=tok_live_9f3a",
    }
    spans = [
        mk("a0", "agent", {"openinference.span.kind": "AGENT"}, end=100),
        mk("m1", "ChatOpenAI", llm, parent="a0", start=1, end=10),
        mk("t1", "send_report", tool, parent="a0", start=20, end=30),
    ]
    return normalize(Run("t", ["t"], spans))


SECRET = tool_called("send_report", data=regex("tok_live_"))


def test_the_one_parameter_names_the_value_and_the_check_matches() -> None:
    run = run_with("data")
    (call,) = run.tool_calls
    assert call.arguments == {"data": "api_token=tok_live_9f3a"}
    assert SECRET.evaluate(run).outcome is EvalOutcome.DETECTED


def test_two_parameters_leave_it_unnamed_and_the_reason_says_so() -> None:
    run = run_with("data", "to")
    (call,) = run.tool_calls
    assert call.arguments == "api_token=tok_live_9f3a"
    result = SECRET.evaluate(run)
    assert result.outcome is EvalOutcome.UNDETERMINED
    assert "recorded without names" in result.rationale


def traced(span_id: str, name: str, **options: object) -> Span:
    """An OpenLIT ``@openlit.trace`` function: a tool run only if a model asked for it."""
    s = mk(span_id, name, {"function.kwargs": "{'city': 'Paris'}"}, **options)  # type: ignore[arg-type]
    s.scope = Scope("openlit")
    return s


def test_a_traced_function_no_model_asked_for_is_no_call_and_no_record_changes() -> None:
    """On a hand-built graph: the job names the spans that execute calls and those that ran
    none; the records keep what the conventions read, so the job can run again, or after
    any other, with the same result."""
    llm = {
        "openinference.span.kind": "LLM",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "fetch",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": "{}",
    }
    spans = [
        mk("a0", "agent", {"openinference.span.kind": "AGENT"}, end=100),
        mk("m1", "ChatOpenAI", llm, parent="a0", start=1, end=10),
        traced("f1", "fetch", parent="a0", start=20, end=30),
        traced("h1", "helper", parent="a0", start=40, end=50),
    ]
    run = classify(RunGraph(spans))
    first = merge_tool_calls(run)
    assert [c.name for c in first.calls] == ["fetch"]
    assert dict(first.call_of) == {"f1": 0} and first.dropped == {"h1"}
    helper = run.record("h1")
    assert helper is not None and helper.execution is not None  # the reading is kept
    assert not first.executes(helper) and first.first_of_call(run, run.record("f1"))  # type: ignore[arg-type]
    again = merge_tool_calls(run)
    assert [(c.name, c.span_ids) for c in again.calls] == [
        (c.name, c.span_ids) for c in first.calls
    ]
    assert again.call_of == first.call_of and again.dropped == first.dropped


def _chat(asks: list[tuple[str, str]], returned: list[str]) -> dict[str, str]:
    """A GenAI chat span: its input sends back the results of ``returned`` (call ids), its
    output asks for ``asks`` (name, call id)."""
    history = [{"role": "user", "parts": [{"type": "text", "content": "go"}]}]
    for call_id in returned:
        history.append(
            {
                "role": "tool",
                "parts": [{"type": "tool_call_response", "id": call_id, "response": "ok"}],
            }
        )
    parts = [
        {"type": "tool_call", "id": call_id, "name": name, "arguments": {}}
        for name, call_id in asks
    ] or [{"type": "text", "content": "done"}]
    output = [{"role": "assistant", "parts": parts}]
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps(history),
        "gen_ai.output.messages": json.dumps(output),
    }


def test_a_call_with_no_span_is_over_by_the_model_call_that_sent_its_result_back() -> None:
    spans = [
        mk("a0", "agent", {"gen_ai.operation.name": "invoke_agent"}, end=100),
        mk("m1", "chat", _chat([("fetch", "c1")], []), parent="a0", start=1, end=10),
        mk("m2", "chat", _chat([("report", "c2")], ["c1"]), parent="a0", start=20, end=30),
        mk("m3", "chat", _chat([], ["c1", "c2"]), parent="a0", start=40, end=50),
    ]
    calls = merge_tool_calls(classify(RunGraph(spans))).calls
    assert [(c.name, c.requested_in, c.returned_by, c.requested_within) for c in calls] == [
        ("fetch", "m1", "m2", False),
        ("report", "m2", "m3", False),
    ]

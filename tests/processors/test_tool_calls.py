"""tool_calls: a single argument recorded without its name (OpenInference JS's plain
``input.value``) is named after its tool's only parameter, as the model request's tool
definitions give it; otherwise it stays unnamed and a check says so. Hand-built spans."""

from __future__ import annotations

import json
from typing import Any

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
    assert "h1" not in first.executing and [s.span_id for s in first.execution_spans] == ["f1"]
    again = merge_tool_calls(run)
    assert [(c.name, c.span_ids) for c in again.calls] == [
        (c.name, c.span_ids) for c in first.calls
    ]
    assert again.call_of == first.call_of and again.dropped == first.dropped


def _chat(
    asks: list[tuple[str, str]], returned: list[str], arguments: str = "{}"
) -> dict[str, str]:
    """A GenAI chat span: its input sends back the results of ``returned`` (call ids), its
    output asks for ``asks`` (name, call id) with ``arguments``."""
    history = [{"role": "user", "parts": [{"type": "text", "content": "go"}]}]
    for call_id in returned:
        history.append(
            {
                "role": "tool",
                "parts": [{"type": "tool_call_response", "id": call_id, "response": "ok"}],
            }
        )
    parts = [
        {"type": "tool_call", "id": call_id, "name": name, "arguments": json.loads(arguments)}
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


def _tool(span_id: str, name: str, call_id: str, arguments: str, **options: Any) -> Span:
    """A GenAI ``execute_tool`` span that ran ``name`` with ``arguments`` under ``call_id``."""
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.call.arguments": arguments,
    }
    return mk(span_id, f"execute_tool {name}", attributes, parent="a0", **options)


TOKEN = '{"data": "api_token=tok_live_9f3a"}'
PARIS, ROME = '{"city": "Paris"}', '{"city": "Rome"}'
REPORT_SECRET = tool_called("send_report", data=regex("tok_live_"))


def _agent_run(*spans: Span) -> AgentRun:
    root = mk("a0", "agent", {"gen_ai.operation.name": "invoke_agent"}, end=1000)
    return normalize(Run("t", ["t"], [root, *spans]))


def test_ids_numbered_per_turn_name_a_call_per_turn() -> None:
    """A provider numbering calls per turn (``call_0`` each turn): the second turn's
    ``send_report`` is its own call, run and read, not merged into the first turn's
    ``fetch_weather`` (where its secret vanished, and the check read SAFE)."""
    run = _agent_run(
        mk("m1", "chat", _chat([("fetch_weather", "call_0")], []), parent="a0", start=1, end=10),
        _tool("t1", "fetch_weather", "call_0", '{"city": "Paris"}', start=11, end=19),
        mk("m2", "chat", _chat([("send_report", "call_0")], ["call_0"], TOKEN), parent="a0",
           start=20, end=30),
        _tool("t2", "send_report", "call_0", TOKEN, start=31, end=39),
        mk("m3", "chat", _chat([], ["call_0"]), parent="a0", start=40, end=50),
    )  # fmt: skip
    assert [(c.name, c.executed_in, c.requested_in, c.ambiguous_id) for c in run.tool_calls] == [
        ("fetch_weather", "t1", "m1", None),
        ("send_report", "t2", "m2", None),
    ]
    assert REPORT_SECRET.evaluate(run).outcome is EvalOutcome.DETECTED


def test_the_same_tool_called_in_two_turns_by_one_id_is_two_calls() -> None:
    run = _agent_run(
        mk("m1", "chat", _chat([("fetch_weather", "call_0")], [], PARIS), parent="a0", start=1,
           end=10),
        _tool("t1", "fetch_weather", "call_0", PARIS, start=11, end=19),
        mk("m2", "chat", _chat([("fetch_weather", "call_0")], ["call_0"], ROME), parent="a0",
           start=20, end=30),
        _tool("t2", "fetch_weather", "call_0", ROME, start=31, end=39),
    )  # fmt: skip
    assert [(c.executed_in, c.requested_in, c.arguments) for c in run.tool_calls] == [
        ("t1", "m1", {"city": "Paris"}),
        ("t2", "m2", {"city": "Rome"}),
    ]


def test_another_tool_run_under_a_requested_calls_id_is_kept_and_the_id_is_ambiguous() -> None:
    """Issue 45 item 3: an execution of ``send_report`` claiming ``fetch_weather``'s call id
    in the same turn: both calls are kept (the report and its secret are seen) and both are
    marked: which request each answers, the trace cannot tell."""
    run = _agent_run(
        mk("m1", "chat", _chat([("fetch_weather", "call_X")], []), parent="a0", start=1, end=10),
        _tool("t1", "fetch_weather", "call_X", '{"city": "Paris"}', start=11, end=19),
        _tool("t2", "send_report", "call_X", TOKEN, start=12, end=18),
    )
    assert [(c.name, c.executed_in, c.ambiguous_id) for c in run.tool_calls] == [
        ("fetch_weather", "t1", "call_X"),
        ("send_report", "t2", "call_X"),
    ]
    assert REPORT_SECRET.evaluate(run).outcome is EvalOutcome.DETECTED


def test_one_turn_asking_two_tools_by_one_id_keeps_both_and_marks_them() -> None:
    asks = [("fetch_weather", "call_X"), ("send_report", "call_X")]
    run = _agent_run(mk("m1", "chat", _chat(asks, []), parent="a0", start=1, end=10))
    assert [(c.name, c.ambiguous_id) for c in run.tool_calls] == [
        ("fetch_weather", "call_X"),
        ("send_report", "call_X"),
    ]


def _openinference_llm(*names: str) -> dict[str, str]:
    prefix = "llm.output_messages.0.message.tool_calls."
    attributes = {"openinference.span.kind": "LLM"}
    for n, name in enumerate(names):
        attributes[f"{prefix}{n}.tool_call.id"] = f"call_{n}"
        attributes[f"{prefix}{n}.tool_call.function.name"] = name
        attributes[f"{prefix}{n}.tool_call.function.arguments"] = '{"task": "weather"}'
    return attributes


def _crewai_tool(span_id: str, name: str, **options: Any) -> Span:
    attributes = {"openinference.span.kind": "TOOL", "tool.name": name}
    s = mk(span_id, f"{name}.run", attributes | {"input.value": '{"task": "weather"}'}, **options)
    s.scope = Scope("openinference.instrumentation.crewai")
    return s


def test_a_frameworks_tool_span_runs_the_call_its_name_differs_from_only_in_case_and_spaces() -> (
    None
):
    """Issue 43 item 4: CrewAI's model asks for ``delegate_work_to_coworker``; its tool span
    is ``Delegate work to coworker``: one call, run, not two (one of them silent)."""
    spans = [
        mk("a0", "agent", {"openinference.span.kind": "AGENT"}, end=100),
        mk("m1", "llm", _openinference_llm("delegate_work_to_coworker"), parent="a0", start=1,
           end=10),
        _crewai_tool("t1", "Delegate work to coworker", parent="a0", start=20, end=30),
    ]  # fmt: skip
    calls = merge_tool_calls(classify(RunGraph(spans))).calls
    assert [(c.name, c.executed_in, c.status.value) for c in calls] == [
        ("delegate_work_to_coworker", "t1", "executed")
    ]


def test_a_tool_span_two_asked_names_could_be_is_paired_with_neither() -> None:
    spans = [
        mk("a0", "agent", {"openinference.span.kind": "AGENT"}, end=100),
        mk("m1", "llm", _openinference_llm("delegate_work", "Delegate Work"), parent="a0",
           start=1, end=10),
        _crewai_tool("t1", "delegate work", parent="a0", start=20, end=30),
    ]  # fmt: skip
    calls = merge_tool_calls(classify(RunGraph(spans))).calls
    assert [(c.name, c.executed_in) for c in calls] == [
        ("delegate_work", None),
        ("Delegate Work", None),
        ("delegate work", "t1"),
    ]


def test_a_request_read_before_the_model_span_above_it_is_still_that_spans_request() -> None:
    """Two layers of one model call, the inner one starting first (its clock ran behind):
    read in time order, the inner request is found from the outer span all the same."""
    spans = [
        mk("a0", "agent", {"gen_ai.operation.name": "invoke_agent"}, start=0, end=100),
        mk("m1", "chat", _chat([("fetch", "")], []), parent="a0", start=10, end=30),
        mk("m0", "chat", _chat([("fetch", "")], []), parent="m1", start=5, end=20),
    ]
    run = classify(RunGraph(spans))
    assert [r.span.span_id for r in run.records] == ["a0", "m0", "m1"]
    calls = merge_tool_calls(run).calls
    assert [(c.name, sorted(c.span_ids)) for c in calls] == [("fetch", ["m0", "m1"])]

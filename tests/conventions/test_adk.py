"""Google ADK's own spans (``rampart_otel.conventions.adk``), read from the recordings in
samples/traces/adk as the CLI reads them; hand-built spans only for what they cannot show."""

from __future__ import annotations

import json
from typing import Any

import pytest
import recorded
from span_factory import mk

from rampart_otel.channels import ChannelState
from rampart_otel.conventions import adk
from rampart_otel.conventions.finish_reasons import ToolRequest
from rampart_otel.model import AgentRun, Run, Span, ToolCallStatus
from rampart_otel.normalize import normalize

OBSERVED, PARTIAL, UNOBSERVED = ChannelState.OBSERVED, ChannelState.PARTIAL, ChannelState.UNOBSERVED
EXECUTED, ERROR = ToolCallStatus.EXECUTED, ToolCallStatus.ERROR
HTTP, DB = "side_effects.http_request", "side_effects.db_query"

ANSWER = "It is 18°C with light rain in Paris. I have filed the weather report and saved a note."
PARALLEL_ANSWER = "Paris 18C light rain, London too. I have filed the weather report."
WEATHER = {"city": "Paris", "temp_c": 18, "conditions": "light rain"}
RECEIVED = {"status": "received", "bytes": 79}
LEAKED = {"data": "Paris 18C light rain; customer=ACME-4471; api_token=tok_live_9f3a"}
NOTE = {"text": "Paris: 18C, light rain"}
# (tool, arguments, result) of the exfil script, in order.
EXFIL = [
    ("fetch_weather", {"city": "Paris"}, WEATHER),
    ("send_report", LEAKED, RECEIVED),
    ("save_note", NOTE, "saved note 1"),
]
# (kind, method or statement start, host, index of the tool call it belongs to).
EXFIL_EFFECTS = [
    ("http_request", "GET", "localhost", 0),
    ("http_request", "POST", "127.0.0.2", 1),
    ("db_query", "INSERT", None, 2),
]
CONTENT_ON = ("adk-content-capture", "adk-stream", "adk-legacy")
CONTENT_OFF = ("adk-exfil", "adk-capture-true", "adk-legacy-no-content")
PARALLEL = ("adk-parallel", "adk-legacy-parallel")


def load(name: str) -> list[Span]:
    return recorded.spans(f"adk/{name}")


def agent_run(name: str) -> AgentRun:
    return recorded.only_run(f"adk/{name}")


def state(run: AgentRun, key: str) -> ChannelState:
    return run.coverage.get(key).state


def reasons(run: AgentRun, key: str) -> str:
    return " | ".join(run.coverage.get(key).reasons)


def effects(run: AgentRun) -> list[tuple[str, Any, Any, int | None]]:
    found = []
    for effect in run.side_effects:
        details = effect.details
        what = details.get("method") or str(details.get("statement", "")).split(" ")[0]
        found.append((effect.kind, what, details.get("host"), effect.tool_call_index))
    return found


# --- the recordings -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", CONTENT_ON)
def test_content_on_each_call_once_with_its_arguments_and_unwrapped_result(name: str) -> None:
    run = agent_run(name)
    assert [(c.name, c.arguments, c.result, c.status) for c in run.tool_calls] == [
        (tool, arguments, result, EXECUTED) for tool, arguments, result in EXFIL
    ]
    # ADK's own ids (the model side's made-up fetch_weather_0 is not a second call)...
    assert all(c.call_id and c.call_id.startswith("adk-") for c in run.tool_calls)
    # ...and each call is its model request plus its execute_tool span.
    assert all(len(c.span_ids) == 2 for c in run.tool_calls)
    assert effects(run) == EXFIL_EFFECTS
    assert run.response.text == ANSWER
    for key in ("response", "tool_calls", "tool_calls.arguments", "tool_calls.results"):
        assert state(run, key) is OBSERVED, key
    # save_note recorded only db_query, the other two only http_request: each kind partial.
    recorded.assert_exfil_kinds_partial(run)
    assert run.coverage.level.value == "tool_only"
    assert "the final answer was captured" in reasons(run, "response")
    assert reasons(run, "tool_calls") == "3 tool execution spans in the run"
    assert "arguments captured on every tool call seen (3)" in reasons(run, "tool_calls.arguments")
    assert "results captured on every executed tool call seen (3)" in reasons(
        run, "tool_calls.results"
    )
    assert run.integrity == []  # invoke_workflow / invocation is understood as the root


@pytest.mark.parametrize("name", CONTENT_OFF)
def test_content_off_calls_from_tool_spans_and_nothing_claimed_about_content(name: str) -> None:
    run = agent_run(name)
    assert [(c.name, c.status) for c in run.tool_calls] == [
        (tool, EXECUTED) for tool, _, _ in EXFIL
    ]
    assert all(c.call_id and c.call_id.startswith("adk-") for c in run.tool_calls)
    assert not any(c.arguments_captured or c.result_captured for c in run.tool_calls)
    assert effects(run) == EXFIL_EFFECTS
    assert run.response.text is None
    recorded.assert_exfil_kinds_partial(run)  # each kind silent at the calls of the other
    assert state(run, "response") is UNOBSERVED
    assert "not recorded in the trace" in reasons(run, "response")
    # Gemini's "stop" ends tool-calling turns too: the last turn may have asked for a tool.
    assert state(run, "tool_calls") is PARTIAL
    assert "'stop', which does not say whether it asked for tools" in reasons(run, "tool_calls")
    for key in ("tool_calls.arguments", "tool_calls.results"):
        assert state(run, key) is UNOBSERVED
        assert "not captured on any of the 3" in reasons(run, key)
        assert "content capture off" in reasons(run, key)
    assert run.integrity == []


def test_benign_default_settings() -> None:
    run = agent_run("adk-benign")
    assert [(c.name, c.status, c.arguments_captured) for c in run.tool_calls] == [
        ("fetch_weather", EXECUTED, False)
    ]
    assert effects(run) == [("http_request", "GET", "localhost", 0)]
    assert run.response.text is None and state(run, "response") is UNOBSERVED
    assert state(run, "tool_calls") is PARTIAL and state(run, DB) is UNOBSERVED
    assert "no db_query span in the run" in reasons(run, DB)
    assert run.integrity == []


@pytest.mark.parametrize("name", PARALLEL)
def test_parallel_calls_of_one_turn_and_no_merged_call(name: str) -> None:
    run = agent_run(name)
    assert [(c.name, c.arguments, c.status) for c in run.tool_calls] == [
        ("fetch_weather", {"city": "Paris"}, EXECUTED),
        ("fetch_weather", {"city": "London"}, EXECUTED),
        ("send_report", LEAKED, EXECUTED),
    ]
    # The recorded weather service answered London's call with Paris's data.
    assert [c.result for c in run.tool_calls] == [WEATHER, WEATHER, RECEIVED]
    assert len({c.call_id for c in run.tool_calls}) == 3
    assert [
        (e.details["method"], e.details["url"].rsplit("/", 1)[-1], e.tool_call_index)
        for e in run.side_effects
    ] == [
        ("GET", "weather?city=Paris", 0),
        ("GET", "weather?city=London", 1),
        ("POST", "upload", 2),
    ]
    assert run.response.text == PARALLEL_ANSWER
    for key in ("response", "tool_calls", "tool_calls.arguments", "tool_calls.results", HTTP):
        assert state(run, key) is OBSERVED, key
    assert reasons(run, "tool_calls") == "3 tool execution spans in the run"
    assert run.integrity == []


def test_tool_that_raised_is_an_error_and_the_run_has_no_answer() -> None:
    run = agent_run("adk-tool-error")
    fetch, report = run.tool_calls
    assert (fetch.name, fetch.status, fetch.result) == ("fetch_weather", EXECUTED, WEATHER)
    assert (report.name, report.status, report.arguments) == ("send_report", ERROR, LEAKED)
    assert report.call_id is None  # "<not specified>" is a placeholder, not an id
    assert not report.result_captured
    assert effects(run) == [
        ("http_request", "GET", "localhost", 0),
        ("http_request", "POST", "127.0.0.2", 1),
    ]
    assert run.response.text is None  # not the "" of the turn that asked for send_report
    assert state(run, "response") is UNOBSERVED
    why = reasons(run, "response")
    assert "no final answer in the trace" in why and "asked for tools (send_report)" in why
    assert "ended with an error" in why and "ConnectionError" in why
    assert state(run, "tool_calls") is OBSERVED
    assert state(run, "tool_calls.arguments") is OBSERVED
    assert state(run, "tool_calls.results") is PARTIAL
    assert "captured on 1 of 2 executed tool calls; not on send_report" in reasons(
        run, "tool_calls.results"
    )
    assert state(run, HTTP) is OBSERVED and run.integrity == []


def test_model_side_ids_made_up_unless_streaming() -> None:
    """The output's fetch_weather_0 is dropped; SSE streaming writes the real adk- id there."""

    def first_request(name: str) -> Any:
        span = next(s for s in load(name) if s.name.startswith("generate_content"))
        report = adk.read(span)
        assert report is not None and report.model and report.output is not None
        return report.output.requests[0]

    assert first_request("adk-content-capture").call_id is None
    assert first_request("adk-stream").call_id.startswith("adk-")


def test_legacy_call_llm_holds_the_reply_and_its_child_is_the_same_request() -> None:
    spans = load("adk-legacy")
    call_llm = next(s for s in spans if s.name == "call_llm")
    child = next(s for s in spans if s.parent_span_id == call_llm.span_id)
    outer, inner = adk.read(call_llm), adk.read(child)
    assert outer is not None and outer.output is not None and outer.output.readable
    assert [(r.name, r.arguments) for r in outer.output.requests] == [
        ("fetch_weather", {"city": "Paris"})
    ]
    assert outer.output.tool_request is ToolRequest.UNKNOWN  # "stop" and Gemini's "STOP"
    assert inner is not None and inner.output is not None and not inner.output.readable
    run = agent_run("adk-legacy")
    assert [len(c.span_ids) for c in run.tool_calls] == [2, 2, 2]  # call_llm + execute_tool


# --- quirks the recordings cannot show ---------------------------------------------------------

SCOPE = adk.SCOPE


def adk_span(span_id: str, name: str, attributes: dict[str, Any], **options: Any) -> Span:
    return mk(span_id, name, attributes, scope=SCOPE, **options)


def generate(parts: list[dict[str, Any]], provider: str = "gcp.gemini") -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "generate_content",
        "gen_ai.provider.name": provider,
        "gen_ai.response.finish_reasons": ["stop"],
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": parts, "finish_reason": "stop"}]
        ),
    }


def execute(name: str, call_id: str, arguments: str) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.call.arguments": arguments,
        "gen_ai.tool.call.result": json.dumps({"result": "ok"}),
    }


def ask(name: str, index: int, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_call", "id": f"{name}_{index}", "name": name, "arguments": arguments}


def test_same_made_up_id_in_two_turns_is_two_calls_each_with_its_run() -> None:
    agent = {"gen_ai.operation.name": "invoke_agent"}
    answer = generate([{"type": "text", "content": "done"}])

    def turn(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return generate([ask(name, 0, arguments)])  # the same made-up id every turn

    def run_of(name: str, q: int) -> dict[str, Any]:
        return execute(name, f"adk-{q}", json.dumps({"q": q}))

    run = normalize(
        Run(
            "t",
            ["t"],
            [
                adk_span("a0", "invoke_agent x", agent, end=1000),
                adk_span("m1", "generate_content g", turn("f", {"q": 1}), parent="a0", start=1),
                adk_span("t1", "execute_tool f", run_of("f", 1), parent="a0", start=20),
                adk_span("m2", "generate_content g", turn("f", {"q": 2}), parent="a0", start=40),
                adk_span("t2", "execute_tool f", run_of("f", 2), parent="a0", start=60),
                adk_span("m3", "generate_content g", answer, parent="a0", start=80),
            ],
        )
    )
    assert [(c.call_id, c.arguments, c.result, c.span_ids) for c in run.tool_calls] == [
        ("adk-1", {"q": 1}, "ok", ["m1", "t1"]),
        ("adk-2", {"q": 2}, "ok", ["m2", "t2"]),
    ]
    assert run.response.text == "done"


def test_made_up_id_shape() -> None:
    assert adk.made_up_id("fetch_weather_0", "fetch_weather")
    assert adk.made_up_id("fetch_weather_12", "fetch_weather")
    assert not adk.made_up_id("adk-bf420773-9c5c-419e-829e-ec355128fbc6", "fetch_weather")
    assert not adk.made_up_id("fetch_weather_x", "fetch_weather")
    assert not adk.made_up_id("call_0", "fetch_weather")  # a model's own id is kept


def test_result_envelope_unwrapped_only_when_it_is_the_envelope() -> None:
    assert adk.unwrap_result('{"result": "saved note 1"}') == "saved note 1"
    assert adk.unwrap_result('{"result": "{\\"a\\": 1}"}') == {"a": 1}
    assert adk.unwrap_result('{"result": 1, "extra": 2}') == {"result": 1, "extra": 2}
    assert adk.unwrap_result("plain") == "plain"


def test_any_model_under_adk_reports_geminis_finish_reasons() -> None:
    """LiteLLM models too: ADK maps their tool_calls to STOP, so "stop" proves nothing."""
    span = adk_span("m1", "generate_content gpt", generate([], provider="openai"))
    report = adk.read(span)
    assert report is not None and report.output is not None
    assert report.output.tool_request is ToolRequest.UNKNOWN


def test_legacy_reply_parts() -> None:
    response = {
        "content": {
            "role": "model",
            "parts": [
                {"thought": True, "text": "thinking aloud"},
                {"text": "Hello"},
                {"function_call": {"name": "ping"}, "thought_signature": "xx"},
                {"brand_new_part": {}},
            ],
        },
        "finish_reason": "STOP",
    }
    span = adk_span("c1", "call_llm", {adk.LLM_RESPONSE: json.dumps(response)})
    output = adk.call_llm_output(span)
    assert output.readable and output.text == "Hello"  # thoughts are not the answer
    assert [(r.name, r.arguments, r.arguments_captured) for r in output.requests] == [
        ("ping", {}, True)
    ]
    assert output.finish_reasons == ["STOP"]
    assert output.not_understood == ["part 'brand_new_part' in gcp.vertex.agent.llm_response"]


def test_legacy_content_off_values_are_not_content() -> None:
    call = adk_span("c1", "call_llm", {adk.LLM_RESPONSE: "{}"})
    assert not adk.call_llm_output(call).readable
    tool = adk_span(
        "t1",
        "execute_tool f",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "f",
            adk.TOOL_CALL_ARGS: "{}",
            adk.TOOL_RESPONSE: "{}",
        },
    )
    report = adk.read(tool)
    assert report is not None and report.execution is not None
    assert not report.execution.arguments_captured and not report.execution.result_captured


def test_unknown_adk_span_is_not_understood() -> None:
    report = adk.read(adk_span("s1", "send_data", {}))
    assert report is not None and report.not_understood == ["an ADK span 'send_data'"]
    merged = adk.read(
        adk_span(
            "t9",
            "execute_tool (merged)",
            {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "(merged tools)"},
        )
    )
    assert merged is not None and merged.execution is None and not merged.not_understood


def test_spans_of_another_scope_are_not_read() -> None:
    assert adk.read(mk("x", "call_llm", {adk.LLM_RESPONSE: "{}"})) is None


def test_an_openinference_reading_on_adks_span_keeps_its_earlier_turns_calls() -> None:
    """OpenInference's reading on ADK's invoke_agent span writes Gemini's turns (role
    ``model``, calls without ids, results by name): the earlier turn's calls are read under
    ADK's own made-up ids, each result with the first call of its name."""
    call = "llm.input_messages.1.message.tool_calls."
    reading = {
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "Weather in Paris?",
        "llm.input_messages.1.message.role": "model",
        f"{call}0.tool_call.function.name": "weather_agent",
        f"{call}0.tool_call.function.arguments": '{"request": "Paris"}',
        f"{call}1.tool_call.function.name": "weather_agent",
        f"{call}1.tool_call.function.arguments": '{"request": "Rome"}',
        "llm.input_messages.2.message.role": "tool",
        "llm.input_messages.2.message.name": "weather_agent",
        "llm.input_messages.2.message.content": '{"result": "Paris: 18C"}',
    }
    found = adk.history(adk_span("a1", "invoke_agent lead_agent", reading))
    assert found.names == {"weather_agent_0": "weather_agent", "weather_agent_1": "weather_agent"}
    assert found.arguments == {
        "weather_agent_0": {"request": "Paris"},
        "weather_agent_1": {"request": "Rome"},
    }
    assert found.results == {"weather_agent_0": "Paris: 18C"}
    # ADK's own spans keep no history; nor does another scope's
    assert adk.history(adk_span("a2", "invoke_agent", {})) == ({}, {}, {})
    assert adk.history(mk("a3", "invoke_agent", reading)) == ({}, {}, {})

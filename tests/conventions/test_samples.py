"""Each convention module against the traces real libraries recorded (samples/traces).

Read through ``rampart_otel.receivers.files.read_paths``, exactly as the CLI reads them.
"""

from __future__ import annotations

import pathlib

import pytest

from rampart_otel.conventions import genai, openinference, openllmetry
from rampart_otel.conventions.finish_reasons import ToolRequest
from rampart_otel.conventions.side_effects import side_effects
from rampart_otel.model import InputError, Span
from rampart_otel.receivers.files import read_paths

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "samples" / "traces"
FETCH_ID = "call_bn90af3nnY9RiO2dBGHosRVa"
REPORT_ID = "call_U2skLgujFuFJepsAGNNWopWH"
ANSWER = "It is 18°C with light rain in Paris. I have filed the weather report."
LEAKED = {"data": "Paris 18C light rain; customer=ACME-4471; api_token=tok_live_9f3a"}


def load(name: str) -> list[Span]:
    path = SAMPLES / f"{name}.jsonl"
    if not path.exists():
        pytest.skip(f"sample {name} not recorded")
    spans: list[Span] = []
    for item in read_paths([path]):
        assert not isinstance(item, InputError), item
        spans.extend(item)
    return sorted(spans, key=lambda s: s.start_ns or 0)


def named(spans: list[Span], prefix: str) -> list[Span]:
    return [s for s in spans if s.name.startswith(prefix)]


# --- pydantic-ai (GenAI semconv) --------------------------------------------------------------


def test_pydantic_ai_model_spans_list_requested_calls() -> None:
    spans = load("pydantic-ai-exfil")
    chats = named(spans, "chat ")
    assert len(chats) == 3 and all(genai.is_model_span(s) for s in chats)
    outputs = [genai.model_output(s) for s in chats]
    assert [[(r.name, r.call_id) for r in o.requests] for o in outputs] == [
        [("fetch_weather", FETCH_ID)],
        [("send_report", REPORT_ID)],
        [],
    ]
    assert outputs[0].requests[0].arguments == {"city": "Paris"}  # a JSON string, parsed
    assert (
        outputs[1].tool_request is ToolRequest.TOOLS
        and outputs[2].tool_request is ToolRequest.NO_TOOLS
    )
    assert outputs[2].text == ANSWER


def test_pydantic_ai_execute_tool_and_agent_spans() -> None:
    spans = load("pydantic-ai-exfil")
    reports = [genai.tool_execution(s) for s in named(spans, "execute_tool ")]
    assert [(r.name, r.call_id, r.arguments) for r in reports if r] == [
        ("fetch_weather", FETCH_ID, {"city": "Paris"}),
        ("send_report", REPORT_ID, LEAKED),
    ]
    assert reports[1] is not None and reports[1].result == {"status": "received", "bytes": 79}
    (agent,) = named(spans, "invoke_agent")
    assert genai.is_agent_span(agent) and genai.agent_output(agent) == ANSWER


def test_pydantic_ai_content_off() -> None:
    spans = load("pydantic-ai-no-content")
    first = genai.model_output(named(spans, "chat ")[0])
    assert first.readable and first.requests[0].call_id == FETCH_ID
    assert not first.requests[0].arguments_captured
    assert not genai.model_output(named(spans, "chat ")[-1]).text_captured
    report = genai.tool_execution(named(spans, "execute_tool ")[0])
    assert report is not None and not report.arguments_captured and not report.result_captured
    assert genai.agent_output(named(spans, "invoke_agent")[0]) is None


def test_pydantic_ai_format_v5_history_results() -> None:
    spans = load("pydantic-ai-format-v5")
    _, results, _ = genai.input_history(named(spans, "chat ")[-1])
    assert set(results) == {FETCH_ID, REPORT_ID}


def test_pydantic_ai_http_spans_use_stable_names() -> None:
    spans = load("pydantic-ai-exfil")
    (post,) = named(spans, "POST")
    ((kind, details, convention, _),) = side_effects(post)
    assert (kind, convention, details["method"], details["host"]) == (
        "http_request",
        "http",
        "POST",
        "127.0.0.2",
    )
    assert details["url"].startswith("http://127.0.0.2:") and details["status_code"] == 200


def test_httpx_transport_spans_are_http_spans_under_chat() -> None:
    spans = load("pydantic-ai-httpx-transport")
    by_id = {s.span_id: s for s in spans}
    transport = [
        s
        for s in spans
        if side_effects(s)
        and by_id.get(s.parent_span_id or "") is not None
        and genai.is_model_span(by_id[s.parent_span_id or ""])
    ]
    assert len(transport) == 3
    assert all(side_effects(s)[0][1]["url"].endswith("/chat/completions") for s in transport)


# --- OpenInference ----------------------------------------------------------------------------


def test_openinference_llm_tool_and_agent_spans() -> None:
    spans = load("openinference-exfil")
    llms = [s for s in spans if openinference.is_model_span(s)]
    outputs = [openinference.model_output(s) for s in llms]
    assert [[(r.name, r.call_id) for r in o.requests] for o in outputs] == [
        [("fetch_weather", FETCH_ID)],
        [("send_report", REPORT_ID)],
        [],
    ]
    assert outputs[0].finish_reasons == ["tool_calls"] and outputs[2].text == ANSWER
    tools = [openinference.tool_execution(s) for s in spans if openinference.is_tool_span(s)]
    assert [(t.name, t.call_id, t.arguments) for t in tools if t] == [
        ("fetch_weather", None, {"city": "Paris"}),  # OITracer records no call id
        ("send_report", None, LEAKED),
    ]
    (agent,) = [s for s in spans if openinference.is_agent_span(s)]
    assert openinference.agent_output(agent) == ANSWER
    _, results, _ = openinference.input_history(llms[-1])
    assert set(results) == {FETCH_ID, REPORT_ID}


def test_openinference_hidden_outputs() -> None:
    spans = load("openinference-no-content")
    output = openinference.model_output(next(s for s in spans if openinference.is_model_span(s)))
    assert not output.readable and output.tool_request is ToolRequest.TOOLS
    tool = openinference.tool_execution(next(s for s in spans if openinference.is_tool_span(s)))
    assert tool is not None and not tool.arguments_captured and not tool.result_captured
    agent = next(s for s in spans if openinference.is_agent_span(s))
    assert openinference.agent_output(agent) is None


def test_openinference_http_spans_use_legacy_names() -> None:
    (get,) = named(load("openinference-exfil"), "GET")
    ((kind, details, _, _),) = side_effects(get)
    assert (kind, details["method"], details["host"], details["status_code"]) == (
        "http_request",
        "GET",
        "localhost",
        200,
    )
    assert details["port"] == int(details["url"].split(":")[2].split("/")[0])


# --- OpenLLMetry ------------------------------------------------------------------------------


def test_openllmetry_current_release_writes_genai_messages() -> None:
    spans = load("openllmetry-exfil")
    chats = named(spans, "openai.chat")
    assert all(genai.is_model_span(s) and not openllmetry.is_model_span(s) for s in chats)
    first = genai.model_output(chats[0])
    assert first.requests[0].arguments == {"city": "Paris"}  # an object, not a string
    assert first.finish_reasons == ["tool_call"] and first.tool_request is ToolRequest.TOOLS
    _, results, _ = genai.input_history(chats[-1])  # tool_call_response parts use "response"
    assert results[FETCH_ID] == {"city": "Paris", "temp_c": 18, "conditions": "light rain"}
    assert genai.model_output(chats[-1]).text == ANSWER
    assert [s.name for s in spans if not s.attributes] == [
        "weather-agent",
        "fetch_weather",
        "send_report",
    ]  # hand-made agent/tool spans: no convention marks them


def test_openllmetry_legacy_flattened_attributes() -> None:
    spans = load("openllmetry-legacy-attrs")
    chats = named(spans, "openai.chat")
    assert all(openllmetry.is_model_span(s) for s in chats)
    outputs = [openllmetry.model_output(s) for s in chats]
    assert [[(r.name, r.call_id, r.arguments) for r in o.requests] for o in outputs] == [
        [("fetch_weather", FETCH_ID, {"city": "Paris"})],
        [("send_report", REPORT_ID, LEAKED)],
        [],
    ]
    assert outputs[0].finish_reasons[0] == "tool_calls" and outputs[2].text == ANSWER
    arguments, results, _ = openllmetry.input_history(chats[-1])
    assert set(arguments) == set(results) == {FETCH_ID, REPORT_ID}


@pytest.mark.parametrize("case", ["openllmetry-no-content", "openllmetry-events"])
def test_openllmetry_without_content_keeps_finish_reasons(case: str) -> None:
    chats = named(load(case), "openai.chat")
    outputs = [genai.model_output(s) for s in chats]
    assert not any(o.readable for o in outputs)
    assert [o.tool_request for o in outputs] == [
        ToolRequest.TOOLS,
        ToolRequest.TOOLS,
        ToolRequest.NO_TOOLS,
    ]


def test_openllmetry_http_spans_carry_both_flavours() -> None:
    (post,) = named(load("openllmetry-exfil"), "POST")
    ((_, details, _, _),) = side_effects(post)
    assert details["host"] == "127.0.0.2" and details["method"] == "POST"

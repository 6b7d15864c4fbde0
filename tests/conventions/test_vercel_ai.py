"""Vercel AI SDK: every recording of AI SDK 7 (GenAI spans, and ``LegacyOpenTelemetry``'s
``ai.*`` spans) and AI SDK 6, read end to end; then hand-built quirks of the ``ai.*``
family the recordings cannot show (AI SDK 3/4 keys, other operations, odd values).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
import recorded
from span_factory import event, span

from rampart_otel.channels import ChannelState
from rampart_otel.conventions import finish_reasons, vercel_ai
from rampart_otel.conventions.finish_reasons import ToolRequest
from rampart_otel.conventions.registry import unread_content
from rampart_otel.model import AgentRun, Span, ToolCallStatus
from rampart_otel.normalize import normalize
from rampart_otel.processors.stitch import assemble

OBSERVED, PARTIAL, UNOBSERVED = ChannelState.OBSERVED, ChannelState.PARTIAL, ChannelState.UNOBSERVED
EXECUTED, ERROR = ToolCallStatus.EXECUTED, ToolCallStatus.ERROR
HTTP, DB = "side_effects.http_request", "side_effects.db_query"

FETCH = ("fetch_weather", "call_HQ4u7L01M0rfvg6tE5340Yes")
REPORT = ("send_report", "call_9PgSUFTL1mg6rbnxBQoWeR8V")
NOTE = ("save_note", "call_AgwzP8FMMUElLaGjnNlhmh7k")
BENIGN_FETCH = ("fetch_weather", "call_zBYNAojjJddAZJUPXn5wceVB")
CITY = {"city": "Paris"}
WEATHER = {"city": "Paris", "temp_c": 18, "conditions": "light rain"}
LEAKED = {"data": "Paris 18C light rain; customer=ACME-4471; api_token=tok_live_9f3a"}
RECEIVED = {"status": "received", "bytes": 78}  # a string the tool returned, decoded once more
NOTE_ARGS = {"text": "Paris: 18C, light rain"}
ANSWER = "It is 18°C with light rain in Paris. I have filed the weather report and saved a note."
BENIGN_ANSWER = "It is 18°C with light rain in Paris. Take an umbrella."
INSERT = "INSERT INTO notes (text) VALUES (?)"
# Side effects: (kind, method or statement, host or span name, tool call index).
EXFIL_EFFECTS = [
    ("http_request", "GET", "localhost", 0),
    ("http_request", "POST", "127.0.0.2", 1),
    ("db_query", INSERT, "run: INSERT", 2),  # the prepare: span is its preparation
]
BENIGN_EFFECTS = [("http_request", "GET", "localhost", 0)]


@dataclass(frozen=True)
class Case:
    calls: list[tuple[Any, ...]]  # (name, id, status, arguments, result); None: not captured
    effects: list[tuple[Any, ...]]
    answer: str | None
    root: str  # the span the answer is read from
    convention: str  # which convention reports the calls


def exfil(convention: str, root: str, error_result: Any = None) -> Case:
    report = (
        (*REPORT, ERROR, LEAKED, error_result)
        if error_result
        else (*REPORT, EXECUTED, LEAKED, RECEIVED)
    )
    return Case(
        [(*FETCH, EXECUTED, CITY, WEATHER), report, (*NOTE, EXECUTED, NOTE_ARGS, "saved note 1")],
        EXFIL_EFFECTS,
        ANSWER,
        root,
        convention,
    )


def no_content(convention: str, root: str) -> Case:
    calls = [(*call, EXECUTED, None, None) for call in (FETCH, REPORT, NOTE)]
    return Case(calls, EXFIL_EFFECTS, None, root, convention)


def benign(convention: str, root: str) -> Case:
    return Case(
        [(*BENIGN_FETCH, EXECUTED, CITY, WEATHER)], BENIGN_EFFECTS, BENIGN_ANSWER, root, convention
    )


V7, V7_LEGACY, V6 = "invoke_agent gpt-4o-mini", "ai.generateText", "ai.generateText"
CASES = {
    "vercel-ai/vercel-ai-exfil": exfil("gen_ai", V7),
    "vercel-ai/vercel-ai-benign": benign("gen_ai", V7),
    "vercel-ai/vercel-ai-no-content": no_content("gen_ai", V7),
    # The failed call's error text comes back to the model in the next chat span's input.
    "vercel-ai/vercel-ai-tool-error": exfil("gen_ai", V7, "TypeError: fetch failed"),
    "vercel-ai/vercel-ai-legacy": exfil("vercel_ai", V7_LEGACY),
    "vercel-ai/vercel-ai-legacy-no-content": no_content("vercel_ai", V7_LEGACY),
    "vercel-ai-v6/vercel-ai-v6-exfil": exfil("vercel_ai", V6),
    "vercel-ai-v6/vercel-ai-v6-benign": benign("vercel_ai", V6),
    "vercel-ai-v6/vercel-ai-v6-no-content": no_content("vercel_ai", V6),
    # ai.prompt.messages sends it back as {"type": "error-text", "value": "fetch failed"}.
    "vercel-ai-v6/vercel-ai-v6-tool-error": exfil("vercel_ai", V6, "fetch failed"),
}


def load(case: str) -> list[Span]:
    return sorted(recorded.spans(case), key=lambda s: s.start_ns or 0)


def agent_of(case: str) -> tuple[AgentRun, dict[str, Span]]:
    spans = load(case)
    (run,) = assemble([spans])
    return normalize(run), {s.span_id: s for s in spans}


def effect_row(effect: Any, spans: dict[str, Span]) -> tuple[Any, ...]:
    details = effect.details
    if effect.kind == "db_query":
        where = spans[effect.span_id].name
        return (effect.kind, details["statement"], where, effect.tool_call_index)
    return (effect.kind, details["method"], details["host"], effect.tool_call_index)


def reasons(agent: AgentRun, key: str) -> str:
    return " | ".join(agent.coverage.get(key).reasons)


# --- every recording, end to end ---------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(CASES))
def test_tool_calls_once_each_with_arguments_results_and_status(case: str) -> None:
    expected = CASES[case]
    agent, _ = agent_of(case)
    assert [
        (
            c.name,
            c.call_id,
            c.status,
            c.arguments if c.arguments_captured else None,
            c.result if c.result_captured else None,
        )
        for c in agent.tool_calls
    ] == expected.calls
    assert all(call.conventions == [expected.convention] for call in agent.tool_calls)


@pytest.mark.parametrize("case", sorted(CASES))
def test_side_effects_are_the_tools_own_and_attributed(case: str) -> None:
    """The model's POST /v1/responses is transport; the tools' requests are side effects even
    where the tool span sits inside the model step span (legacy); one INSERT is one query."""
    agent, spans = agent_of(case)
    assert [effect_row(e, spans) for e in agent.side_effects] == CASES[case].effects
    assert all("/v1/responses" not in str(e.details.get("url")) for e in agent.side_effects)


@pytest.mark.parametrize("case", sorted(CASES))
def test_response(case: str) -> None:
    expected = CASES[case]
    agent, spans = agent_of(case)
    assert agent.response.text == expected.answer
    if expected.answer is not None:
        assert spans[agent.response.span_id].name == expected.root
        assert agent.response.earlier == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_coverage_states_and_reasons(case: str) -> None:
    expected = CASES[case]
    agent, _ = agent_of(case)
    assert agent.integrity == []  # nothing not understood: agent_step, ai.* spans all read
    count = len(expected.calls)
    calls = f"{count} tool execution span" + ("s" if count > 1 else "")
    assert agent.coverage.get("tool_calls").state is OBSERVED
    assert reasons(agent, "tool_calls").startswith(f"{calls} in the run")
    assert reasons(agent, HTTP).startswith(
        f"{len([e for e in expected.effects if e[0] == 'http_request'])} http_request"
    )
    if count == 3:
        # save_note recorded only db_query, the other calls only http_request: each kind's
        # place at the calls of the other is silent, so neither is observed.
        assert reasons(agent, DB).startswith(f"1 db_query side effect in the run: sqlite3 {INSERT}")
        recorded.assert_exfil_kinds_partial(agent)
        assert agent.coverage.level.value == "tool_only"
    else:
        assert agent.coverage.get(HTTP).state is OBSERVED  # one call, one kind
        assert agent.coverage.get(DB).state is UNOBSERVED
        assert agent.coverage.level.value == "tool_and_side_effects"
    if expected.answer is not None:
        for key, what in (("tool_calls.arguments", "arguments"), ("tool_calls.results", "results")):
            assert agent.coverage.get(key).state is OBSERVED
            assert f"{what} captured on every" in reasons(agent, key)
        assert agent.coverage.get("response").state is OBSERVED
        assert f"output of agent span {expected.root!r}" in reasons(agent, "response")
    else:  # content capture off: only names and ids of the executed calls are left
        assert "the calls are read from the tool execution spans" in reasons(agent, "tool_calls")
        for key in ("response", "tool_calls.arguments", "tool_calls.results"):
            assert agent.coverage.get(key).state is UNOBSERVED
            assert "content capture off" in reasons(agent, key)
            assert "form not understood" not in reasons(agent, key)


# --- the ai.* readings, on the recorded spans -------------------------------------------------


def named(case: str, name: str) -> list[Span]:
    return [s for s in load(case) if s.name == name]


def test_v6_model_spans_requested_calls_with_raw_argument_text() -> None:
    steps = named("vercel-ai-v6/vercel-ai-v6-exfil", "ai.generateText.doGenerate")
    outputs = [vercel_ai.model_output(s) for s in steps]
    assert [[(r.name, r.call_id, r.arguments) for r in o.requests] for o in outputs] == [
        [(*FETCH, CITY)],  # "input": "{\"city\": \"Paris\"}", the provider's own text
        [(*REPORT, LEAKED)],
        [(*NOTE, NOTE_ARGS)],
        [],
    ]
    # v6 leaves ai.response.text out on tool turns: recorded outputs, no text.
    assert all(o.readable and o.text_captured for o in outputs)
    assert [o.text for o in outputs] == ["", "", "", ANSWER]
    assert [o.finish_reasons for o in outputs] == [["tool-calls"]] * 3 + [["stop"]]
    assert [o.tool_request for o in outputs] == [ToolRequest.TOOLS] * 3 + [ToolRequest.NO_TOOLS]
    assert unread_content(steps[-1]) is None  # ai.prompt.messages is input, read as history


def test_legacy_root_answers_and_its_merged_calls_are_not_requests() -> None:
    (root,) = named("vercel-ai/vercel-ai-legacy", "ai.generateText")
    assert "ai.response.toolCalls" in root.attributes
    report = vercel_ai.read(root)
    assert report is not None and report.agent and report.output is None
    assert report.answer == ANSWER
    first = named("vercel-ai/vercel-ai-legacy", "ai.generateText.doGenerate")[0]
    (request,) = vercel_ai.model_output(first).requests
    assert (request.name, request.call_id, request.arguments) == (*FETCH, CITY)  # input object


def test_tool_spans_decode_stringified_results_and_mark_errors() -> None:
    tools = [
        vercel_ai.tool_execution(s)
        for s in named("vercel-ai-v6/vercel-ai-v6-tool-error", "ai.toolCall")
    ]
    assert [(t.name, t.call_id, t.arguments, t.result, t.error) for t in tools] == [
        (*FETCH, CITY, WEATHER, False),
        (*REPORT, LEAKED, None, True),  # ERROR status + exception event, no ai.toolCall.result
        (*NOTE, NOTE_ARGS, "saved note 1", False),
    ]
    assert not tools[1].result_captured


def test_history_unwraps_the_sdk_tool_result_outputs() -> None:
    last = named("vercel-ai-v6/vercel-ai-v6-tool-error", "ai.generateText.doGenerate")[-1]
    arguments, results, _ = vercel_ai.input_history(last)
    assert arguments == {FETCH[1]: CITY, REPORT[1]: LEAKED, NOTE[1]: NOTE_ARGS}
    assert results == {FETCH[1]: WEATHER, REPORT[1]: "fetch failed", NOTE[1]: "saved note 1"}


def test_without_content_outputs_are_unreadable_but_finish_reasons_stay() -> None:
    steps = named("vercel-ai/vercel-ai-legacy-no-content", "ai.generateText.doGenerate")
    outputs = [vercel_ai.model_output(s) for s in steps]
    assert not any(o.readable or o.text_captured for o in outputs)
    assert [o.finish_reasons for o in outputs] == [["tool-calls"]] * 3 + [["stop"]]


# --- hand-built: other SDK versions and operations --------------------------------------------


def ai_span(operation: str, attributes: dict[str, Any] | None = None, **options: Any) -> Span:
    return span(operation, {"ai.operationId": operation, **(attributes or {})}, **options)


def test_ai_sdk_3_result_keys() -> None:
    step = ai_span(
        "ai.generateText.doGenerate",
        {
            "ai.result.toolCalls": json.dumps(
                [
                    {
                        "toolCallType": "function",
                        "toolCallId": "c1",
                        "toolName": "f",
                        "args": '{"a": 1}',
                    }
                ]
            ),
            "ai.finishReason": "tool-calls",
        },
    )
    output = vercel_ai.model_output(step)
    assert output.readable and [(r.name, r.call_id, r.arguments) for r in output.requests] == [
        ("f", "c1", {"a": 1})
    ]
    assert output.tool_request is ToolRequest.TOOLS
    root = ai_span("ai.generateText", {"ai.result.text": "Done."})
    assert vercel_ai.read(root).answer == "Done."


def tool_result(call_id: str, **fields: Any) -> dict[str, Any]:
    return {"role": "tool", "content": [{"type": "tool-result", "toolCallId": call_id, **fields}]}


def test_ai_sdk_4_history_and_tool_keys() -> None:
    call = {"type": "tool-call", "toolCallId": "c1", "toolName": "f", "args": {"a": 1}}
    messages = [
        {"role": "assistant", "content": [call]},
        tool_result("c1", result='{"ok": true}'),  # AI SDK 4: the raw value
        tool_result("c2", output={"type": "json", "value": [1, 2]}),
        tool_result("c3", output={"type": "execution-denied", "reason": "no"}),  # never ran
    ]
    step = ai_span("ai.streamText.doStream", {"ai.prompt.messages": json.dumps(messages)})
    assert vercel_ai.input_history(step)[:2] == (
        {"c1": {"a": 1}},
        {"c1": {"ok": True}, "c2": [1, 2]},
    )
    tool = ai_span(
        "ai.toolCall",
        {
            "ai.toolCall.name": "f",
            "ai.toolCall.input": '{"a": 1}',
            "ai.toolCall.output": json.dumps(json.dumps({"ok": 1})),
        },
    )
    report = vercel_ai.tool_execution(tool)
    assert (report.arguments, report.result, report.error) == ({"a": 1}, {"ok": 1}, False)


def test_stream_and_object_operations() -> None:
    stream = vercel_ai.read(ai_span("ai.streamText.doStream", {"ai.response.text": "Hi."}))
    assert stream.model and stream.output.text == "Hi." and stream.output.readable
    obj = ai_span("ai.generateObject.doGenerate", {"ai.response.object": '{"x": 1}'})
    output = vercel_ai.model_output(obj)
    assert output.readable and output.text == '{"x": 1}' and output.requests == []
    root = vercel_ai.read(ai_span("ai.streamObject", {"ai.response.object": '{"x": 1}'}))
    assert root.agent and root.answer == '{"x": 1}'


def test_neutral_and_unknown_operations() -> None:
    for operation in ("ai.embed", "ai.embedMany.doEmbed", "ai.rerank"):
        report = vercel_ai.read(ai_span(operation, {"ai.values": ["a"]}))
        assert report is not None and not (report.model or report.agent or report.execution)
        assert report.not_understood == []
    unknown = vercel_ai.read(ai_span("ai.generateVideo"))
    assert unknown.not_understood == ["ai.operationId 'ai.generateVideo'"]
    assert vercel_ai.read(span("ai.toolCall", {"ai.toolCall.name": "f"})) is None  # no operation id


def test_tool_span_without_a_name_is_not_understood_but_still_a_run() -> None:
    report = vercel_ai.read(ai_span("ai.toolCall", {"ai.toolCall.id": "c1"}))
    assert report.execution is not None and report.execution.executed
    assert report.not_understood == ["ai.toolCall span without ai.toolCall.name"]


def test_tool_error_from_an_exception_event_alone() -> None:
    tool = ai_span(
        "ai.toolCall",
        {"ai.toolCall.name": "f"},
        events=[event("exception", {"exception.message": "boom"})],
    )
    assert vercel_ai.tool_execution(tool).error


def test_tool_calls_not_an_array_is_not_understood() -> None:
    output = vercel_ai.model_output(
        ai_span(
            "ai.generateText.doGenerate",
            {"ai.response.toolCalls": "oops", "ai.response.finishReason": "tool-calls"},
        )
    )
    assert not output.readable and output.not_understood == [
        "ai.response.toolCalls (not a JSON array of calls)"
    ]


def test_ai_sdk_7_interrupted_is_known_and_proves_nothing() -> None:
    assert finish_reasons.known("interrupted")
    assert finish_reasons.classify("interrupted") is ToolRequest.UNKNOWN

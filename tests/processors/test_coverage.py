"""Coverage: every rule of DESIGN "Coverage", from hand-written spans and recorded samples."""

from __future__ import annotations

import json
import pathlib
from dataclasses import replace
from typing import Any

import pytest
from span_factory import mk

from rampart_otel.channels import (
    ChannelState,
    CoverageSource,
    ObservabilityLevel,
    assume,
    observability_level,
)
from rampart_otel.codecs.otlp_ids import UNDECODABLE, UNDECODABLE_KEY
from rampart_otel.model import AgentRun, Run, Scope, Span
from rampart_otel.normalize import normalize

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "samples" / "traces"
TRACE = "0af7651916cd43dd8448eb211c80319c"
OBSERVED, PARTIAL, UNOBSERVED = ChannelState.OBSERVED, ChannelState.PARTIAL, ChannelState.UNOBSERVED
CORE = ("response", "tool_calls", "tool_calls.arguments", "tool_calls.results")
HTTP = "side_effects.http_request"


def run_of(*spans: Span) -> AgentRun:
    return normalize(Run(TRACE, sorted({s.trace_id for s in spans}), list(spans)))


def state(agent: AgentRun, key: str) -> ChannelState:
    return agent.coverage.get(key).state


def reasons(agent: AgentRun, key: str) -> str:
    return " | ".join(agent.coverage.get(key).reasons)


def chat(output: list[dict[str, Any]] | None, finish: list[str] | None = None) -> dict[str, Any]:
    attrs: dict[str, Any] = {"gen_ai.operation.name": "chat"}
    if output is not None:
        attrs["gen_ai.output.messages"] = json.dumps(output)
    if finish is not None:
        attrs["gen_ai.response.finish_reasons"] = finish
    return attrs


def said(text: str) -> list[dict[str, Any]]:
    return [
        {"role": "assistant", "parts": [{"type": "text", "content": text}], "finish_reason": "stop"}
    ]


def asked(name: str, call_id: str, arguments: Any = None) -> list[dict[str, Any]]:
    part: dict[str, Any] = {"type": "tool_call", "id": call_id, "name": name}
    if arguments is not None:
        part["arguments"] = arguments
    return [{"role": "assistant", "parts": [part], "finish_reason": "tool_call"}]


def execute(name: str, call_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call_id,
        **extra,
    }


GET = {"http.request.method": "GET", "url.full": "https://weather.example/today"}
AGENT = {"gen_ai.operation.name": "invoke_agent", "final_result": "Done."}


def full_run(**root: Any) -> list[Span]:
    """Agent → model asks fetch → tool runs (GET) → model answers; all content captured."""
    return [
        mk("a0", "invoke_agent", AGENT, end=1000, **root),
        mk("m1", "chat", chat(asked("fetch", "c1", {"q": 1})), parent="a0", start=10),
        mk(
            "t1",
            "execute_tool fetch",
            execute("fetch", "c1", **{"gen_ai.tool.call.result": "ok"}),
            parent="a0",
            start=30,
            end=60,
        ),
        mk("h1", "GET", GET, parent="t1", kind="CLIENT", start=31),
        mk("m2", "chat", chat(said("Done.")), parent="a0", start=70),
    ]


# --- the whole picture ------------------------------------------------------------------------


def test_fully_instrumented_run_is_observed_everywhere() -> None:
    agent = run_of(*full_run())
    assert {key: state(agent, key) for key in (*CORE, HTTP)} == dict.fromkeys(
        (*CORE, HTTP), OBSERVED
    )
    assert agent.coverage.level is ObservabilityLevel.TOOL_AND_SIDE_EFFECTS
    assert agent.integrity == []
    assert "1 tool execution span" in reasons(agent, "tool_calls")
    assert "GET https://weather.example/today" in reasons(agent, HTTP)


# --- side_effects.<kind> ----------------------------------------------------------------------


def test_http_instrumentation_absent_leaves_http_unobserved() -> None:
    spans = [s for s in full_run() if s.span_id != "h1"]
    agent = run_of(*spans)
    assert state(agent, HTTP) is UNOBSERVED
    assert "declared no" in reasons(agent, HTTP)
    # ...and which tool could have made a request unseen: the one with no I/O span.
    assert "tool call 'fetch' (span t1) recorded no I/O span" in reasons(agent, HTTP)
    assert agent.coverage.level is ObservabilityLevel.TOOL_ONLY


def test_transport_http_alone_does_not_observe_http() -> None:
    """Transport spans show the model client's HTTP library is instrumented, not the tools'."""
    spans = [s for s in full_run() if s.span_id != "h1"]
    spans.append(
        mk(
            "x1",
            "POST",
            {
                "http.request.method": "POST",
                "url.full": "https://api.openai.com/v1/chat/completions",
            },
            parent="m1",
            kind="CLIENT",
            start=11,
        )
    )
    agent = run_of(*spans)
    assert agent.side_effects == []
    assert state(agent, HTTP) is UNOBSERVED
    assert "model's own transport" in reasons(agent, HTTP)


def test_declared_coverage_is_observed_declared() -> None:
    spans = [
        s
        for s in full_run(
            resource={
                "service.name": "weather-agent",
                "rampart.coverage": [HTTP, "side_effects.db_query", "response"],
            }
        )
        if s.span_id != "h1"
    ]
    agent = run_of(*spans)
    for key in (HTTP, "side_effects.db_query"):
        channel = agent.coverage.get(key)
        assert (channel.state, channel.source) == (OBSERVED, CoverageSource.DECLARED)
        assert "declared by service 'weather-agent'" in channel.reasons[0]
    assert agent.coverage.get("response").source is CoverageSource.INFERRED  # not declarable
    assert agent.coverage.level is ObservabilityLevel.TOOL_AND_SIDE_EFFECTS


def test_declared_and_seen_stays_inferred() -> None:
    agent = run_of(*full_run(resource={"service.name": "w", "rampart.coverage": [HTTP]}))
    channel = agent.coverage.get(HTTP)
    assert channel.source is CoverageSource.INFERRED and "also declared" in channel.reasons[-1]


def test_other_side_effect_kinds_observed_by_their_spans() -> None:
    agent = run_of(
        *full_run(),
        mk(
            "d1",
            "SELECT",
            {"db.system": "sqlite", "db.statement": "SELECT 1"},
            parent="t1",
            kind="CLIENT",
            start=40,
        ),
        mk(
            "p1",
            "tools/call x",
            {"mcp.method.name": "resources/read", "mcp.resource.uri": "file:///x"},
            parent="a0",
            kind="CLIENT",
            start=80,
        ),
    )
    assert state(agent, "side_effects.db_query") is OBSERVED  # recorded in the one call
    # The MCP request is the agent's, outside the call: fetch recorded DB and HTTP spans but
    # none of MCP, so its mcp_request place is silent and the kind is partial, naming it.
    assert state(agent, "side_effects.mcp_request") is PARTIAL
    assert (
        "tool call 'fetch' (span t1) recorded db_query, http_request but no mcp_request span"
        in reasons(agent, "side_effects.mcp_request")
    )
    assert state(agent, "side_effects.message_publish") is UNOBSERVED


# --- response / tool_calls / arguments / results ----------------------------------------------


def test_content_capture_off() -> None:
    """pydantic-ai include_content=False: parts listed without content."""
    agent = run_of(
        mk("a0", "invoke_agent", {"gen_ai.operation.name": "invoke_agent"}, end=1000),
        mk(
            "m1",
            "chat",
            chat(
                [
                    {
                        "role": "assistant",
                        "parts": [{"type": "tool_call", "id": "c1", "name": "fetch"}],
                    }
                ]
            ),
            parent="a0",
            start=10,
        ),
        mk("t1", "execute_tool fetch", execute("fetch", "c1"), parent="a0", start=30),
        mk(
            "m2",
            "chat",
            chat([{"role": "assistant", "parts": [{"type": "text"}]}]),
            parent="a0",
            start=70,
        ),
    )
    assert state(agent, "response") is UNOBSERVED
    assert "content capture off" in reasons(agent, "response")
    assert state(agent, "tool_calls") is OBSERVED
    assert state(agent, "tool_calls.arguments") is UNOBSERVED
    assert state(agent, "tool_calls.results") is UNOBSERVED
    assert "fetch (c1)" in reasons(agent, "tool_calls.arguments")


def test_no_model_span_leaves_response_unobserved() -> None:
    agent = run_of(mk("r0", "job", {}))
    assert state(agent, "response") is UNOBSERVED and state(agent, "tool_calls") is UNOBSERVED
    assert state(agent, "tool_calls.arguments") is UNOBSERVED
    assert "no agent or model-inference span" in reasons(agent, "response")
    assert agent.coverage.level is ObservabilityLevel.RESPONSE_ONLY


def test_a_model_that_asked_for_no_tool_asked_for_none() -> None:
    agent = run_of(
        mk("a0", "agent", {}, end=100), mk("m1", "chat", chat(said("Hi")), parent="a0", start=1)
    )
    assert {key: state(agent, key) for key in CORE} == dict.fromkeys(CORE, OBSERVED)
    assert "no tool call seen" in reasons(agent, "tool_calls.arguments")


def test_unreadable_output_with_tool_finish_reason_is_partial() -> None:
    agent = run_of(
        mk("a0", "agent", {}, end=100),
        mk("m1", "openai.chat", chat(None, ["tool_call"]), parent="a0", start=1),
        mk("m2", "openai.chat", chat(None, ["stop"]), parent="a0", start=20),
    )
    assert state(agent, "tool_calls") is PARTIAL
    assert "finished with 'tool_call'" in reasons(agent, "tool_calls")
    assert state(agent, "tool_calls.arguments") is PARTIAL  # never better than tool_calls


def test_unreadable_output_that_finished_without_tools_observes_tool_calls() -> None:
    agent = run_of(
        mk("a0", "agent", {}, end=100), mk("m1", "chat", chat(None, ["stop"]), parent="a0", start=1)
    )
    assert state(agent, "tool_calls") is OBSERVED and state(agent, "response") is UNOBSERVED
    assert "asked for no tool" in reasons(agent, "tool_calls")


@pytest.mark.parametrize(
    ("reason", "provider"),
    [("tool-calls", None), ("zz_new_reason", None), ("length", None), ("STOP", "gcp.gemini")],
)
def test_unreadable_output_whose_finish_reason_does_not_prove_no_tool_is_partial(
    reason: str, provider: str | None
) -> None:
    """Only a reason known to mean "finished, no tool" proves absence (no false SAFE)."""
    attributes = chat(None, [reason])
    if provider:
        attributes["gen_ai.provider.name"] = provider
    agent = run_of(
        mk("a0", "agent", {}, end=100), mk("m1", "chat", attributes, parent="a0", start=1)
    )
    assert state(agent, "tool_calls") is PARTIAL
    text = reasons(agent, "tool_calls")
    assert repr(reason) in text and "asked for no tool" not in text
    if reason == "zz_new_reason":
        assert "not understood" in text


def test_span_of_an_agent_family_no_convention_knows_caps_model_channels() -> None:
    spans = [*full_run(), mk("x1", "ai.toolCall", {"ai.toolCall.name": "send"}, parent="a0")]
    agent = run_of(*spans)
    (finding,) = agent.integrity
    assert finding.kind == "not_understood" and "Vercel AI SDK" in finding.message
    assert {key: state(agent, key) for key in CORE} == dict.fromkeys(CORE, PARTIAL)
    assert state(agent, HTTP) is OBSERVED  # side effects have spans of their own


def test_output_part_not_understood_caps_tool_calls() -> None:
    output = [{"role": "assistant", "parts": [{"type": "function_call", "name": "x"}]}]
    agent = run_of(mk("a0", "agent", {}, end=100), mk("m1", "chat", chat(output), parent="a0"))
    assert state(agent, "tool_calls") is PARTIAL
    assert "part type 'function_call'" in reasons(agent, "tool_calls")


def test_content_in_a_form_not_read_is_named_not_called_capture_off() -> None:
    hidden = {"gen_ai.operation.name": "chat", "vendor.llm.output_text": "Sunny."}
    agent = run_of(mk("a0", "agent", {}, end=100), mk("m1", "chat", hidden, parent="a0"))
    text = reasons(agent, "response")
    assert "attribute 'vendor.llm.output_text'" in text and "not understood" in text
    assert "content capture off" not in text


def test_a_trace_without_agent_model_or_tool_span_is_a_fragment() -> None:
    agent = run_of(mk("h1", "POST", GET, kind="CLIENT", parent="ffffffffffffffff"))
    (finding,) = agent.integrity
    assert finding.kind == "fragment" and agent.fragment is finding
    assert state(agent, HTTP) is PARTIAL and "fragment" in reasons(agent, HTTP)
    # CrewAI's storage statements before kickoff are such traces: no context was lost.
    assert "work done outside any traced run" in finding.message


def smolagents(item: Span) -> Span:
    item.scope = Scope("openinference.instrumentation.smolagents")
    return item


def test_the_answer_tool_span_attests_the_last_turn_ran_no_untraced_tool() -> None:
    """smolagents, content off: no finish reasons, the last turn is followed only by the
    final_answer TOOL span. It is no tool call, but it shows that turn's tools are traced."""
    hidden = {"openinference.span.kind": "LLM", "output.value": "__REDACTED__"}
    tool = {"openinference.span.kind": "TOOL", "input.value": "__REDACTED__"}
    spans = [
        mk("a0", "agent.run", {"openinference.span.kind": "AGENT"}, end=500),
        mk("m1", "OpenAIModel.generate", hidden, parent="a0", start=1),
        mk("t1", "SimpleTool", {**tool, "tool.name": "fetch"}, parent="a0", start=20),
        mk("m2", "OpenAIModel.generate", hidden, parent="a0", start=40),
    ]
    answer = mk(
        "f1", "FinalAnswerTool", {**tool, "tool.name": "final_answer"}, parent="a0", start=60
    )
    agent = run_of(*map(smolagents, [*spans, answer]))
    assert [call.name for call in agent.tool_calls] == ["fetch"]
    assert state(agent, "tool_calls") is OBSERVED
    assert "answer tool 'FinalAnswerTool' (span f1), which is no tool call" in reasons(
        agent, "tool_calls"
    )
    without = run_of(*map(smolagents, spans))
    assert state(without, "tool_calls") is PARTIAL
    assert "(span m2) recorded no finish reason" in reasons(without, "tool_calls")


def test_unreadable_output_without_finish_reason_is_unobserved() -> None:
    agent = run_of(
        mk("a0", "agent", {}, end=100), mk("m1", "chat", chat(None), parent="a0", start=1)
    )
    assert state(agent, "tool_calls") is UNOBSERVED
    assert state(agent, "tool_calls.results") is UNOBSERVED


def test_unreadable_turn_that_asked_for_tools_but_ran_no_traced_tool_is_partial() -> None:
    """Tool spans exist, but one turn asked for tools and no tool span follows it."""
    agent = run_of(
        mk("a0", "agent", {}, end=500),
        mk("m1", "chat", chat(None, ["tool_call"]), parent="a0", start=1),
        mk("t1", "execute_tool a", execute("a", "c1"), parent="a0", start=20),
        mk("m2", "chat", chat(None, ["tool_call"]), parent="a0", start=40),
        mk("m3", "chat", chat(None, ["stop"]), parent="a0", start=80),
    )
    assert state(agent, "tool_calls") is PARTIAL
    assert "(span m2) asked for tools" in reasons(agent, "tool_calls")


def test_unreadable_turns_each_followed_by_a_tool_span_stay_observed() -> None:
    agent = run_of(
        mk("a0", "agent", {}, end=500),
        mk("m1", "chat", chat(None, ["tool_call"]), parent="a0", start=1),
        mk("t1", "execute_tool a", execute("a", "c1"), parent="a0", start=20),
        mk("m2", "chat", chat(None, ["stop"]), parent="a0", start=40),
    )
    assert state(agent, "tool_calls") is OBSERVED
    assert "read from the tool execution spans" in reasons(agent, "tool_calls")


def test_unreadable_step_span_holding_its_tool_runs_stays_observed() -> None:
    """The Vercel AI SDK's legacy step span: model call and tool runs inside one span."""
    agent = run_of(
        mk("a0", "agent", {}, end=500),
        mk("m1", "chat", chat(None, ["tool_call"]), parent="a0", start=1, end=100),
        mk("t1", "execute_tool a", execute("a", "c1"), parent="m1", start=20, end=60),
        mk("m2", "chat", chat(None, ["stop"]), parent="a0", start=120),
    )
    assert state(agent, "tool_calls") is OBSERVED
    assert "read from the tool execution spans" in reasons(agent, "tool_calls")


def test_tool_span_starting_while_its_turn_still_streams_counts_for_that_turn() -> None:
    """An agent may start a call before the model span that asked for it ends (Claude Code)."""
    agent = run_of(
        mk("a0", "agent", {}, end=500),
        mk("m1", "chat", chat(None, ["tool_call"]), parent="a0", start=1, end=100),
        mk("t1", "execute_tool a", execute("a", "c1"), parent="a0", start=50, end=150),
        mk("m2", "chat", chat(None, ["stop"]), parent="a0", start=200, end=300),
    )
    assert state(agent, "tool_calls") is OBSERVED


def test_tool_span_that_started_before_a_turn_does_not_count_for_it() -> None:
    agent = run_of(
        mk("a0", "agent", {}, end=500),
        mk("m1", "chat", chat(None, ["tool_call"]), parent="a0", start=1, end=100),
        mk("t1", "execute_tool a", execute("a", "c1"), parent="a0", start=50, end=150),
        mk("m2", "chat", chat(None, ["tool_call"]), parent="a0", start=60, end=300),
        mk("m3", "chat", chat(None, ["stop"]), parent="a0", start=400, end=450),
    )
    assert state(agent, "tool_calls") is PARTIAL
    assert "(span m2) asked for tools" in reasons(agent, "tool_calls")


def test_model_span_nested_in_a_turn_is_the_same_request_not_the_next_turn() -> None:
    """ADK v1: call_llm around generate_content; the tool runs while call_llm is open."""
    agent = run_of(
        mk("a0", "agent", {}, end=500),
        mk("m1", "call_llm", chat(None, ["tool_call"]), parent="a0", start=1, end=300),
        mk("m1c", "chat", chat(None, ["tool_call"]), parent="m1", start=2, end=100),
        mk("t1", "execute_tool a", execute("a", "c1"), parent="a0", start=150, end=200),
        mk("m2", "chat", chat(None, ["stop"]), parent="a0", start=400, end=450),
    )
    assert state(agent, "tool_calls") is OBSERVED


def test_a_call_reported_by_nested_tool_spans_counts_one_tool_span() -> None:
    mcp = {"mcp.method.name": "tools/call", "gen_ai.tool.name": "a", "gen_ai.tool.call.id": "c1"}
    agent = run_of(
        mk("a0", "agent", {}, end=500),
        mk("m1", "chat", chat(asked("a", "c1")), parent="a0", start=1, end=10),
        mk("t1", "execute_tool a", execute("a", "c1"), parent="a0", start=20, end=60),
        mk("t1m", "tools/call a", mcp, parent="t1", kind="CLIENT", start=21, end=59),
        mk("m2", "chat", chat(said("ok")), parent="a0", start=70),
    )
    assert len(agent.tool_calls) == 1
    assert reasons(agent, "tool_calls") == "1 tool execution span in the run"


def test_run_that_stopped_after_a_turn_asking_for_tools_has_no_answer() -> None:
    agent = run_of(
        mk(
            "a0", "invoke_agent", {"gen_ai.operation.name": "invoke_agent"}, end=500, status="ERROR"
        ),
        mk("m1", "chat", chat(asked("a", "c1", {"q": 1})), parent="a0", start=1, end=10),
        mk("t1", "execute_tool a", execute("a", "c1"), parent="a0", start=20, end=60),
    )
    assert agent.response.text is None  # not the "" of the turn that asked for a tool
    assert state(agent, "response") is UNOBSERVED
    why = reasons(agent, "response")
    assert "no final answer in the trace" in why and "asked for tools (a)" in why
    assert "the run ended with an error: agent span 'invoke_agent' (span a0)" in why


def test_some_unreadable_turns_without_finish_reason_is_partial() -> None:
    agent = run_of(
        mk("a0", "agent", {}, end=500),
        mk("m1", "chat", chat(None, ["stop"]), parent="a0", start=1),
        mk("m2", "chat", chat(None), parent="a0", start=40),
    )
    assert state(agent, "tool_calls") is PARTIAL
    assert "neither their output nor a finish reason" in reasons(agent, "tool_calls")


def test_arguments_on_some_calls_only_is_partial() -> None:
    agent = run_of(
        mk("a0", "agent", {}, end=100),
        mk(
            "t1",
            "execute_tool a",
            execute("a", "c1", **{"gen_ai.tool.call.arguments": "{}"}),
            parent="a0",
            start=1,
        ),
        mk("t2", "execute_tool b", execute("b", "c2"), parent="a0", start=20),
    )
    assert state(agent, "tool_calls.arguments") is PARTIAL
    assert "1 of 2" in reasons(agent, "tool_calls.arguments")


def test_requested_call_never_executed_needs_no_result_when_tools_are_traced() -> None:
    agent = run_of(
        mk("a0", "agent", {}, end=100),
        mk("m1", "chat", chat(asked("a", "c1", {}) + asked("b", "c2", {})), parent="a0", start=1),
        mk(
            "t1",
            "execute_tool a",
            execute("a", "c1", **{"gen_ai.tool.call.result": "r"}),
            parent="a0",
            start=20,
        ),
    )
    assert state(agent, "tool_calls.results") is OBSERVED


# --- integrity --------------------------------------------------------------------------------


def test_missing_inner_span_makes_every_channel_partial() -> None:
    spans = full_run()
    spans[3] = mk("h1", "GET", GET, parent="g1", kind="CLIENT", start=31)  # g1 never arrived
    agent = run_of(*spans)
    (finding,) = agent.integrity
    assert finding.kind == "split_run" and finding.channels == ["*"]
    assert sorted(finding.span_ids) == ["a0", "h1"] and "g1" in finding.message
    for key in (*CORE, HTTP):
        assert state(agent, key) is PARTIAL, key
        assert "spans are missing from inside the run" in reasons(agent, key)
    assert agent.coverage.level is ObservabilityLevel.RESPONSE_ONLY


def test_a_span_refused_for_its_ids_makes_every_channel_partial_naming_the_rule() -> None:
    """A placeholder (``codecs/otlp_ids``) in place of the GET: the run cannot prove the
    absence of anything, and the hint is to fix the ids, not to export more spans."""
    spans = full_run()
    spans[3] = replace(
        mk("0000000000000000", "", {}, parent="t1", start=31, kind="UNSPECIFIED"),
        refused="span_id",
    )
    agent = run_of(*spans)
    assert [finding.kind for finding in agent.integrity] == ["refused_span"]
    (finding,) = agent.integrity
    assert finding.channels == ["*"] and finding.span_ids == ["0000000000000000"]
    assert "span id must be 8 bytes, not all zero" in finding.message
    for key in CORE:
        assert state(agent, key) is PARTIAL, key
        assert "refused for breaking the OTLP id rule" in reasons(agent, key)
        assert "have the exporter write valid ids" in reasons(agent, key)
    assert state(agent, HTTP) is UNOBSERVED  # the GET's content (what it was) is not read


def test_a_span_that_could_not_be_decoded_makes_every_channel_partial_saying_why() -> None:
    """A placeholder of a span protobuf or JSON could not decode (``codecs/otlp_salvage``)
    in place of the GET, with its real ids: the run cannot prove the absence of anything,
    the reason says why it was not read, and the hint is to find what wrote it."""
    spans = full_run()
    gone = spans[3]
    spans[3] = replace(
        mk(gone.span_id, "", {UNDECODABLE_KEY: "String field had bad UTF-8"}, parent="t1"),
        kind="UNSPECIFIED",
        refused=UNDECODABLE,
    )
    agent = run_of(*spans)
    assert [finding.kind for finding in agent.integrity] == ["undecodable_span"]
    (finding,) = agent.integrity
    assert finding.channels == ["*"] and finding.span_ids == [gone.span_id]
    assert finding.message == (
        "1 span of the run could not be decoded, content not read: String field had bad "
        f"UTF-8 (span {gone.span_id})"
    )
    for key in CORE:
        assert state(agent, key) is PARTIAL, key
        assert "could not be decoded" in reasons(agent, key)
        assert "find what wrote the span the decoder could not read" in reasons(agent, key)
    assert state(agent, HTTP) is UNOBSERVED  # the GET's content (what it was) is not read


def test_partial_never_upgrades_unobserved() -> None:
    spans = [
        mk("a0", "agent", {}, end=100),
        mk("m1", "chat", chat(None), parent="a0", start=1),
        mk("o1", "orphan", {}, parent="ffffffffffffffff", start=5),
    ]
    agent = run_of(*spans)
    assert agent.integrity[0].kind == "split_run"
    assert state(agent, "response") is UNOBSERVED and state(agent, "tool_calls") is UNOBSERVED


def test_single_root_with_upstream_parent_is_whole() -> None:
    spans = full_run()
    spans[0] = mk("a0", "invoke_agent", AGENT, parent="b7ad6b7169203331", end=1000)
    agent = run_of(*spans)
    assert agent.integrity == []
    assert state(agent, HTTP) is OBSERVED and state(agent, "response") is OBSERVED


def test_single_root_whose_flags_say_its_parent_was_local_lost_its_root() -> None:
    """OTLP span flags: bit 8 says bit 9 is meaningful; bit 9 set means the parent is remote."""
    for flags, lost in ((0x100, True), (0x300, False), (0, False)):
        spans = full_run()
        root = mk("a0", "invoke_agent", AGENT, parent="b7ad6b7169203331", end=1000)
        root.flags = flags
        spans[0] = root
        agent = run_of(*spans)
        assert [f.kind for f in agent.integrity] == (["lost_root"] if lost else []), flags
        assert (state(agent, HTTP) is PARTIAL) is lost
        if lost:
            assert "same process" in reasons(agent, "response")


def test_session_of_whole_traces_is_whole() -> None:
    first = full_run()
    second = [
        mk("b0", "invoke_agent", AGENT, trace_id="1" * 32, start=2000, end=3000),
        mk("b1", "chat", chat(said("Again.")), parent="b0", trace_id="1" * 32, start=2010),
    ]
    agent = run_of(*first, *second)
    assert agent.integrity == []


def test_unended_model_span_caps_the_model_channels() -> None:
    spans = full_run()
    spans[4] = mk("m2", "chat", chat(said("Done.")), parent="a0", start=70, end=None)
    agent = run_of(*spans)
    (finding,) = agent.integrity
    assert finding.kind == "unended_span" and finding.span_ids == ["m2"]
    assert {key: state(agent, key) for key in CORE} == dict.fromkeys(CORE, PARTIAL)
    assert state(agent, HTTP) is OBSERVED
    assert "never ended" in reasons(agent, "response")


def test_unended_agent_span_caps_every_channel() -> None:
    spans = full_run()
    spans[0] = mk("a0", "invoke_agent", AGENT, end=None)
    agent = run_of(*spans)
    assert agent.integrity[0].channels == ["*"]
    assert all(state(agent, key) is PARTIAL for key in (*CORE, HTTP))


def test_unended_tool_span_caps_tool_and_side_effect_channels() -> None:
    spans = full_run()
    spans[2] = mk(
        "t1",
        "execute_tool fetch",
        execute("fetch", "c1", **{"gen_ai.tool.call.result": "ok"}),
        parent="a0",
        start=30,
        end=None,
    )
    agent = run_of(*spans)
    assert state(agent, "response") is OBSERVED
    assert all(state(agent, key) is PARTIAL for key in ("tool_calls", "tool_calls.results", HTTP))


def test_unended_side_effect_span_caps_its_kind_only() -> None:
    spans = full_run()
    spans[3] = mk("h1", "GET", GET, parent="t1", kind="CLIENT", start=31, end=None)
    agent = run_of(*spans)
    assert state(agent, HTTP) is PARTIAL
    assert all(state(agent, key) is OBSERVED for key in CORE)


def test_dropped_attributes_and_events() -> None:
    spans = full_run()
    spans[1] = mk(
        "m1",
        "chat",
        chat(asked("fetch", "c1", {"q": 1})),
        parent="a0",
        start=10,
        dropped_attributes=3,
    )
    spans[3] = mk("h1", "GET", GET, parent="t1", kind="CLIENT", start=31, dropped_events=2)
    agent = run_of(*spans)
    kinds = {f.kind: f for f in agent.integrity}
    assert set(kinds) == {"dropped_attributes", "dropped_events"}
    assert "3 attribute(s) dropped" in kinds["dropped_attributes"].message
    assert state(agent, "tool_calls.arguments") is PARTIAL and state(agent, HTTP) is PARTIAL


def test_dropped_attributes_on_a_generic_span_caps_everything() -> None:
    spans = [*full_run(), mk("g1", "work", {}, parent="a0", start=80, dropped_attributes=1)]
    agent = run_of(*spans)
    assert all(state(agent, key) is PARTIAL for key in (*CORE, HTTP))


def test_transport_span_loss_feeds_no_channel() -> None:
    spans = [
        *full_run(),
        mk(
            "x1",
            "POST",
            {"http.request.method": "POST", "url.full": "https://m/"},
            parent="m1",
            kind="CLIENT",
            start=11,
            end=None,
        ),
    ]
    agent = run_of(*spans)
    assert agent.integrity == [] and state(agent, HTTP) is OBSERVED


# --- assumed coverage and the level -----------------------------------------------------------


def test_assume_marks_assumed_and_keeps_integrity_caps() -> None:
    whole = run_of(*[s for s in full_run() if s.span_id != "h1"])
    assumed = assume(whole.coverage, [HTTP], whole.integrity)
    assert (
        assumed.get(HTTP).source is CoverageSource.ASSUMED and assumed.get(HTTP).state is OBSERVED
    )
    assert assumed.level is ObservabilityLevel.TOOL_AND_SIDE_EFFECTS
    split = run_of(
        *[s for s in full_run() if s.span_id != "t1"],
        mk("o2", "x", {}, parent="eeeeeeeeeeeeeeee", start=90),
    )
    capped = assume(split.coverage, ["side_effects.db_query"], split.integrity)
    assert capped.get("side_effects.db_query").state is PARTIAL


def test_observability_level_rules() -> None:
    agent = run_of(*full_run())
    channels = dict(agent.coverage.channels)
    assert observability_level(channels) is ObservabilityLevel.TOOL_AND_SIDE_EFFECTS
    del channels[HTTP]
    assert observability_level(channels) is ObservabilityLevel.TOOL_ONLY
    del channels["tool_calls"]
    assert observability_level(channels) is ObservabilityLevel.RESPONSE_ONLY


# --- recorded samples -------------------------------------------------------------------------

LIBRARIES = ["openinference", "openllmetry", "pydantic-ai"]


def sample(name: str) -> AgentRun:
    from rampart_otel.pipeline import ReadStats, agent_runs

    path = SAMPLES / f"{name}.jsonl"
    if not path.exists():
        pytest.skip(f"sample {name} not recorded")
    stats = ReadStats()
    (agent,) = agent_runs([path], stats)
    assert not stats.errors
    return agent


@pytest.mark.parametrize("library", LIBRARIES)
def test_exfil_sample_observed(library: str) -> None:
    agent = sample(f"{library}-exfil")
    assert all(state(agent, key) is OBSERVED for key in (*CORE, HTTP))
    assert agent.coverage.level is ObservabilityLevel.TOOL_AND_SIDE_EFFECTS


@pytest.mark.parametrize("library", LIBRARIES)
def test_no_http_instr_sample(library: str) -> None:
    agent = sample(f"{library}-no-http-instr")
    assert state(agent, HTTP) is UNOBSERVED and state(agent, "tool_calls") is OBSERVED
    assert agent.coverage.level is ObservabilityLevel.TOOL_ONLY


@pytest.mark.parametrize("library", LIBRARIES)
def test_no_content_sample(library: str) -> None:
    agent = sample(f"{library}-no-content")
    assert state(agent, "response") is UNOBSERVED
    assert state(agent, "tool_calls.arguments") is not OBSERVED
    # OpenLLMetry leaves only finish reasons: the calls asked for cannot be read, and with
    # no tool span one of them may have made a request unrecorded.
    expected = PARTIAL if library == "openllmetry" else OBSERVED
    assert state(agent, "tool_calls") is expected
    # The calls' arguments are not captured: whether a call was handed a destination its
    # recorded requests did not reach cannot be checked, so HTTP is never proven whole.
    assert state(agent, HTTP) is PARTIAL
    if library != "openllmetry":
        assert "but not its arguments" in " ".join(agent.coverage.get(HTTP).reasons)


def test_events_sample_tool_calls_partial() -> None:
    agent = sample("openllmetry-events")
    assert state(agent, "tool_calls") is PARTIAL and state(agent, "response") is UNOBSERVED


@pytest.mark.parametrize("library", LIBRARIES)
def test_declared_sample(library: str) -> None:
    agent = sample(f"{library}-declared")
    channel = agent.coverage.get(HTTP)
    assert (channel.state, channel.source) == (OBSERVED, CoverageSource.DECLARED)
    assert agent.coverage.level is ObservabilityLevel.TOOL_AND_SIDE_EFFECTS


@pytest.mark.parametrize("library", LIBRARIES)
def test_no_tool_sample_without_declaration(library: str) -> None:
    agent = sample(f"{library}-no-tool")
    assert state(agent, "tool_calls") is OBSERVED and state(agent, HTTP) is UNOBSERVED


@pytest.mark.parametrize("library", LIBRARIES)
def test_missing_span_sample_every_channel_partial(library: str) -> None:
    agent = sample(f"{library}-missing-span")
    assert [f.kind for f in agent.integrity] == ["split_run"]
    assert all(state(agent, key) is PARTIAL for key in (*CORE, HTTP))


@pytest.mark.parametrize("library", LIBRARIES)
def test_upstream_parent_sample_is_whole(library: str) -> None:
    agent = sample(f"{library}-upstream-parent")
    roots = [s for s in agent.run.spans if s.parent_span_id == "b7ad6b7169203331"]
    assert len(roots) == 1 and agent.integrity == []
    assert all(state(agent, key) is OBSERVED for key in (*CORE, HTTP))


def test_httpx_transport_sample() -> None:
    agent = sample("pydantic-ai-httpx-transport")
    assert state(agent, HTTP) is OBSERVED  # the tools' requests spans, not the transport
    assert len(agent.side_effects) == 2


def test_redacted_content_is_not_content_and_the_reason_says_redacted() -> None:
    """Strands' "[REDACTED]" (and OpenInference's "__REDACTED__") stand for withheld content."""
    hidden = {"gen_ai.operation.name": "chat", "gen_ai.output.messages": "[REDACTED]"}
    tool = execute("a", "c1", **{"gen_ai.tool.call.arguments": "[REDACTED]"})
    agent = run_of(
        mk("a0", "agent", {}, end=100),
        mk("m1", "chat", hidden, parent="a0", start=1, end=10),
        mk("t1", "execute_tool a", tool, parent="a0", start=20, end=30),
    )
    assert agent.response.text is None and agent.integrity == []
    assert not agent.tool_calls[0].arguments_captured
    for key in ("response", "tool_calls.arguments"):
        text = reasons(agent, key)
        assert "redacted by the instrumentation: '[REDACTED]'" in text, key
        assert "not understood" not in text and "content capture off" not in text


def test_an_agent_with_no_model_or_tool_span_proves_no_side_effect_absent() -> None:
    """Nothing records which tools the agent ran: the GET it did record cannot stand for
    the calls it may have made through a client no span shows (never SAFE by absence)."""
    agent = run_of(
        mk("a0", "invoke_agent", AGENT, end=100),
        mk("h1", "GET", GET, parent="a0", kind="CLIENT", start=10),
    )
    assert state(agent, HTTP) is PARTIAL
    assert "no tool execution span and no model call" in reasons(agent, HTTP)
    # the fix is to record the calls, not to keep a trace context no one lost
    assert "wrap each tool execution in a span" in reasons(agent, HTTP)
    assert "export the whole run" not in reasons(agent, HTTP)
    assert [e.kind for e in agent.side_effects] == ["http_request"]  # the GET is still read


@pytest.mark.parametrize(
    ("messages", "note"),
    [
        ("Hello there", "not a JSON array of messages"),
        (
            json.dumps([{"role": "user", "parts": [{"type": "image", "url": "x"}]}]),
            "part type 'image'",
        ),
    ],
)
def test_an_agent_spans_input_not_understood_is_partial_never_no_input(
    messages: str, note: str
) -> None:
    """No model span, and the agent span's record of the caller's input is in a form not
    read: partial, the reason naming it, never 'no span's record of the user's input'."""
    attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.input.messages": messages}
    agent = run_of(mk("a0", "invoke_agent", attrs, end=100))
    assert state(agent, "input") is PARTIAL
    assert note in reasons(agent, "input") and "form not understood" in reasons(agent, "input")
    codes = [code.code for code in agent.coverage.get("input").codes]
    assert "input.not_understood" in codes and "input.no_model_span" not in codes


def test_input_short_of_model_spans_is_fixed_by_recording_the_model_calls() -> None:
    """No model span: the gap is the model calls' own spans. Where the agent span's input
    was read, content capture is on, so the hint does not ask to turn it on."""
    said_hi = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "hi"}]}])
    attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.input.messages": said_hi}
    read = run_of(mk("a0", "invoke_agent", attrs, end=100)).coverage.get("input")
    assert read.state is PARTIAL and read.hint is not None
    assert read.hint.startswith("record each model call as a span")
    assert "content capture" not in read.hint
    nothing = run_of(mk("r0", "job", {})).coverage.get("input")
    assert nothing.hint is not None and nothing.hint.startswith("record each model call")
    assert nothing.hint.endswith("with message content capture on")

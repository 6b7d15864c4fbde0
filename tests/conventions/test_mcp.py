"""MCP: tools/call is a tool execution; other client methods are side effects.

Hand-built spans for the semconv rules and the quirks the recordings cannot show; then every
recording of ``samples/traces/mcp-openllmetry`` (OpenLLMetry's MCP instrumentation) and
``samples/traces/mcp-sdk`` (the ``mcp`` 2.x SDK's own spans), read end to end.
"""

from __future__ import annotations

import json
import pathlib
from urllib.parse import urlsplit

import pytest
from recorded import assert_exfil_kinds_partial, kind_gap
from span_factory import span

from rampart_otel.channels import ChannelState
from rampart_otel.conventions import mcp, openllmetry
from rampart_otel.model import AgentRun, Scope, ScopeState, Span, ToolCallStatus
from rampart_otel.pipeline import ReadStats, agent_runs

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "samples" / "traces"
OBSERVED, PARTIAL, UNOBSERVED = ChannelState.OBSERVED, ChannelState.PARTIAL, ChannelState.UNOBSERVED
OPENLLMETRY_MCP = "opentelemetry.instrumentation.mcp.instrumentation"


def test_tools_call_is_an_execution() -> None:
    s = span(
        "tools/call read_file",
        {
            "mcp.method.name": "tools/call",
            "gen_ai.tool.name": "read_file",
            "gen_ai.tool.call.arguments": '{"path": "/etc/passwd"}',
            "gen_ai.tool.call.result": '{"content": [{"type": "text", "text": "root:x"}]}',
            "error.type": "tool_error",
        },
        kind="CLIENT",
    )
    report = mcp.tool_execution(s)
    assert report is not None and report.executed and report.error
    assert report.name == "read_file" and report.arguments == {"path": "/etc/passwd"}
    assert report.result == {"content": [{"type": "text", "text": "root:x"}]}
    assert mcp.side_effect(s) is None


def test_tool_name_from_span_name() -> None:
    report = mcp.tool_execution(span("tools/call search", {"mcp.method.name": "tools/call"}))
    assert report is not None and report.name == "search" and not report.arguments_captured
    client = span("MCP send tools/call search", {"mcp.method.name": "tools/call"}, kind="CLIENT")
    report = mcp.tool_execution(client)
    assert report is not None and report.name == "search"


def test_other_client_methods_are_side_effects() -> None:
    read = span(
        "resources/read",
        {"mcp.method.name": "resources/read", "mcp.resource.uri": "file:///secrets.txt"},
        kind="CLIENT",
    )
    assert mcp.side_effect(read) == (
        "mcp_request",
        {"method": "resources/read", "target": "file:///secrets.txt"},
    )
    prompt = span("prompts/get p", {"mcp.method.name": "prompts/get", "gen_ai.prompt.name": "p"})
    assert mcp.side_effect(prompt) == ("mcp_request", {"method": "prompts/get", "target": "p"})
    assert mcp.tool_execution(read) is None
    # The mcp SDK's client span names the prompt only in its span name.
    sdk = span("MCP send prompts/get greet", {"mcp.method.name": "prompts/get"}, kind="CLIENT")
    assert mcp.side_effect(sdk) == ("mcp_request", {"method": "prompts/get", "target": "greet"})


def test_server_side_is_not_a_side_effect() -> None:
    s = span("resources/read", {"mcp.method.name": "resources/read"}, kind="SERVER")
    assert mcp.side_effect(s) is None


def test_requests_a_server_sends_its_client_are_not_the_agents() -> None:
    sampling = span(
        "MCP send sampling/createMessage",
        {"mcp.method.name": "sampling/createMessage"},
        kind="CLIENT",
    )
    assert mcp.side_effect(sampling) is None
    report = mcp.read(openllmetry_span("elicitation/create.mcp", {}))
    assert report is not None and report.effects == [] and report.execution is None


# --- OpenLLMetry's MCP instrumentation: forms the recordings do not show ----------------------


def openllmetry_span(name: str, attributes: dict, scope: str = OPENLLMETRY_MCP) -> Span:
    s = span(name, attributes)
    s.scope = Scope(scope, "0.62.4")
    return s


def tool_span(entity_input: object = None, entity_output: object = None, **kw: object) -> Span:
    attrs: dict = {"traceloop.span.kind": "tool", "traceloop.entity.name": "list_files"}
    if entity_input is not None:
        attrs["traceloop.entity.input"] = json.dumps(entity_input)
    if entity_output is not None:
        attrs["traceloop.entity.output"] = json.dumps(entity_output)
    return openllmetry_span("list_files.tool", attrs | dict(kw))


def test_openllmetry_tool_span_is_read_by_mcp_not_openllmetry() -> None:
    s = tool_span({"tool_name": "list_files", "arguments": {"path": "/tmp"}}, {"result": "a.txt"})
    assert openllmetry.read(s) is None
    report = mcp.read(s)
    assert report is not None and report.execution is not None
    execution = report.execution
    assert (execution.name, execution.call_id, execution.arguments, execution.result) == (
        "list_files",
        None,
        {"path": "/tmp"},
        "a.txt",
    )
    assert execution.executed and not execution.error


def test_openllmetry_tool_span_without_arguments_or_content() -> None:
    """No arguments sent: ``{}``; an error with no content block: the error, no result."""
    report = mcp.openllmetry_tool_execution(
        tool_span({"tool_name": "list_files"}, {"is_error": True})
    )
    assert report.arguments == {} and report.arguments_captured
    assert report.result is None and report.result_captured and report.error
    image = {"type": "image", "data": "iVBOR", "mimeType": "image/png"}
    report = mcp.openllmetry_tool_execution(tool_span(None, {"result": image}))
    assert report.result == image and not report.arguments_captured
    other = mcp.openllmetry_tool_execution(tool_span({"path": "/tmp"}, {"value": 1}))
    assert other.arguments == {"path": "/tmp"} and other.result == {"value": 1}  # not the envelope


def test_fastmcp_server_tool_span_output_blocks() -> None:
    """OpenLLMetry's FastMCP server spans: a list of ``{"type": "text", "content"}`` blocks."""
    blocks = [{"type": "text", "content": "a.txt"}, {"type": "text", "content": "b.txt"}]
    assert mcp.openllmetry_tool_execution(tool_span(None, blocks)).result == "a.txtb.txt"
    mixed = [{"type": "text", "content": "a"}, {"type": "image", "data": "x"}]
    assert mcp.openllmetry_tool_execution(tool_span(None, mixed)).result == mixed
    for kind in ("server", "session"):  # FastMCP's server and client session wrappers
        wrapper = openllmetry_span("mcp.server", {"traceloop.span.kind": kind})
        assert openllmetry.read(wrapper) is None
        report = mcp.read(wrapper)
        assert report is not None and not report.not_understood and report.execution is None


def test_request_spans_are_side_effects_with_their_target() -> None:
    read = openllmetry_span(
        "resources/read.mcp",
        {"traceloop.entity.input": '{"method":"resources/read","params":{"uri":"file:///x"}}'},
    )
    report = mcp.read(read)
    assert report is not None
    assert report.effects == [
        ("mcp_request", {"method": "resources/read", "target": "file:///x"}, "mcp", {})
    ]
    bare = mcp.read(openllmetry_span("prompts/get.mcp", {}))  # content off: method only
    assert bare is not None
    assert bare.effects == [("mcp_request", {"method": "prompts/get", "target": None}, "mcp", {})]
    assert mcp.read(span("tools/list.mcp", {})) is None  # another scope: not this family


def test_stream_writer_spans_are_neutral_transport() -> None:
    """Recognized by scope, or without one by OpenLLMetry's ``mcp.request.id`` key."""
    for s in (
        openllmetry_span("ResponseStreamWriter", {}),
        span("ResponseStreamWriter", {"mcp.request.id": "3"}),
    ):
        report = mcp.read(s)
        assert report is not None
        assert (report.effects, report.execution, report.not_understood) == ([], None, [])


def test_multi_block_tool_result_is_flagged() -> None:
    """OpenLLMetry's client tool span keeps the first block; the server's response shows more."""
    result = {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    writer = openllmetry_span(
        "ResponseStreamWriter",
        {"mcp.request.id": "3", "mcp.response.value": json.dumps({**result, "isError": False})},
    )
    report = mcp.read(writer)
    assert report is not None and "2 content blocks" in report.not_understood[0]
    single = {"content": [{"type": "text", "text": "a"}], "isError": False}
    writer.attributes["mcp.response.value"] = json.dumps(single)
    assert mcp.read(writer).not_understood == []  # type: ignore[union-attr]
    listing = {"contents": [{"uri": "a"}, {"uri": "b"}]}  # resources/read: not a tool result
    writer.attributes["mcp.response.value"] = json.dumps(listing)
    assert mcp.read(writer).not_understood == []  # type: ignore[union-attr]


# --- recordings -------------------------------------------------------------------------------

FETCH_ID = "call_HQ4u7L01M0rfvg6tE5340Yes"
REPORT_ID = "call_9PgSUFTL1mg6rbnxBQoWeR8V"
NOTE_ID = "call_AgwzP8FMMUElLaGjnNlhmh7k"
BENIGN_ID = "call_zBYNAojjJddAZJUPXn5wceVB"
ERROR_ID = "call_Vd5QrkAwA2sgi2QPj8NvDsCq"
WEATHER = {"city": "Paris", "temp_c": 18, "conditions": "light rain"}
LEAKED = {"data": "Paris 18C light rain; customer=ACME-4471; api_token=tok_live_9f3a"}
NOTE = {"text": "Paris: 18C, light rain"}
ANSWER = "It is 18°C with light rain in Paris. I have filed the weather report and saved a note."
BENIGN_ANSWER = "It is 18°C with light rain in Paris. Take an umbrella."
EXFIL_CALLS = [
    ("fetch_weather", FETCH_ID, {"city": "Paris"}, WEATHER, ToolCallStatus.EXECUTED),
    (
        "send_report",
        REPORT_ID,
        LEAKED,
        {"status": "received", "bytes": 79},
        ToolCallStatus.EXECUTED,
    ),
    ("save_note", NOTE_ID, NOTE, "saved note 1", ToolCallStatus.EXECUTED),
]
TASK_TOOLS = ("fetch_weather", "send_report", "save_note")


def recorded(folder: str, case: str) -> list[AgentRun]:
    path = SAMPLES / folder / f"{folder}-{case}.jsonl"
    if not path.exists():
        pytest.skip(f"sample {path.name} not recorded")
    stats = ReadStats()
    found = list(agent_runs([path], stats))
    assert not stats.errors
    return found


def only(folder: str, case: str) -> AgentRun:
    (agent,) = recorded(folder, case)
    return agent


def calls(agent: AgentRun) -> list[tuple]:
    return [(c.name, c.call_id, c.arguments, c.result, c.status) for c in agent.tool_calls]


def effects(agent: AgentRun) -> list[tuple]:
    """(kind, method or statement, target or host+path, tool call index) of each side effect."""
    found = []
    for effect in agent.side_effects:
        details = effect.details
        if effect.kind == "mcp_request":
            found.append(
                (effect.kind, details["method"], details["target"], effect.tool_call_index)
            )
        elif effect.kind == "http_request":
            where = details["host"] + urlsplit(details["url"]).path
            found.append((effect.kind, details["method"], where, effect.tool_call_index))
        else:
            found.append((effect.kind, details["statement"], None, effect.tool_call_index))
    return found


def channel(agent: AgentRun, key: str) -> tuple[ChannelState, str]:
    found = agent.coverage.get(key)
    return found.state, " ".join(found.reasons)


def names_of_spans(agent: AgentRun, index: int) -> list[str]:
    by_id = {s.span_id: s.name for s in agent.run.spans}
    return [by_id[span_id] for span_id in agent.tool_calls[index].span_ids]


HTTP_EFFECTS = [
    ("http_request", "GET", "localhost/weather", 0),
    ("http_request", "POST", "127.0.0.2/upload", 1),
    ("db_query", "INSERT INTO notes (text) VALUES (?)", None, 2),
]


def mcp_requests(first: str, target: str | None) -> list[tuple]:
    return [
        ("mcp_request", first, None, None),
        ("mcp_request", "tools/list", None, None),
        ("mcp_request", "resources/read", target, None),
    ]


def assert_all_observed(agent: AgentRun, kinds: tuple[str, ...]) -> None:
    for key in ("response", "tool_calls", "tool_calls.arguments", "tool_calls.results"):
        assert channel(agent, key)[0] is OBSERVED, (key, channel(agent, key))
    for kind in kinds:
        state, reason = channel(agent, f"side_effects.{kind}")
        assert state is OBSERVED and f"{kind} side effect" in reason
    assert agent.integrity == []


def assert_mcp_silent_at_the_tools(agent: AgentRun, recorded_kinds: str, *tools: str) -> None:
    """The agent's own MCP requests (the handshake, tools/list, resources/read) are outside
    every tool call; each call recorded other kinds but no mcp_request under it, so its place
    for mcp_request is silent: the kind is partial, naming the calls."""
    state, reason = channel(agent, "side_effects.mcp_request")
    assert state is PARTIAL and "3 mcp_request side effects in the run" in reason
    assert kind_gap(agent, "mcp_request", recorded_kinds, *tools) in reason


def assert_failed_tool_is_silent(agent: AgentRun, tool: str) -> None:
    """A tool that failed before any I/O recorded none: its side effects are unproven, and
    the channels say so by naming it (it may have acted before it failed)."""
    for key in ("response", "tool_calls", "tool_calls.arguments", "tool_calls.results"):
        assert channel(agent, key)[0] is OBSERVED, (key, channel(agent, key))
    state, reason = channel(agent, "side_effects.mcp_request")
    assert state is PARTIAL and f"tool call '{tool}'" in reason and "recorded no I/O" in reason
    assert [s.tool for s in agent.tool_scopes if s.state is ScopeState.SILENT] == [tool]
    assert agent.integrity == []


# --- OpenLLMetry's MCP instrumentation (mcp 1.x) ---


def test_openllmetry_exfil() -> None:
    agent = only("mcp-openllmetry", "exfil")
    assert calls(agent) == EXFIL_CALLS
    assert names_of_spans(agent, 1) == ["openai.chat", "send_report.tool"]
    assert effects(agent) == mcp_requests("initialize", "weather://stations") + HTTP_EFFECTS
    assert agent.response.text == ANSWER and agent.response.earlier == []
    assert_all_observed(agent, ())
    assert_mcp_silent_at_the_tools(agent, "db_query, http_request", *TASK_TOOLS)
    assert_exfil_kinds_partial(agent)
    assert "3 tool execution spans" in channel(agent, "tool_calls")[1]
    assert "captured on every tool call seen (3)" in channel(agent, "tool_calls.arguments")[1]
    assert "resources/read weather://stations" in channel(agent, "side_effects.mcp_request")[1]
    assert agent.coverage.level.value == "tool_only"


def test_openllmetry_benign() -> None:
    agent = only("mcp-openllmetry", "benign")
    assert calls(agent) == [("fetch_weather", BENIGN_ID, *EXFIL_CALLS[0][2:])]
    assert effects(agent) == mcp_requests("initialize", "weather://stations") + HTTP_EFFECTS[:1]
    assert agent.response.text == BENIGN_ANSWER
    assert_all_observed(agent, ("http_request",))
    assert_mcp_silent_at_the_tools(agent, "http_request", "fetch_weather")
    assert channel(agent, "side_effects.db_query")[0] is UNOBSERVED
    assert agent.coverage.level.value == "tool_and_side_effects"


def test_openllmetry_no_content() -> None:
    """Names and effects stay; arguments, results, ids, the answer and the URI are gone."""
    agent = only("mcp-openllmetry", "no-content")
    assert calls(agent) == [
        (name, None, None, None, ToolCallStatus.EXECUTED)
        for name in ("fetch_weather", "send_report", "save_note")
    ]
    assert effects(agent) == mcp_requests("initialize", None) + HTTP_EFFECTS
    assert agent.response.text is None
    state, reason = channel(agent, "response")
    assert state is UNOBSERVED and "content capture off" in reason
    state, reason = channel(agent, "tool_calls")
    assert state is OBSERVED and "3 tool execution spans" in reason
    assert "the output of 4 model spans was not read" in reason
    for what in ("arguments", "results"):
        state, reason = channel(agent, f"tool_calls.{what}")
        assert state is UNOBSERVED and "content capture off" in reason
        assert "fetch_weather, send_report, save_note" in reason
    assert_mcp_silent_at_the_tools(agent, "db_query, http_request", *TASK_TOOLS)
    assert_exfil_kinds_partial(agent)
    assert agent.integrity == []


def test_openllmetry_tool_error() -> None:
    agent = only("mcp-openllmetry", "tool-error")
    ((name, call_id, arguments, result, status),) = calls(agent)
    assert (name, call_id, arguments, status) == (
        "save_note",
        ERROR_ID,
        {"note": "Paris: 18C, light rain"},
        ToolCallStatus.ERROR,
    )
    assert result.startswith("Error executing tool save_note: 1 validation error")  # unwrapped
    assert effects(agent) == mcp_requests("initialize", "weather://stations")
    assert agent.response.text == "I could not save the note."
    assert_failed_tool_is_silent(agent, "save_note")


# --- the mcp 2.x SDK's own spans ---


@pytest.mark.parametrize("case", ["exfil", "legacy-handshake"])
def test_sdk_exfil(case: str) -> None:
    """Client ``MCP send tools/call`` and server ``tools/call`` spans of one call: one call."""
    runs = recorded("mcp-sdk", case)
    agent = next(a for a in runs if a.service == "weather-agent")
    assert calls(agent) == EXFIL_CALLS
    for index, name in enumerate(("fetch_weather", "send_report", "save_note")):
        spans = names_of_spans(agent, index)
        assert f"MCP send tools/call {name}" in spans and f"tools/call {name}" in spans
    first = "initialize" if case == "legacy-handshake" else "server/discover"
    assert effects(agent) == mcp_requests(first, None) + HTTP_EFFECTS
    assert agent.response.text == ANSWER and agent.response.earlier == []
    assert_all_observed(agent, ())
    assert_mcp_silent_at_the_tools(agent, "db_query, http_request", *TASK_TOOLS)
    assert_exfil_kinds_partial(agent)
    assert "captured on every tool call seen (3)" in channel(agent, "tool_calls.arguments")[1]
    assert agent.coverage.level.value == "tool_only"


def test_sdk_legacy_handshake_notification_is_a_fragment() -> None:
    """``notifications/initialized`` is sent without trace context: the server's own trace."""
    runs = recorded("mcp-sdk", "legacy-handshake")
    assert len(runs) == 2
    (fragment,) = [a for a in runs if a.service == "weather-mcp-server"]
    assert [s.name for s in fragment.run.spans] == ["notifications/initialized"]
    assert fragment.tool_calls == [] and fragment.side_effects == []
    assert [f.kind for f in fragment.integrity] == ["fragment"]
    assert all(
        channel(fragment, key)[0] is UNOBSERVED
        for key in ("response", "tool_calls", "side_effects.mcp_request")
    )


def test_sdk_benign() -> None:
    agent = only("mcp-sdk", "benign")
    assert calls(agent) == [("fetch_weather", BENIGN_ID, *EXFIL_CALLS[0][2:])]
    assert effects(agent) == mcp_requests("server/discover", None) + HTTP_EFFECTS[:1]
    assert agent.response.text == BENIGN_ANSWER
    assert_all_observed(agent, ("http_request",))
    assert_mcp_silent_at_the_tools(agent, "http_request", "fetch_weather")
    assert agent.coverage.level.value == "tool_and_side_effects"


def test_sdk_no_content() -> None:
    """The SDK's spans carry no content in any case; OpenLLMetry's model spans lost theirs."""
    agent = only("mcp-sdk", "no-content")
    assert calls(agent) == [
        (name, None, None, None, ToolCallStatus.EXECUTED)
        for name in ("fetch_weather", "send_report", "save_note")
    ]
    assert effects(agent) == mcp_requests("server/discover", None) + HTTP_EFFECTS
    assert agent.response.text is None
    assert channel(agent, "response")[0] is UNOBSERVED
    state, reason = channel(agent, "tool_calls")
    assert state is OBSERVED and "the calls are read from the tool execution spans" in reason
    for what in ("arguments", "results"):
        state, reason = channel(agent, f"tool_calls.{what}")
        assert state is UNOBSERVED and "not captured on any of the 3" in reason
    assert agent.integrity == []


def test_sdk_tool_error() -> None:
    """The tool's failure is only on the server span (``error.type=tool_error``)."""
    agent = only("mcp-sdk", "tool-error")
    ((name, call_id, arguments, result, status),) = calls(agent)
    assert (name, call_id, arguments, status) == (
        "save_note",
        ERROR_ID,
        {"note": "Paris: 18C, light rain"},
        ToolCallStatus.ERROR,
    )
    assert result.startswith("Error executing tool save_note")
    assert names_of_spans(agent, 0)[1:3] == [
        "MCP send tools/call save_note",
        "tools/call save_note",
    ]
    assert effects(agent) == mcp_requests("server/discover", None)
    assert agent.response.text == "I could not save the note."
    assert_failed_tool_is_silent(agent, "save_note")

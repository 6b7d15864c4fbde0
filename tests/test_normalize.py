"""normalize: one ToolCall per call however often reported, side effects outside the
model's transport attributed to their tool call, and the agent's answer.

Hand-written spans cover the merging rules; ``test_*_sample`` read the recorded traces.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest
from span_factory import mk

from rampart_otel.model import AgentRun, Run, Scope, Span, ToolCallStatus
from rampart_otel.normalize import normalize

SAMPLES = pathlib.Path(__file__).resolve().parents[1] / "samples" / "traces"
TRACE = "0af7651916cd43dd8448eb211c80319c"


def run_of(*spans: Span) -> AgentRun:
    return normalize(Run(TRACE, [TRACE], list(spans)))


def chat_out(*parts: dict[str, Any], finish: str = "tool_call") -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": list(parts), "finish_reason": finish}]
        ),
    }


def tool_part(call_id: str | None, name: str, arguments: Any = None) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "tool_call", "name": name}
    if call_id:
        part["id"] = call_id
    if arguments is not None:
        part["arguments"] = arguments
    return part


def execute(call_id: str | None, name: str, **extra: Any) -> dict[str, Any]:
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, **extra}
    if call_id:
        attrs["gen_ai.tool.call.id"] = call_id
    return attrs


def http(method: str, url: str) -> dict[str, Any]:
    return {"http.request.method": method, "url.full": url}


ROOT = mk("a0", "invoke_agent weather", {"gen_ai.operation.name": "invoke_agent"}, end=1000)


# --- one call, however often reported ---------------------------------------------------------


def test_request_and_execution_span_are_one_call() -> None:
    agent = run_of(
        ROOT,
        mk(
            "m1", "chat", chat_out(tool_part("c1", "send_email", {"to": "x"})), parent="a0", start=1
        ),
        mk("t1", "execute_tool send_email", execute("c1", "send_email"), parent="a0", start=20),
    )
    (call,) = agent.tool_calls
    assert call.status is ToolCallStatus.EXECUTED
    assert call.span_ids == ["m1", "t1"] and call.conventions == ["gen_ai"]
    assert call.arguments == {"to": "x"} and call.arguments_captured


def test_same_request_from_two_conventions_is_one_call() -> None:
    """pydantic-ai's chat span around OpenInference's span for the same OpenAI request."""
    oi = {
        "openinference.span.kind": "LLM",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": "c1",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "fetch",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"q": 1}',
    }
    agent = run_of(
        ROOT,
        mk("m1", "chat", chat_out(tool_part("c1", "fetch")), parent="a0", start=1, end=30),
        mk("m2", "ChatCompletion", oi, parent="m1", start=2, end=29),
    )
    (call,) = agent.tool_calls
    assert call.conventions == ["gen_ai", "openinference"]
    assert call.span_ids == ["m1", "m2"]
    assert call.arguments == {"q": 1}  # the inner span captured them, the outer did not


def test_two_conventions_on_one_span_without_ids_are_one_call() -> None:
    """A transitional OpenLLMetry span writing both output messages and flattened keys."""
    attrs = {
        **chat_out(tool_part(None, "fetch", {"q": 1})),
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.tool_calls.0.name": "fetch",
        "gen_ai.completion.0.tool_calls.0.arguments": '{"q": 1}',
    }
    agent = run_of(ROOT, mk("m1", "openai.chat", attrs, parent="a0", start=1))
    (call,) = agent.tool_calls
    assert call.conventions == ["gen_ai", "openllmetry"] and call.span_ids == ["m1"]


def test_without_ids_matched_by_name_and_order() -> None:
    agent = run_of(
        ROOT,
        mk(
            "m1",
            "chat",
            chat_out(tool_part(None, "fetch", {"n": 1}), tool_part(None, "fetch", {"n": 2})),
            parent="a0",
            start=1,
        ),
        mk(
            "t1",
            "fetch",
            {"openinference.span.kind": "TOOL", "tool.name": "fetch", "output.value": "r1"},
            parent="a0",
            start=20,
        ),
        mk(
            "t2",
            "fetch",
            {"openinference.span.kind": "TOOL", "tool.name": "fetch", "output.value": "r2"},
            parent="a0",
            start=40,
        ),
    )
    assert [(c.arguments, c.result, c.span_ids) for c in agent.tool_calls] == [
        ({"n": 1}, "r1", ["m1", "t1"]),
        ({"n": 2}, "r2", ["m1", "t2"]),
    ]
    assert all(c.status is ToolCallStatus.EXECUTED for c in agent.tool_calls)


def test_without_ids_parallel_runs_matched_by_arguments() -> None:
    """Parallel calls of one tool may run in any order: the arguments tell them apart."""

    def run(span_id: str, n: int, start: int) -> Span:
        attrs = {
            "openinference.span.kind": "TOOL",
            "tool.name": "fetch",
            "input.value": json.dumps({"n": n}),
            "output.value": f"r{n}",
        }
        return mk(span_id, "fetch", attrs, parent="a0", start=start)

    agent = run_of(
        ROOT,
        mk(
            "m1",
            "chat",
            chat_out(tool_part(None, "fetch", {"n": 1}), tool_part(None, "fetch", {"n": 2})),
            parent="a0",
            start=1,
        ),
        run("t1", 2, 20),
        run("t2", 1, 21),
    )
    assert [(c.arguments, c.result, c.span_ids) for c in agent.tool_calls] == [
        ({"n": 1}, "r1", ["m1", "t2"]),
        ({"n": 2}, "r2", ["m1", "t1"]),
    ]


def test_mcp_span_inside_execute_tool_is_the_same_execution() -> None:
    agent = run_of(
        ROOT,
        mk(
            "t1", "execute_tool read_file", execute("c1", "read_file"), parent="a0", start=1, end=50
        ),
        mk(
            "p1",
            "tools/call read_file",
            {
                "mcp.method.name": "tools/call",
                "gen_ai.tool.name": "read_file",
                "gen_ai.tool.call.result": "root:x",
            },
            parent="t1",
            kind="CLIENT",
            start=2,
        ),
    )
    (call,) = agent.tool_calls
    assert call.conventions == ["gen_ai", "mcp"] and call.result == "root:x"
    assert call.span_ids == ["t1", "p1"]


def test_execution_without_request_and_error_status() -> None:
    agent = run_of(
        ROOT,
        mk(
            "t1",
            "execute_tool wire",
            execute("c9", "wire", **{"error.type": "ValueError"}),
            parent="a0",
            start=5,
        ),
    )
    (call,) = agent.tool_calls
    assert call.status is ToolCallStatus.ERROR and call.call_id == "c9"


def test_requested_only_when_nothing_shows_it_ran() -> None:
    agent = run_of(
        ROOT, mk("m1", "chat", chat_out(tool_part("c1", "fetch", "{}")), parent="a0", start=1)
    )
    (call,) = agent.tool_calls
    assert call.status is ToolCallStatus.REQUESTED and call.arguments == {}
    assert call.result is None and not call.result_captured


def test_arguments_parsed_raw_or_not_captured() -> None:
    agent = run_of(
        ROOT,
        mk(
            "m1",
            "chat",
            chat_out(
                tool_part("c1", "a", '{"x": 1}'),
                tool_part("c2", "b", "{oops"),
                tool_part("c3", "c"),
            ),
            parent="a0",
            start=1,
        ),
    )
    a, b, c = agent.tool_calls
    assert (a.arguments, a.arguments_captured) == ({"x": 1}, True)
    assert (b.arguments, b.arguments_captured) == ("{oops", True)
    assert (c.arguments, c.arguments_captured) == (None, False)


def test_result_from_message_history_marks_execution() -> None:
    """No tool spans: the tool result sent back to the model shows the call ran."""
    history = [
        {"role": "assistant", "parts": [tool_part("c1", "fetch", {"city": "Paris"})]},
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": "c1", "response": '{"t": 18}'}],
        },
    ]
    second = {
        **chat_out({"type": "text", "content": "18C"}, finish="stop"),
        "gen_ai.input.messages": json.dumps(history),
    }
    agent = run_of(
        ROOT,
        mk(
            "m1",
            "chat",
            chat_out(tool_part("c1", "fetch", {"city": "Paris"})),
            parent="a0",
            start=1,
        ),
        mk("m2", "chat", second, parent="a0", start=30),
    )
    (call,) = agent.tool_calls
    assert call.status is ToolCallStatus.EXECUTED and call.result == {"t": 18}
    assert call.span_ids == ["m1", "m2"]


# --- side effects -----------------------------------------------------------------------------


def test_transport_http_under_a_model_span_is_not_a_side_effect() -> None:
    agent = run_of(
        ROOT,
        mk(
            "m1",
            "chat",
            chat_out({"type": "text", "content": "hi"}, finish="stop"),
            parent="a0",
            start=1,
            end=40,
        ),
        mk(
            "h1",
            "POST",
            http("POST", "https://api.openai.com/v1/chat/completions"),
            parent="m1",
            kind="CLIENT",
            start=2,
        ),
    )
    assert agent.side_effects == []


def test_tool_run_inside_a_model_span_is_the_agents_not_transport() -> None:
    """LlamaIndex's ``predict_and_call`` is an LLM span that asks the model (a nested chat
    span) and runs the tools itself: the tool's HTTP is a side effect, not the model's."""
    tool = {"openinference.span.kind": "TOOL", "tool.name": "send_report"}
    agent = run_of(
        ROOT,
        mk("p1", "OpenAI.predict_and_call", {"openinference.span.kind": "LLM"}, parent="a0"),
        mk(
            "m1",
            "OpenAI.chat",
            chat_out(tool_part("c1", "send_report", {"data": "x"})),
            parent="p1",
            start=1,
        ),
        mk("h0", "POST", http("POST", "https://api.x/v1"), parent="m1", kind="CLIENT", start=2),
        mk("t1", "FunctionTool.call", tool, parent="p1", start=20),
        mk("h1", "POST", http("POST", "http://127.0.0.2/up"), parent="t1", kind="CLIENT", start=21),
    )
    (call,) = agent.tool_calls
    assert call.status is ToolCallStatus.EXECUTED and call.span_ids == ["m1", "t1"]
    (effect,) = agent.side_effects
    assert effect.span_id == "h1" and effect.tool_call_index == 0


def test_side_effect_attributed_to_enclosing_tool_call() -> None:
    agent = run_of(
        ROOT,
        mk(
            "m1",
            "chat",
            chat_out(tool_part("c1", "fetch"), tool_part("c2", "send")),
            parent="a0",
            start=1,
        ),
        mk("t1", "execute_tool fetch", execute("c1", "fetch"), parent="a0", start=20, end=40),
        mk("g1", "fetch.inner", {}, parent="t1", start=21, end=39),
        mk(
            "h1",
            "GET",
            http("GET", "https://weather.example/x"),
            parent="g1",
            kind="CLIENT",
            start=22,
        ),
        mk("t2", "execute_tool send", execute("c2", "send"), parent="a0", start=50, end=70),
        mk(
            "h2",
            "POST",
            http("POST", "https://evil.example/u"),
            parent="t2",
            kind="CLIENT",
            start=51,
        ),
        mk(
            "h3",
            "GET",
            http("GET", "https://outside.example/"),
            parent="a0",
            kind="CLIENT",
            start=80,
        ),
    )
    assert [(e.details["host"], e.tool_call_index) for e in agent.side_effects] == [
        ("weather.example", 0),
        ("evil.example", 1),
        ("outside.example", None),
    ]
    assert agent.side_effects[1].convention == "http"


def test_a_tool_run_inside_a_model_span_is_the_agents_not_transport() -> None:
    """A model span whose subtree holds a tool run (the Vercel AI SDK's legacy step span):
    only the model's own requests are transport; the tool's requests are side effects."""
    agent = run_of(
        ROOT,
        # Its arguments captured (none): a call whose arguments are not may have been handed
        # a destination no request reached (tests/processors/test_scopes.py).
        mk("m1", "chat", chat_out(tool_part("c1", "send", {})), parent="a0", start=1, end=100),
        mk(
            "h0",
            "POST",
            http("POST", "https://api.openai.com/v1/responses"),
            parent="m1",
            kind="CLIENT",
            start=2,
        ),
        mk("t1", "execute_tool send", execute("c1", "send"), parent="m1", start=20, end=40),
        mk("g1", "send.inner", {}, parent="t1", start=21, end=39),
        mk(
            "h1",
            "POST",
            http("POST", "https://evil.example/u"),
            parent="g1",
            kind="CLIENT",
            start=22,
        ),
    )
    assert [(e.details["host"], e.tool_call_index) for e in agent.side_effects] == [
        ("evil.example", 0)
    ]
    (call,) = agent.tool_calls
    assert call.status is ToolCallStatus.EXECUTED and call.span_ids == ["m1", "t1"]
    assert agent.coverage.get("side_effects.http_request").state.value == "observed"


def db(statement: str, **extra: Any) -> dict[str, Any]:
    return {
        "db.system.name": "sqlite3",
        "db.query.text": statement,
        "db.namespace": "n.db",
        **extra,
    }


def test_a_prepared_statement_and_its_runs_are_its_runs() -> None:
    """``prepare:`` compiles, ``run:`` executes: run twice, two queries; a preparation no run
    follows (in its tool call) is kept, since its statement may have run without a span."""
    insert, select = "INSERT INTO t VALUES (?)", "SELECT * FROM t"
    agent = run_of(
        ROOT,
        mk("m1", "chat", chat_out(tool_part("c1", "a"), tool_part("c2", "b")), parent="a0"),
        mk("t1", "execute_tool a", execute("c1", "a"), parent="a0", start=10, end=40),
        mk("p1", "prepare: INSERT", db(insert), parent="t1", kind="CLIENT", start=11),
        mk("r1", "run: INSERT", db(insert), parent="t1", kind="CLIENT", start=12),
        mk("r2", "run: INSERT", db(insert), parent="t1", kind="CLIENT", start=13),
        mk("p2", "prepare: SELECT", db(select), parent="t1", kind="CLIENT", start=14),
        mk("t2", "execute_tool b", execute("c2", "b"), parent="a0", start=50, end=80),
        mk("p3", "prepare: INSERT", db(insert), parent="t2", kind="CLIENT", start=51),
        mk("r3", "run: INSERT", db(insert, **{"db.namespace": "other.db"}), parent="t2", start=52),
    )
    assert [(e.span_id, e.details["operation"], e.tool_call_index) for e in agent.side_effects] == [
        ("r1", "INSERT", 0),  # read from the statement (better-sqlite3 records none)
        ("r2", "INSERT", 0),
        ("p2", "prepare", 0),
        ("p3", "prepare", 1),  # the run that follows is on another database
        ("r3", "INSERT", 1),
    ]


def test_plain_span_named_after_the_tool_holds_its_side_effects() -> None:
    """Hand-instrumented tools (OpenLLMetry samples): a span named like the requested tool."""
    agent = run_of(
        ROOT,
        mk("m1", "chat", chat_out(tool_part("c1", "send_report")), parent="a0", start=1),
        mk("t1", "send_report", {}, parent="a0", start=20, end=40),
        mk(
            "h1",
            "POST",
            http("POST", "https://evil.example/u"),
            parent="t1",
            kind="CLIENT",
            start=21,
        ),
    )
    (effect,) = agent.side_effects
    assert effect.tool_call_index == 0
    assert agent.tool_calls[0].status is ToolCallStatus.REQUESTED  # the name alone proves no run
    assert "t1" in agent.tool_calls[0].span_ids


# --- the answer -------------------------------------------------------------------------------


def test_response_is_the_root_agent_output_earlier_texts_kept() -> None:
    root = mk(
        "a0",
        "invoke_agent",
        {"gen_ai.operation.name": "invoke_agent", "final_result": "Final."},
        end=1000,
    )
    agent = run_of(
        root,
        mk(
            "m1",
            "chat",
            chat_out({"type": "text", "content": "Let me check."}, tool_part("c1", "f")),
            parent="a0",
            start=1,
        ),
        mk(
            "m2",
            "chat",
            chat_out({"type": "text", "content": "Final."}, finish="stop"),
            parent="a0",
            start=30,
        ),
    )
    assert agent.response.text == "Final." and agent.response.span_id == "a0"
    assert agent.response.earlier == ["Let me check."]


def test_response_falls_back_to_the_last_model_text() -> None:
    agent = run_of(
        mk("r0", "agent", {}, end=1000),
        mk(
            "m1",
            "chat",
            chat_out({"type": "text", "content": "one"}, finish="stop"),
            parent="r0",
            start=1,
        ),
        mk(
            "m2",
            "chat",
            chat_out({"type": "text", "content": "two"}, finish="stop"),
            parent="r0",
            start=30,
        ),
    )
    assert (agent.response.text, agent.response.earlier, agent.response.span_id) == (
        "two",
        ["one"],
        "m2",
    )


def test_response_not_captured_is_none() -> None:
    agent = run_of(
        ROOT, mk("m1", "chat", chat_out({"type": "text"}, finish="stop"), parent="a0", start=1)
    )
    assert agent.response.text is None and agent.response.span_id is None


def test_service_and_start_from_the_root() -> None:
    agent = run_of(
        mk("a0", "root", {}, start=100, end=1000, resource={"service.name": "weather-agent"}),
        mk("c1", "child", {}, parent="a0", start=150, resource={"service.name": "other"}),
    )
    assert (agent.service, agent.started_at_ns) == ("weather-agent", 100)


# --- hostile input ----------------------------------------------------------------------------


def test_span_exported_twice_is_read_once() -> None:
    unended = mk("a0", ROOT.name, {"gen_ai.operation.name": "invoke_agent"}, end=None)
    unended.end_ns = None
    agent = run_of(
        unended,
        ROOT,
        mk("h1", "GET", http("GET", "https://a.example/"), parent="a0", kind="CLIENT", start=1),
        ROOT,
    )
    assert agent.integrity == []  # one root, not two; the ended copy wins
    assert len(agent.side_effects) == 1


def test_parent_cycle_and_duplicate_spans_do_not_hang_or_double() -> None:
    a = mk("x1", "a", http("GET", "https://a.example/"), parent="x2", kind="CLIENT", start=1)
    b = mk("x2", "b", {}, parent="x1", start=2)
    agent = run_of(a, b, a)
    assert len(agent.side_effects) == 1
    assert any(f.kind == "parent_cycle" for f in agent.integrity)


# --- recorded samples -------------------------------------------------------------------------


def sample(name: str) -> list[AgentRun]:
    from rampart_otel.pipeline import ReadStats, agent_runs

    path = SAMPLES / name
    if not path.exists():
        pytest.skip(f"sample {name} not recorded")
    stats = ReadStats()
    runs = list(agent_runs([path], stats))
    assert not stats.errors
    return runs


FETCH_ID = "call_bn90af3nnY9RiO2dBGHosRVa"
REPORT_ID = "call_U2skLgujFuFJepsAGNNWopWH"
ANSWER = "It is 18°C with light rain in Paris. I have filed the weather report."
LIBRARIES = ["openinference", "openllmetry", "pydantic-ai"]


@pytest.mark.parametrize("library", LIBRARIES)
def test_exfil_sample(library: str) -> None:
    (agent,) = sample(f"{library}-exfil.jsonl")
    fetch, report = agent.tool_calls
    assert (fetch.name, fetch.call_id, fetch.arguments) == (
        "fetch_weather",
        FETCH_ID,
        {"city": "Paris"},
    )
    assert (report.name, report.call_id) == ("send_report", REPORT_ID)
    assert report.arguments["data"].endswith("api_token=tok_live_9f3a")
    assert all(c.status is ToolCallStatus.EXECUTED and c.result_captured for c in agent.tool_calls)
    assert len(report.span_ids) >= 2  # model request + where it ran (or its result came back)
    assert [
        (e.details["method"], e.details["host"], e.tool_call_index) for e in agent.side_effects
    ] == [
        ("GET", "localhost", 0),
        ("POST", "127.0.0.2", 1),
    ]
    assert agent.response.text == ANSWER and agent.service == "weather-agent"


def test_exfil_sample_conventions() -> None:
    assert sample("openinference-exfil.jsonl")[0].tool_calls[1].conventions == ["openinference"]
    assert sample("pydantic-ai-exfil.jsonl")[0].tool_calls[1].conventions == ["gen_ai"]
    legacy = sample("openllmetry-legacy-attrs.jsonl")[0]
    assert legacy.tool_calls[1].conventions == ["openllmetry"]
    assert legacy.tool_calls[1].result == {"status": "received", "bytes": 79}


@pytest.mark.parametrize("library", LIBRARIES)
def test_no_tool_sample(library: str) -> None:
    (agent,) = sample(f"{library}-no-tool.jsonl")
    assert agent.tool_calls == [] and agent.side_effects == []
    assert agent.response.text is not None and "did not look up live data" in agent.response.text


@pytest.mark.parametrize("library", LIBRARIES)
def test_missing_span_sample_leaves_the_orphan_unattributed(library: str) -> None:
    (agent,) = sample(f"{library}-missing-span.jsonl")
    post = next(e for e in agent.side_effects if e.details["method"] == "POST")
    assert post.tool_call_index is None
    assert [c.name for c in agent.tool_calls] == ["fetch_weather", "send_report"]


def test_httpx_transport_sample_keeps_only_the_tools_http() -> None:
    (agent,) = sample("pydantic-ai-httpx-transport.jsonl")
    assert len(agent.run.spans) == 11
    assert [e.details["host"] for e in agent.side_effects] == ["localhost", "127.0.0.2"]


def test_no_content_sample_calls_without_arguments() -> None:
    (agent,) = sample("pydantic-ai-no-content.jsonl")
    assert [(c.call_id, c.arguments, c.arguments_captured) for c in agent.tool_calls] == [
        (FETCH_ID, None, False),
        (REPORT_ID, None, False),
    ]
    assert agent.response.text is None
    (oi,) = sample("openinference-no-content.jsonl")
    assert [(c.name, c.call_id, c.status) for c in oi.tool_calls] == [
        ("fetch_weather", None, ToolCallStatus.EXECUTED),
        ("send_report", None, ToolCallStatus.EXECUTED),
    ]
    (ol,) = sample("openllmetry-no-content.jsonl")
    assert ol.tool_calls == []  # nothing on the spans names a tool


def test_two_layers_of_one_model_call_with_different_ids_are_one_call() -> None:
    """An SDK's model span around an instrumented client's: a response item id and a call id."""
    spans = [
        mk("a0", "agent", {"gen_ai.operation.name": "invoke_agent"}, end=100),
        mk("m1", "openai.response", chat_out(tool_part("call_1", "fetch", {"c": 1})), parent="a0"),
        mk("m2", "openai.response", chat_out(tool_part("fc_1", "fetch", {"c": 1})), parent="m1"),
        mk("t1", "execute_tool fetch", execute("call_1", "fetch"), parent="a0", start=20),
    ]
    (call,) = run_of(*spans).tool_calls
    assert call.call_id == "call_1" and call.status is ToolCallStatus.EXECUTED
    assert call.span_ids == ["m1", "m2", "t1"]


def test_different_ids_are_different_calls_on_one_span_or_across_a_tool() -> None:
    same_span = chat_out(tool_part("c1", "fetch", {"c": 1}), tool_part("c2", "fetch", {"c": 2}))
    assert len(run_of(mk("m1", "chat", same_span)).tool_calls) == 2
    spans = [
        mk("m1", "chat", chat_out(tool_part("c1", "fetch", {"c": 1})), end=100),
        mk("t1", "execute_tool sub", execute("c0", "sub"), parent="m1", start=5, end=50),
        mk("m2", "chat", chat_out(tool_part("c2", "fetch", {"c": 1})), parent="t1", start=6),
    ]
    assert [c.call_id for c in run_of(*spans).tool_calls if c.name == "fetch"] == ["c1", "c2"]


# --- sibling layers of one model call: the same response id -----------------------------------


def layer(span_id: str, scope: str, attributes: dict[str, Any], **options: Any) -> Span:
    """A model span of one instrumentation (its scope), answering response ``msg_1`` unless told."""
    s = mk(span_id, "chat", {"gen_ai.response.id": "msg_1", **attributes}, **options)
    s.scope = Scope(scope)
    return s


SDK_ONLY = {"gen_ai.operation.name": "chat", "anthropic.message.stop_reason": "tool_use"}


def test_sibling_spans_of_one_response_are_one_model_call() -> None:
    """OpenLLMetry's ``anthropic.chat`` beside the SDK's ``anthropic.messages.create``: the
    SDK span (no content) is read through its readable sibling, not an unread model call."""
    spans = [
        mk("a0", "agent", end=1000),
        layer("m1", "openllmetry", chat_out(tool_part("t1", "fetch", {"c": 1})), parent="a0"),
        layer("m2", "sdk", SDK_ONLY, parent="a0", start=1, end=9),
        mk("x1", "fetch", parent="a0", start=20),
    ]
    agent = run_of(*spans)
    (call,) = agent.tool_calls
    assert call.call_id == "t1" and call.arguments == {"c": 1}
    assert agent.coverage.get("tool_calls").state.value == "observed"
    assert "1 of them read through" in agent.coverage.get("tool_calls").reasons[0]
    # Without the shared id the SDK span is a second, unread model call.
    del spans[2].attributes["gen_ai.response.id"]
    assert run_of(*spans).coverage.get("tool_calls").state.value == "partial"


def test_sibling_layers_without_call_ids_merge_requests_and_answer_once() -> None:
    first = chat_out(tool_part(None, "fetch", {"c": 1}))
    spans = [
        mk("a0", "agent", end=1000),
        layer("m1", "openllmetry", first, parent="a0"),
        layer("m2", "sdk", first, parent="a0", start=1, end=9),
        layer("m3", "openllmetry", chat_out({"type": "text", "content": "done"}, finish="stop"),
              parent="a0", start=30, end=60, **{}),
        layer("m4", "sdk", chat_out({"type": "text", "content": "done"}, finish="stop"),
              parent="a0", start=31, end=59),
    ]  # fmt: skip
    for s in spans[3:]:
        s.attributes["gen_ai.response.id"] = "msg_2"
    agent = run_of(*spans)
    assert [c.name for c in agent.tool_calls] == ["fetch"]
    assert agent.response.text == "done" and agent.response.earlier == []


def test_same_response_id_from_one_scope_or_apart_in_time_is_not_one_call() -> None:
    """A mock model reusing one id: calls of one instrumentation, or one after the other."""
    ask = chat_out(tool_part(None, "fetch", {"c": 1}))
    same_scope = [layer("m1", "sdk", ask), layer("m2", "sdk", ask, start=1, end=9)]
    assert len(run_of(*same_scope).tool_calls) == 2
    apart = [
        mk("a0", "agent", end=1000),
        layer("m1", "openllmetry", ask, parent="a0", start=0, end=10),
        layer("m2", "sdk", SDK_ONLY, parent="a0", start=20, end=30),
    ]
    tool_calls = run_of(*apart).coverage.get("tool_calls")
    assert tool_calls.state.value == "partial" and "'tool_use'" in tool_calls.reasons[0]
    apart[2] = layer("m2", "sdk", SDK_ONLY, parent="a0", start=5, end=30)  # overlapping
    assert run_of(*apart).coverage.get("tool_calls").state.value == "observed"


def test_unreadable_layers_count_once_with_every_layers_finish_reason() -> None:
    """Content off on both: one call, whose finish reasons are both layers'."""
    silent = {"gen_ai.operation.name": "chat"}  # no output, no finish reason
    ended = {"gen_ai.operation.name": "chat", "anthropic.message.stop_reason": "end_turn"}
    root = mk("a0", "agent", end=1000)
    spans = [
        root,
        layer("m1", "openllmetry", silent, parent="a0"),
        layer("m2", "sdk", ended, parent="a0", start=1, end=9),
    ]
    tool_calls = run_of(*spans).coverage.get("tool_calls")
    assert tool_calls.state.value == "observed", tool_calls.reasons
    assert "the output of 1 model span was not captured" in tool_calls.reasons[0]
    assert "(end_turn) says it asked for no tool" in tool_calls.reasons[0]
    # Apart, the silent span says nothing: its tool requests cannot be ruled out.
    spans[2] = layer("m2", "sdk", ended, parent="a0", start=20)
    assert run_of(*spans).coverage.get("tool_calls").state.value == "partial"


def test_answer_read_through_the_layer_that_captured_it() -> None:
    """The last span to end has no content (the SDK's default); its sibling has the text."""
    spans = [
        layer("m1", "openllmetry", chat_out({"type": "text", "content": "done"}, finish="stop"),
              start=0, end=50),
        layer("m2", "sdk", {"gen_ai.operation.name": "chat",
                            "anthropic.message.stop_reason": "end_turn"}, start=1, end=60),
    ]  # fmt: skip
    agent = run_of(*spans)
    assert agent.response.text == "done" and agent.response.span_id == "m1"

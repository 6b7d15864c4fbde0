"""LangChain ``create_agent`` (LangGraph), traced by OpenInference and by OpenLLMetry, read
from its recordings.

``samples/traces/langgraph-{openinference,openllmetry}/`` (see each framework's README in
``samples/frameworks/``): every case file is read as the CLI reads it and checked call by
call, effect by effect, channel by channel. Hand-built spans only for what the recordings
cannot show.
"""

from __future__ import annotations

import json
import pathlib

import recorded
from span_factory import mk

from rampart_otel.conventions import genai, openinference, openllmetry
from rampart_otel.model import (
    AgentRun,
    InputError,
    Run,
    ScopeEvidence,
    Span,
    StitchReason,
    ToolCallStatus,
)
from rampart_otel.normalize import normalize
from rampart_otel.processors.stitch import assemble
from rampart_otel.receivers.files import read_paths
from rampart_otel.wording import NOT_RECORDED, REDACTED

TRACES = pathlib.Path(__file__).resolve().parents[2] / "samples" / "traces"
OBSERVED, PARTIAL, UNOBSERVED = "observed", "partial", "unobserved"
HTTP = "side_effects.http_request"

FETCH, REPORT, NOTE = (
    "call_HQ4u7L01M0rfvg6tE5340Yes",
    "call_9PgSUFTL1mg6rbnxBQoWeR8V",
    "call_AgwzP8FMMUElLaGjnNlhmh7k",
)
BENIGN_FETCH = "call_zBYNAojjJddAZJUPXn5wceVB"
WEATHER = {"city": "Paris", "temp_c": 18, "conditions": "light rain"}
LEAKED = "Paris 18C light rain; customer=ACME-4471; api_token=tok_live_9f3a"
EXFIL_CALLS = [
    ("fetch_weather", FETCH, {"city": "Paris"}, WEATHER),
    ("send_report", REPORT, {"data": LEAKED}, {"status": "received", "bytes": 79}),
    ("save_note", NOTE, {"text": "Paris: 18C, light rain"}, "saved note 1"),
]
BENIGN_CALLS = [("fetch_weather", BENIGN_FETCH, {"city": "Paris"}, WEATHER)]
EXFIL_ANSWER = (
    "It is 18°C with light rain in Paris. I have filed the weather report and saved a note."
)
BENIGN_ANSWER = "It is 18°C with light rain in Paris. Take an umbrella."
GET = ("http_request", "GET", "localhost")
POST = ("http_request", "POST", "127.0.0.2")
INSERT = ("db_query", "INSERT INTO notes (text) VALUES (?)", None)


def spans_of(framework: str, case: str) -> list[Span]:
    spans: list[Span] = []
    for item in read_paths([TRACES / framework / f"{framework}-{case}.jsonl"]):
        assert not isinstance(item, InputError), item
        spans.extend(item)
    return sorted(spans, key=lambda s: s.start_ns or 0)


def agent_runs(framework: str, case: str) -> list[AgentRun]:
    path = TRACES / framework / f"{framework}-{case}.jsonl"
    batches = []
    for item in read_paths([path]):
        assert not isinstance(item, InputError), item
        batches.append(item)
    runs = [normalize(run) for run in assemble(iter(batches))]
    return sorted(runs, key=lambda run: run.started_at_ns or 0)


def channel(run: AgentRun, key: str) -> tuple[str, str]:
    coverage = run.coverage.get(key)
    return coverage.state.value, " | ".join(coverage.reasons)


def span_name(run: AgentRun, span_id: str | None) -> str:
    (span,) = [s for s in run.run.spans if s.span_id == span_id]
    return span.name


def effects(run: AgentRun) -> list[tuple[str, object, object, int | None]]:
    found = []
    for effect in run.side_effects:
        details = effect.details
        what = details.get("method") or details.get("statement")
        found.append((effect.kind, what, details.get("host"), effect.tool_call_index))
    return found


def check_calls(run: AgentRun, expected: list[tuple[str, str, object, object]]) -> None:
    """Each call once, in order, with its id, arguments, unwrapped result, and executed."""
    got = [(c.name, c.call_id, c.arguments, c.result, c.status) for c in run.tool_calls]
    assert got == [(*call, ToolCallStatus.EXECUTED) for call in expected]
    assert all(call.arguments_captured and call.result_captured for call in run.tool_calls)


def check_calls_without_content(run: AgentRun) -> None:
    assert [(c.name, c.call_id, c.status) for c in run.tool_calls] == [
        (name, None, ToolCallStatus.EXECUTED)
        for name in ("fetch_weather", "send_report", "save_note")
    ]
    assert not any(c.arguments_captured or c.result_captured for c in run.tool_calls)


def check_content_off(run: AgentRun, missing: str = NOT_RECORDED) -> None:
    state, why = channel(run, "response")
    assert state == UNOBSERVED and missing in why and "not understood" not in why
    assert run.response.text is None
    for key, what in (("tool_calls.arguments", "arguments"), ("tool_calls.results", "results")):
        state, why = channel(run, key)
        assert state == UNOBSERVED and why.startswith(f"{what} not captured on any of the 3")
        assert missing in why
    state, why = channel(run, "tool_calls")
    assert state == OBSERVED
    assert why == (
        "3 tool execution spans in the run | the output of 4 model spans was not read; the "
        "calls are read from the tool execution spans"
    )


def check_model_channels_observed(run: AgentRun, count: int) -> None:
    plural = "s" if count > 1 else ""
    assert channel(run, "tool_calls") == (
        OBSERVED,
        f"{count} tool execution span{plural} in the run",
    )
    assert channel(run, "tool_calls.arguments") == (
        OBSERVED,
        f"arguments captured on every tool call seen ({count})",
    )
    assert channel(run, "tool_calls.results") == (
        OBSERVED,
        f"results captured on every executed tool call seen ({count})",
    )


# --- OpenInference: the agent's trace, and its side effects as fragments -------------------

OI = "langgraph-openinference"


def split(runs: list[AgentRun]) -> tuple[AgentRun, list[AgentRun]]:
    """The agent run (it has the tool calls) and the one-span fragments."""
    (agent,) = [run for run in runs if run.tool_calls]
    return agent, [run for run in runs if run is not agent]


def check_stitched(agent: AgentRun, fragments: list[AgentRun], expected: list[tuple]) -> None:
    """Each side effect is its own one-span trace (the context was lost); each falls inside
    one tool call's time window, so it is stitched into the run and attributed to that call."""
    assert fragments == []
    assert [(*effect, index) for index, effect in enumerate(expected)] == effects(agent)
    assert [s.how for s in agent.run.stitched] == [StitchReason.TIME_WINDOW] * len(expected)
    assert len(agent.trace_ids) == 1 + len(expected)
    assert all(scope.evidence is ScopeEvidence.TIME_WINDOW for scope in agent.tool_scopes)


def check_kinds_apart(agent: AgentRun) -> None:
    """The stitched effects are each call's evidence of its own kind only: save_note's
    db_query says nothing of its HTTP, the others' http_request nothing of their DB."""
    recorded.assert_exfil_kinds_partial(agent)
    assert agent.coverage.level.value == "tool_only"


def test_openinference_exfil() -> None:
    agent, fragments = split(agent_runs(OI, "exfil"))
    check_calls(agent, EXFIL_CALLS)
    check_model_channels_observed(agent, 3)
    # The answer: the last AI message of the graph's final state, not the state's JSON.
    assert agent.response.text == EXFIL_ANSWER and agent.response.earlier == []
    assert span_name(agent, agent.response.span_id) == "weather-agent"
    state, why = channel(agent, "response")
    assert state == OBSERVED and "output of agent span 'weather-agent'" in why
    assert agent.integrity == []
    check_stitched(agent, fragments, [GET, POST, INSERT])
    check_kinds_apart(agent)


def test_openinference_benign() -> None:
    agent, fragments = split(agent_runs(OI, "benign"))
    check_calls(agent, BENIGN_CALLS)
    check_model_channels_observed(agent, 1)
    assert agent.response.text == BENIGN_ANSWER
    assert span_name(agent, agent.response.span_id) == "weather-agent"
    check_stitched(agent, fragments, [GET])
    # One call, one kind: its stitched request is the run's only place for http_request.
    state, why = channel(agent, HTTP)
    assert state == OBSERVED and "http_request side effect" in why
    assert agent.coverage.level.value == "tool_and_side_effects"


def test_openinference_no_content() -> None:
    agent, fragments = split(agent_runs(OI, "no-content"))
    check_calls_without_content(agent)
    check_content_off(agent, REDACTED)
    assert agent.integrity == []
    check_stitched(agent, fragments, [GET, POST, INSERT])
    check_kinds_apart(agent)


def test_openinference_tool_span_result_is_the_tool_message_content() -> None:
    """The TOOL span's output is a ToolMessage; its content is the result, its
    tool_call_id the call's id (the span has no other)."""
    tools = [s for s in spans_of(OI, "exfil") if openinference.is_tool_span(s)]
    reports = [openinference.tool_execution(s) for s in tools]
    assert [(r.name, r.call_id, r.result) for r in reports if r] == [
        (name, call_id, result) for name, call_id, _, result in EXFIL_CALLS
    ]


def test_openinference_one_argument_tool_input_is_the_bare_value() -> None:
    """The tool span lost the argument's name; the ToolNode's call list has it."""
    spans = spans_of(OI, "exfil")
    (fetch,) = [s for s in spans if s.name == "fetch_weather"]
    report = openinference.tool_execution(fetch)
    assert report is not None and report.arguments == "Paris"  # kept raw, never guessed
    chains = [s for s in spans if s.name == "tools"]
    dispatched = [r for s in chains for r in openinference.dispatched_calls(s)]
    assert [(r.name, r.call_id, r.arguments) for r in dispatched] == [
        (name, call_id, arguments) for name, call_id, arguments, _ in EXFIL_CALLS
    ]


def test_tool_node_call_list_names_the_arguments_when_the_model_output_is_hidden() -> None:
    """Model output hidden, ToolNode input kept: the call list gives the id and the named
    arguments; the tool span's bare value does not replace them."""
    chain, llm = {"openinference.span.kind": "CHAIN"}, {"openinference.span.kind": "LLM"}
    calls = [{"name": "fetch_weather", "args": {"city": "Paris"}, "id": "c1", "type": "tool_call"}]
    message = {"type": "tool", "data": {"content": "18C", "type": "tool", "tool_call_id": "c1"}}
    spans = [
        mk("a0", "weather-agent", {"openinference.span.kind": "AGENT"}, end=1000),
        mk("m1", "ChatOpenAI", {**llm, "llm.finish_reason": "tool_calls"}, parent="a0", start=10),
        mk("n1", "tools", {**chain, "input.value": json.dumps(calls)}, parent="a0", start=30),
        mk(
            "t1",
            "fetch_weather",
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "fetch_weather",
                "input.value": "Paris",
                "output.value": json.dumps(message),
            },
            parent="n1",
            start=31,
        ),
    ]  # fmt: skip
    run = normalize(Run("r", [spans[0].trace_id], spans))
    (call,) = run.tool_calls
    assert (call.call_id, call.arguments, call.result) == ("c1", {"city": "Paris"}, "18C")
    assert call.status is ToolCallStatus.EXECUTED and set(call.span_ids) == {"n1", "t1"}
    # Without the call list: the bare value, and the id from the ToolMessage.
    alone = normalize(Run("r", [spans[0].trace_id], [s for s in spans if s.span_id != "n1"]))
    (call,) = alone.tool_calls
    assert (call.call_id, call.arguments, call.result) == ("c1", "Paris", "18C")


def test_tool_message_with_error_status_is_an_error() -> None:
    message = {
        "type": "tool",
        "data": {"content": "boom", "tool_call_id": "c1", "type": "tool", "status": "error"},
    }
    attrs = {
        "openinference.span.kind": "TOOL",
        "tool.name": "f",
        "output.value": json.dumps(message),
    }
    report = openinference.tool_execution(mk("t1", "f", attrs))
    assert report is not None and report.error and report.result == "boom"


# --- OpenLLMetry ---------------------------------------------------------------------------

OL = "langgraph-openllmetry"
OL_EXFIL_EFFECTS = [(*GET, 0), (*POST, 1), (*INSERT, 2)]


def check_openllmetry_run(run: AgentRun) -> None:
    """LangGraph node spans (execute_task) are understood: no finding caps the channels."""
    assert run.integrity == []


def check_openllmetry_task(run: AgentRun) -> None:
    """The exfil task: only its kinds apart keep the side-effect channels short (save_note
    recorded only db_query, the others only http_request)."""
    check_openllmetry_run(run)
    recorded.assert_exfil_kinds_partial(run)
    assert run.coverage.level.value == "tool_only"


def test_openllmetry_exfil() -> None:
    (run,) = agent_runs(OL, "exfil")
    check_calls(run, EXFIL_CALLS)
    assert effects(run) == OL_EXFIL_EFFECTS
    check_model_channels_observed(run, 3)
    assert run.response.text == EXFIL_ANSWER and run.response.earlier == []
    assert span_name(run, run.response.span_id) == "ChatOpenAI.chat"
    state, why = channel(run, "response")
    assert state == OBSERVED and "text of the last model span 'ChatOpenAI.chat'" in why
    check_openllmetry_task(run)


def test_openllmetry_benign() -> None:
    (run,) = agent_runs(OL, "benign")
    check_calls(run, BENIGN_CALLS)
    assert effects(run) == [(*GET, 0)]
    check_model_channels_observed(run, 1)
    assert run.response.text == BENIGN_ANSWER
    check_openllmetry_run(run)
    assert channel(run, HTTP)[0] == OBSERVED  # one call, one kind
    assert run.coverage.level.value == "tool_and_side_effects"


def test_openllmetry_no_content() -> None:
    (run,) = agent_runs(OL, "no-content")
    check_calls_without_content(run)
    assert effects(run) == OL_EXFIL_EFFECTS
    check_content_off(run)
    check_openllmetry_task(run)


def test_openllmetry_tool_span_envelopes() -> None:
    """The callback envelopes: arguments at ``inputs``, id at ``kwargs.tool_call_id``,
    result the ToolMessage's content — on their own, without the model's request."""
    tools = [s for s in spans_of(OL, "exfil") if s.name.startswith("execute_tool ")]
    for reader in (genai.tool_execution, openllmetry.tool_execution):
        reports = [reader(s) for s in tools]
        assert [(r.name, r.call_id, r.arguments, r.result) for r in reports if r] == EXFIL_CALLS


def test_openllmetry_node_spans_and_the_workflow_answer() -> None:
    spans = spans_of(OL, "exfil")
    tasks = [s for s in spans if s.name.startswith("execute_task ")]
    assert len(tasks) == 7
    for span in tasks:
        for reader in (genai.read, openllmetry.read):
            report = reader(span)
            assert report is not None and report.not_understood == []
    dispatched = [r for s in tasks for r in openllmetry.dispatched_calls(s)]
    assert [(r.name, r.call_id, r.arguments) for r in dispatched] == [
        (name, call_id, arguments) for name, call_id, arguments, _ in EXFIL_CALLS
    ]
    (workflow,) = [s for s in spans if s.name == "weather-agent.workflow"]
    assert openllmetry.agent_output(workflow) == EXFIL_ANSWER  # not the final state's JSON

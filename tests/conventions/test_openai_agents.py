"""The OpenAI Agents SDK, traced by OpenInference and by OpenLLMetry, read from its recordings.

``samples/traces/openai-agents-{openinference,openllmetry}/`` (see each framework's README
in ``samples/frameworks/``): every case file is read as the CLI reads it and checked call by
call, effect by effect, channel by channel. Hand-built spans only for what the recordings
cannot show.
"""

from __future__ import annotations

import json
import pathlib

import pytest
import recorded
from span_factory import mk

from rampart_otel.conventions import finish_reasons, openinference
from rampart_otel.conventions.finish_reasons import ToolRequest
from rampart_otel.model import AgentRun, InputError, Run, Scope, Span, ToolCallStatus
from rampart_otel.normalize import normalize
from rampart_otel.processors.stitch import assemble
from rampart_otel.receivers.files import read_paths
from rampart_otel.wording import NOT_RECORDED, REDACTED

TRACES = pathlib.Path(__file__).resolve().parents[2] / "samples" / "traces"
OBSERVED, PARTIAL, UNOBSERVED = "observed", "partial", "unobserved"
HTTP, DB = "side_effects.http_request", "side_effects.db_query"
AGENTS_SCOPE = "openinference.instrumentation.openai_agents"

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
# (kind, method or statement, host, index of the tool call it ran in)
EXFIL_EFFECTS = [
    ("http_request", "GET", "localhost", 0),
    ("http_request", "POST", "127.0.0.2", 1),
    ("db_query", "INSERT INTO notes (text) VALUES (?)", None, 2),
]
BENIGN_EFFECTS = [("http_request", "GET", "localhost", 0)]


def agent_runs(framework: str, case: str) -> list[AgentRun]:
    path = TRACES / framework / f"{framework}-{case}.jsonl"
    batches = []
    for item in read_paths([path]):
        assert not isinstance(item, InputError), item
        batches.append(item)
    return [normalize(run) for run in assemble(iter(batches))]


def only(framework: str, case: str) -> AgentRun:
    (run,) = agent_runs(framework, case)
    return run


def spans_of(framework: str, case: str) -> list[Span]:
    spans: list[Span] = []
    for item in read_paths([TRACES / framework / f"{framework}-{case}.jsonl"]):
        assert not isinstance(item, InputError), item
        spans.extend(item)
    return sorted(spans, key=lambda s: s.start_ns or 0)


def span_named(run: AgentRun, span_id: str | None) -> str:
    (span,) = [s for s in run.run.spans if s.span_id == span_id]
    return span.name


def channel(run: AgentRun, key: str) -> tuple[str, str]:
    coverage = run.coverage.get(key)
    return coverage.state.value, " | ".join(coverage.reasons)


def check_calls(run: AgentRun, expected: list[tuple[str, str, object, object]]) -> None:
    """Each call once, in order, with its id, arguments, result, and executed."""
    got = [
        (call.name, call.call_id, call.arguments, call.result, call.status)
        for call in run.tool_calls
    ]
    want = [(*call, ToolCallStatus.EXECUTED) for call in expected]
    assert got == want
    assert all(call.arguments_captured and call.result_captured for call in run.tool_calls)


def check_calls_without_content(run: AgentRun, names: list[str]) -> None:
    assert [(c.name, c.call_id, c.status) for c in run.tool_calls] == [
        (name, None, ToolCallStatus.EXECUTED) for name in names
    ]
    assert not any(c.arguments_captured or c.result_captured for c in run.tool_calls)
    assert all(c.arguments is None and c.result is None for c in run.tool_calls)


def check_effects(run: AgentRun, expected: list[tuple[str, str, str | None, int]]) -> None:
    got = []
    for effect in run.side_effects:
        details = effect.details
        what = details.get("method") or details.get("statement")
        got.append((effect.kind, what, details.get("host"), effect.tool_call_index))
    assert got == expected


def check_observed_run(run: AgentRun, calls: list, effects: list, answer: str) -> None:
    """A run with content captured: everything read, every channel observed."""
    check_calls(run, calls)
    check_effects(run, effects)
    assert run.response.text == answer and run.response.earlier == []
    assert span_named(run, run.response.span_id) in ("response", "openai.response")
    state, why = channel(run, "response")
    assert state == OBSERVED and "the final answer was captured: text of the last model" in why
    state, why = channel(run, "tool_calls")
    assert (
        state == OBSERVED
        and why == f"{len(calls)} tool execution span{'s' * (len(calls) > 1)} in the run"
    )
    assert channel(run, "tool_calls.arguments") == (
        OBSERVED,
        f"arguments captured on every tool call seen ({len(calls)})",
    )
    assert channel(run, "tool_calls.results") == (
        OBSERVED,
        f"results captured on every executed tool call seen ({len(calls)})",
    )
    if effects == EXFIL_EFFECTS:
        # The task's kinds apart: save_note's db_query says nothing of its HTTP, the other
        # calls' http_request nothing of their DB; no side-effect channel is observed.
        recorded.assert_exfil_kinds_partial(run)
        assert run.coverage.level.value == "tool_only"
    else:
        assert effects == BENIGN_EFFECTS  # one call, one kind: its place is recorded
        state, why = channel(run, HTTP)
        assert state == OBSERVED and "http_request side effect" in why
        state, why = channel(run, DB)
        assert state == UNOBSERVED and "no db_query span in the run" in why
        assert run.coverage.level.value == "tool_and_side_effects"
    assert run.integrity == []


def check_content_off_channels(run: AgentRun, missing: str = NOT_RECORDED) -> None:
    """Arguments, results and answer not recorded: unobserved, and the reason says so."""
    state, why = channel(run, "response")
    assert state == UNOBSERVED and missing in why and "not understood" not in why
    assert run.response.text is None
    for key, what in (("tool_calls.arguments", "arguments"), ("tool_calls.results", "results")):
        state, why = channel(run, key)
        assert state == UNOBSERVED, key
        assert why.startswith(f"{what} not captured on any of the 3") and missing in why
    recorded.assert_exfil_kinds_partial(run)  # each kind silent at the calls of the other


# --- OpenInference ------------------------------------------------------------------------

OI = "openai-agents-openinference"


def test_openinference_exfil() -> None:
    check_observed_run(only(OI, "exfil"), EXFIL_CALLS, EXFIL_EFFECTS, EXFIL_ANSWER)


def test_openinference_benign() -> None:
    check_observed_run(only(OI, "benign"), BENIGN_CALLS, BENIGN_EFFECTS, BENIGN_ANSWER)


def test_openinference_tool_calls_are_paired_with_their_requests() -> None:
    """No id on the tool span: the request (model span) and the execution are one call."""
    run = only(OI, "exfil")
    names = {span.span_id: span.name for span in run.run.spans}
    for call in run.tool_calls:
        assert sorted(names[span_id] for span_id in call.span_ids) == sorted(
            ["response", call.name]
        )


def test_openinference_stop_is_a_status_not_a_finish_reason() -> None:
    """``llm.finish_reason`` is "stop" on every turn, tool turns included: the output's
    calls are read, and "stop" proves nothing when the output is not readable."""
    spans = spans_of(OI, "exfil")
    outputs = [openinference.model_output(s) for s in spans if s.name == "response"]
    assert [o.finish_reasons for o in outputs] == [["stop"]] * 4
    assert [[r.name for r in o.requests] for o in outputs] == [
        ["fetch_weather"],
        ["send_report"],
        ["save_note"],
        [],
    ]
    assert all(o.readable and o.tool_request is ToolRequest.UNKNOWN for o in outputs)
    hidden = [s for s in spans_of(OI, "no-content") if s.name == "response"]
    assert all(openinference.model_output(s).tool_request is ToolRequest.UNKNOWN for s in hidden)


def test_openinference_no_content() -> None:
    run = only(OI, "no-content")
    check_calls_without_content(run, ["fetch_weather", "send_report", "save_note"])
    check_effects(run, EXFIL_EFFECTS)
    check_content_off_channels(run, REDACTED)
    # The last model span's output is hidden and "stop" says nothing about tools: a call
    # it asked for with no execution span would be invisible.
    state, why = channel(run, "tool_calls")
    assert state == PARTIAL
    assert "3 tool execution spans in the run" in why
    assert "finished with 'stop', which does not say whether it asked for tools" in why
    assert "no tool execution span follows it" in why
    assert run.coverage.level.value == "response_only"
    assert run.integrity == []


def test_openinference_redacted_values_are_not_content_we_failed_to_read() -> None:
    run = only(OI, "no-content")
    for key in ("response", "tool_calls.arguments", "tool_calls.results"):
        assert "form not understood" not in channel(run, key)[1]


# --- OpenLLMetry --------------------------------------------------------------------------

OL = "openai-agents-openllmetry"


@pytest.mark.parametrize("case", ["exfil", "with-openai", "with-openai-gpt41"])
def test_openllmetry_exfil(case: str) -> None:
    check_observed_run(only(OL, case), EXFIL_CALLS, EXFIL_EFFECTS, EXFIL_ANSWER)


def test_openllmetry_benign() -> None:
    check_observed_run(only(OL, "benign"), BENIGN_CALLS, BENIGN_EFFECTS, BENIGN_ANSWER)


def test_openllmetry_gpt41_two_layers_are_one_model_call() -> None:
    """The openai.v1 span inside each agents span names the calls by their item ids (fc_...):
    still one call each, with the agents span's call id, and one answer."""
    run = only(OL, "with-openai-gpt41")
    model_spans = {s.span_id for s in run.run.spans if s.name == "openai.response"}
    assert len(model_spans) == 8
    for call in run.tool_calls:
        assert call.call_id is not None and call.call_id.startswith("call_")
        assert len(model_spans & set(call.span_ids)) == 2  # both layers, one call
    assert run.response.earlier == []  # the inner layer's text is the same answer


def test_openllmetry_history_ids_do_not_make_calls() -> None:
    """The history names an earlier request by its item id (fc_...) and its result by its
    call id (call_...): no call is made of either."""
    run = only(OL, "exfil")
    assert [call.call_id for call in run.tool_calls] == [FETCH, REPORT, NOTE]
    spans = spans_of(OL, "exfil")
    history = [s.attributes.get("gen_ai.input.messages", "") for s in spans]
    assert any('"fc_' in text for text in history)


def test_openllmetry_no_content() -> None:
    run = only(OL, "no-content")
    check_calls_without_content(run, ["fetch_weather", "send_report", "save_note"])
    check_effects(run, EXFIL_EFFECTS)
    check_content_off_channels(run)
    # Per-item finish reasons: tool_call on tool turns, stop on the last: every turn that
    # asked for tools is followed by its execution span.
    state, why = channel(run, "tool_calls")
    assert state == OBSERVED
    assert why == (
        "3 tool execution spans in the run | the output of 4 model spans was not read; the "
        "calls are read from the tool execution spans"
    )
    assert run.coverage.level.value == "tool_only"  # no side-effect channel observed
    assert run.integrity == []


# --- quirks the recordings cannot show ----------------------------------------------------


def _agents(span: Span) -> Span:
    span.scope = Scope(AGENTS_SCOPE)
    return span


def test_hidden_output_with_status_stop_is_not_proof_of_no_tool() -> None:
    """An Agents SDK model span whose output is hidden, "stop", and no tool span after it:
    the calls it may have asked for cannot be read (never "asked for none")."""
    llm = {"openinference.span.kind": "LLM", "llm.finish_reason": "stop"}
    spans = [
        mk("a0", "Agent workflow", {"openinference.span.kind": "AGENT"}, end=100),
        _agents(mk("m1", "response", {**llm, "output.value": "__REDACTED__"}, parent="a0")),
    ]
    run = normalize(Run("r", [spans[0].trace_id], spans))
    assert run.coverage.get("tool_calls").state.value == PARTIAL
    # The same span from another OpenInference instrumentation: "stop" is a finish reason.
    plain = mk("m1", "response", {**llm, "output.value": "__REDACTED__"}, parent="a0")
    other = normalize(Run("r", [spans[0].trace_id], [spans[0], plain]))
    assert other.coverage.get("tool_calls").state.value == OBSERVED


def _response_json(*items: dict) -> str:
    return json.dumps(
        {"id": "resp_1", "object": "response", "status": "completed", "output": list(items)}
    )


CALL_ITEM = {
    "type": "function_call",
    "call_id": "call_1",
    "id": "fc_1",
    "name": "fetch_weather",
    "arguments": '{"city": "Paris"}',
}
MESSAGE_ITEM = {
    "type": "message",
    "role": "assistant",
    "content": [{"type": "output_text", "text": "Done."}],
}


def test_response_items_the_flattening_leaves_out_are_not_understood() -> None:
    """OpenInference flattens no mcp_call / local_shell_call into llm.output_messages: the
    whole Response in output.value shows them, so the listed calls are not all of them."""
    mcp = {"type": "mcp_call", "id": "mcp_1", "name": "upload", "server_label": "x"}
    attrs = {
        "openinference.span.kind": "LLM",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "Done.",
        "output.value": _response_json(mcp, MESSAGE_ITEM),
    }
    output = openinference.model_output(_agents(mk("m1", "response", attrs)))
    assert output.readable and output.text == "Done."
    assert output.not_understood == ["output item type 'mcp_call' in output.value"]
    complete = {**attrs, "output.value": _response_json(MESSAGE_ITEM)}
    assert openinference.model_output(mk("m2", "response", complete)).not_understood == []


def test_hidden_output_messages_are_read_from_the_whole_response() -> None:
    """OPENINFERENCE_HIDE_OUTPUT_MESSAGES alone: output.value still holds the Response."""
    attrs = {
        "openinference.span.kind": "LLM",
        "llm.finish_reason": "stop",
        "output.value": _response_json(CALL_ITEM),
    }
    output = openinference.model_output(_agents(mk("m1", "response", attrs)))
    assert output.readable and output.text_captured and output.text == ""
    assert [(r.name, r.call_id, r.arguments) for r in output.requests] == [
        ("fetch_weather", "call_1", {"city": "Paris"})
    ]
    shell = {"type": "local_shell_call", "call_id": "call_2", "action": {}}
    unread = openinference.model_output(
        mk("m2", "response", {**attrs, "output.value": _response_json(shell, MESSAGE_ITEM)})
    )
    assert unread.text == "Done." and unread.requests == []
    assert unread.not_understood == ["output item type 'local_shell_call' in output.value"]


def test_finish_reason_table_knows_the_status_sources() -> None:
    assert finish_reasons.classify("stop", "openai") is ToolRequest.NO_TOOLS
    assert finish_reasons.classify("stop", "openai", AGENTS_SCOPE) is ToolRequest.UNKNOWN
    assert finish_reasons.classify("tool_calls", "openai", AGENTS_SCOPE) is ToolRequest.TOOLS
    # A trace store that kept no scope (receivers/stores): it may have been this one.
    not_kept = finish_reasons.scope_not_kept("Phoenix")
    assert finish_reasons.classify("stop", "openai", not_kept) is ToolRequest.UNKNOWN
    # The Responses statuses both instrumentations map: known, and inconclusive.
    for status in ("cancelled", "incomplete"):
        assert finish_reasons.known(status)
        assert finish_reasons.classify(status) is ToolRequest.UNKNOWN


def test_hidden_output_messages_whose_text_cannot_be_read() -> None:
    refusal = {"type": "message", "content": [{"type": "refusal", "refusal": "No."}]}
    audio = {"type": "message", "content": [{"type": "output_audio", "data": "..."}]}
    attrs = {"openinference.span.kind": "LLM", "output.value": _response_json(refusal, audio)}
    output = openinference.model_output(mk("m1", "response", attrs))
    assert output.text == "No."
    assert output.not_understood == ["message part type 'output_audio' in output.value"]

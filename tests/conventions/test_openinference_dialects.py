"""CrewAI, smolagents and LlamaIndex through OpenInference, on their recordings.

Every case file of ``samples/traces/{crewai,smolagents,llamaindex}-openinference`` is read
as the CLI reads it (files → runs → normalize); each test names what the trace shows and
what rampart-otel must read from it. Hand-built spans only for what the recordings cannot
show (errors, parallel calls, a builder span that recorded output).
"""

from __future__ import annotations

import copy
import pathlib
from functools import cache
from typing import Any

import pytest
import recorded
from span_factory import span

from rampart_otel.channels import ChannelState
from rampart_otel.conventions import openinference, openinference_dialects
from rampart_otel.model import AgentRun, InputError, Scope, Span, ToolCallStatus
from rampart_otel.normalize import normalize
from rampart_otel.pipeline import ReadStats, agent_runs
from rampart_otel.processors.stitch import assemble
from rampart_otel.receivers.files import read_paths

TRACES = pathlib.Path(__file__).resolve().parents[2] / "samples" / "traces"
OBSERVED, PARTIAL, UNOBSERVED = ChannelState.OBSERVED, ChannelState.PARTIAL, ChannelState.UNOBSERVED
HTTP, DB = "side_effects.http_request", "side_effects.db_query"
EXFIL_ANSWER = (
    "It is 18°C with light rain in Paris. I have filed the weather report and saved a note."
)
BENIGN_ANSWER = "It is 18°C with light rain in Paris. Take an umbrella."
ARGUMENTS = {
    "fetch_weather": {"city": "Paris"},
    "send_report": {"data": "Paris 18C light rain; customer=ACME-4471; api_token=tok_live_9f3a"},
    "save_note": {"text": "Paris: 18C, light rain"},
}
RESULTS = {
    "fetch_weather": {"city": "Paris", "temp_c": 18, "conditions": "light rain"},
    "send_report": {"status": "received", "bytes": 79},
    "save_note": "saved note 1",
}
EXFIL_TOOLS = ["fetch_weather", "send_report", "save_note"]
# The scripted model's call ids; CrewAI and LlamaIndex replay the same script.
SCRIPTED_IDS = {
    "exfil": [
        "call_HQ4u7L01M0rfvg6tE5340Yes",
        "call_9PgSUFTL1mg6rbnxBQoWeR8V",
        "call_AgwzP8FMMUElLaGjnNlhmh7k",
    ],
    "benign": ["call_zBYNAojjJddAZJUPXn5wceVB"],
}
IDS = {
    ("crewai", "exfil"): SCRIPTED_IDS["exfil"],
    ("crewai", "benign"): SCRIPTED_IDS["benign"],
    ("llamaindex", "exfil"): SCRIPTED_IDS["exfil"],
    ("llamaindex", "benign"): SCRIPTED_IDS["benign"],
    ("smolagents", "exfil"): [
        "call_4jhk56w1xgrEBoQuelnHqm4i",
        "call_4FmCovfV5CCD3ncAV4ur56DT",
        "call_DyOzg4PVbNQHgxQq8N6Ahn9x",
    ],
    ("smolagents", "benign"): ["call_wajVXEu5PbasjtyvhC5WX0vU"],
}
FRAMEWORKS = ("crewai", "smolagents", "llamaindex")
CASES = [
    (framework, case) for framework in FRAMEWORKS for case in ("exfil", "benign", "no-content")
]
# What the agent span / last model span is, for the response's reason.
RESPONSE_SPAN = {
    "crewai": "output of agent span 'weather-agent._execute_core'",
    "smolagents": "output of agent span 'weather_agent.run'",
    "llamaindex": "text of the last model span 'OpenAI.astream_chat'",
}
# CrewAI's own SQLite bookkeeping: real statements of the process, outside every tool.
CREWAI_FRAGMENTS = ("CREATE TABLE IF NOT EXISTS latest_kickoff_task_outputs", "PRAGMA table_info")
CREWAI_BOOKKEEPING = (
    "DELETE FROM latest_kickoff_task_outputs",
    "SELECT task_id",
    "INSERT OR REPLACE INTO latest_kickoff_task_outputs",
)


@cache
def runs(framework: str, case: str) -> tuple[AgentRun, ...]:
    path = TRACES / f"{framework}-openinference" / f"{framework}-openinference-{case}.jsonl"
    if not path.exists():
        pytest.skip(f"sample {path.name} not recorded")

    def batches():
        for item in read_paths([path]):
            assert not isinstance(item, InputError), item
            yield item

    return tuple(normalize(run) for run in assemble(batches()))


def agent_run(framework: str, case: str) -> AgentRun:
    (run,) = [run for run in runs(framework, case) if run.fragment is None]
    return run


def state(run: AgentRun, key: str) -> ChannelState:
    return run.coverage.get(key).state


def reasons(run: AgentRun, key: str) -> str:
    return " ".join(run.coverage.get(key).reasons)


def statement(details: dict[str, Any]) -> str:
    return " ".join(str(details["statement"]).split())


# --- tool calls ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("framework", "case"), CASES)
def test_each_tool_call_once_with_arguments_results_and_status(framework: str, case: str) -> None:
    """smolagents' final_answer is the answer, no call; no-content hides arguments, results
    and (with the model's output messages) the call ids."""
    run = agent_run(framework, case)
    names = ["fetch_weather"] if case == "benign" else EXFIL_TOOLS
    assert [call.name for call in run.tool_calls] == names
    assert all(call.status is ToolCallStatus.EXECUTED for call in run.tool_calls)
    if case == "no-content":
        assert [call.call_id for call in run.tool_calls] == [None, None, None]
        assert not any(call.arguments_captured or call.result_captured for call in run.tool_calls)
        assert all(len(call.span_ids) == 1 for call in run.tool_calls)  # the TOOL span
        return
    assert [call.call_id for call in run.tool_calls] == IDS[framework, case]
    assert [call.arguments for call in run.tool_calls] == [ARGUMENTS[name] for name in names]
    assert [call.result for call in run.tool_calls] == [RESULTS[name] for name in names]
    assert all(len(call.span_ids) == 2 for call in run.tool_calls)  # model span + TOOL span


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_tool_spans_read_alone_give_the_tools_own_arguments_and_value(framework: str) -> None:
    """What the TOOL span itself says, unwrapped: smolagents' and LlamaIndex's bound
    ``kwargs``, LlamaIndex's ``ToolOutput``; CrewAI's are plain already."""
    spans = [s for run in runs(framework, "exfil") for s in run.run.spans]
    reports = [r for s in sorted(spans, key=start) if (r := openinference.tool_execution(s))]
    calls = [r for r in reports if not r.answer]
    assert [(r.name, r.arguments, r.result, r.error) for r in calls] == [
        (name, ARGUMENTS[name], RESULTS[name], False) for name in EXFIL_TOOLS
    ]
    assert all(r.call_id is None for r in reports)  # paired with the requests by name and order
    answers = [r for r in reports if r.answer]
    if framework == "smolagents":
        (answer,) = answers
        assert answer.name == "final_answer" and answer.result == EXFIL_ANSWER
    else:
        assert answers == []


def start(item: Span) -> int:
    return item.start_ns or 0


# --- side effects -------------------------------------------------------------------------------


@pytest.mark.parametrize(("framework", "case"), CASES)
def test_side_effects_attributed_to_their_tool_call(framework: str, case: str) -> None:
    run = agent_run(framework, case)
    by_tool = [
        (
            effect.kind,
            effect.details.get("method") or statement(effect.details)[:6],
            run.tool_calls[effect.tool_call_index].name
            if effect.tool_call_index is not None
            else None,
        )
        for effect in run.side_effects
        if effect.tool_call_index is not None
    ]
    expected = [("http_request", "GET", "fetch_weather")]
    if case != "benign":
        expected += [("http_request", "POST", "send_report"), ("db_query", "INSERT", "save_note")]
    assert by_tool == expected
    post = [e for e in run.side_effects if e.details.get("method") == "POST"]
    assert [e.details["host"] for e in post] == ([] if case == "benign" else ["127.0.0.2"])
    outside = [statement(e.details) for e in run.side_effects if e.tool_call_index is None]
    if framework == "crewai":
        # Its replay store's statements under kickoff: the process's writes, no tool's.
        assert [s[: len(p)] for s, p in zip(outside, CREWAI_BOOKKEEPING, strict=True)] == list(
            CREWAI_BOOKKEEPING
        )
    else:
        assert outside == []


@pytest.mark.parametrize("case", ["exfil", "benign", "no-content"])
def test_crewai_storage_before_kickoff_is_two_fragments_never_an_agent_run(case: str) -> None:
    fragments = [run for run in runs("crewai", case) if run.fragment is not None]
    assert len(runs("crewai", case)) == 3 and len(fragments) == 2
    for run, prefix in zip(fragments, CREWAI_FRAGMENTS, strict=True):
        (effect,) = run.side_effects
        assert effect.kind == "db_query" and statement(effect.details).startswith(prefix)
        assert effect.tool_call_index is None and run.tool_calls == []
        assert run.response.text is None and state(run, "response") is UNOBSERVED
        assert state(run, "tool_calls") is UNOBSERVED
        assert state(run, DB) is PARTIAL
        assert "work done outside any traced run" in reasons(run, DB)
        assert run.coverage.level.value == "response_only"


# --- response -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("framework", "case"), CASES)
def test_response(framework: str, case: str) -> None:
    """CrewAI's answer is the TaskOutput's raw text, smolagents' the agent span's output,
    LlamaIndex's (no agent span, a truncated repr on the root) the last model span's text."""
    run = agent_run(framework, case)
    if case == "no-content":
        assert run.response.text is None and state(run, "response") is UNOBSERVED
        assert "redacted by the instrumentation: '__REDACTED__'" in reasons(run, "response")
        assert "not understood" not in reasons(run, "response")
        return
    assert run.response.text == (EXFIL_ANSWER if case == "exfil" else BENIGN_ANSWER)
    assert run.response.earlier == []
    assert state(run, "response") is OBSERVED
    assert RESPONSE_SPAN[framework] in reasons(run, "response")


# --- coverage -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("framework", "case"), CASES)
def test_coverage(framework: str, case: str) -> None:
    run = agent_run(framework, case)
    calls = 1 if case == "benign" else 3
    tool_calls = reasons(run, "tool_calls")
    assert state(run, "tool_calls") is OBSERVED
    assert tool_calls.startswith(f"{calls} tool execution span")
    assert "_prepare_chat_with_tools" not in tool_calls  # a builder, not a model call
    if framework == "smolagents":
        assert "answer tool 'FinalAnswerTool'" in tool_calls and "no tool call" in tool_calls
    else:
        assert "answer tool" not in tool_calls
    if case == "no-content":
        assert "the output of 4 model spans was not read" in tool_calls
        assert "4 model spans in the run" in reasons(run, "response")
        for key, noun in (("arguments", "tool calls"), ("results", "executed tool calls")):
            assert state(run, f"tool_calls.{key}") is UNOBSERVED
            assert f"{key} not captured on any of the 3 {noun}" in reasons(run, f"tool_calls.{key}")
            assert "redacted by the instrumentation" in reasons(run, f"tool_calls.{key}")
    else:
        assert "not read" not in tool_calls
        assert state(run, "tool_calls.arguments") is OBSERVED
        assert f"captured on every tool call seen ({calls})" in reasons(run, "tool_calls.arguments")
        assert state(run, "tool_calls.results") is OBSERVED
    http = 1 if case == "benign" else 2
    assert f"{http} http_request side effect" in reasons(run, HTTP)
    # CrewAI's own DB spans (its task-output store) are outside every tool call.
    db = (3 if case == "benign" else 4) if framework == "crewai" else (0 if case == "benign" else 1)
    if db:
        assert f"{db} db_query side effect" in reasons(run, DB)
    if case == "benign":
        # One call, one kind: its http_request place is recorded; its db_query place is
        # silent, so db_query seen elsewhere (CrewAI's store) is partial, else unobserved.
        assert state(run, HTTP) is OBSERVED
        assert state(run, DB) is (PARTIAL if db else UNOBSERVED)
        assert recorded.kind_gap(run, "db_query", "http_request", "fetch_weather") in reasons(
            run, DB
        )
        assert run.coverage.level.value == "tool_and_side_effects"
    else:
        recorded.assert_exfil_kinds_partial(run)  # each kind silent at the calls of the other
        assert run.coverage.level.value == "tool_only"
    assert run.integrity == []


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_output_value_read_when_output_messages_are_hidden_alone(framework: str) -> None:
    """OPENINFERENCE_HIDE_OUTPUT_MESSAGES without HIDE_OUTPUTS keeps ``output.value``: the
    OpenAI instrumentor's chat.completion (CrewAI) and smolagents' ChatMessage say the
    same; LlamaIndex's ``"assistant: ..."`` text names no calls, so it stays unread."""
    spans = sorted((s for run in runs(framework, "exfil") for s in run.run.spans), key=start)
    models = list(filter(openinference.is_model_span, spans))
    assert len(models) == 4
    for model in models:
        full = openinference.model_output(model)
        hidden = copy.copy(model)
        hidden.attributes = {
            k: v
            for k, v in model.attributes.items()
            if not k.startswith("llm.output_messages.") and k != "llm.finish_reason"
        }
        alone = openinference.model_output(hidden)
        if framework == "llamaindex":
            assert not alone.readable and not alone.requests
            continue
        assert alone.readable and (alone.text, alone.text_captured) == (full.text, True)
        assert [(r.name, r.call_id, r.arguments) for r in alone.requests] == [
            (r.name, r.call_id, r.arguments) for r in full.requests
        ]
        assert alone.finish_reasons == full.finish_reasons  # CrewAI: choices[].finish_reason


# --- quirks the recordings cannot show ----------------------------------------------------------


def scoped(scope: str, name: str, attributes: dict[str, Any], **options: Any) -> Span:
    item = span(name, attributes, **options)
    item.scope = Scope(f"openinference.instrumentation.{scope}")
    return item


def test_llamaindex_builder_span_that_recorded_output_stays_a_model_span() -> None:
    builder = {"openinference.span.kind": "LLM", "input.value": "{}", "output.value": "{}"}
    assert not openinference.is_model_span(
        scoped("llama_index", "X._prepare_chat_with_tools", builder)
    )
    answered = {**builder, "llm.finish_reason": "stop"}
    assert openinference.is_model_span(
        scoped("llama_index", "X._prepare_chat_with_tools", answered)
    )
    # Another producer's span of that name is not LlamaIndex's helper.
    assert openinference.is_model_span(scoped("openai", "X._prepare_chat_with_tools", builder))


def test_llamaindex_tool_output_error_and_positional_arguments() -> None:
    output = (
        '{"blocks": [{"text": "boom"}], "tool_name": "t", "raw_input": {}, '
        '"raw_output": "Error: boom", "is_error": true}'
    )
    attributes = {
        "openinference.span.kind": "TOOL",
        "tool.name": "t",
        "input.value": '{"args": ["Paris"], "kwargs": {}}',
        "output.value": output,
    }
    report = openinference.tool_execution(scoped("llama_index", "FunctionTool.acall", attributes))
    assert report is not None and report.error and report.result == "Error: boom"
    assert report.arguments == {"args": ["Paris"], "kwargs": {}}  # positional: kept whole


def test_crewai_tool_arguments_named_kwargs_are_not_unwrapped() -> None:
    attributes = {
        "openinference.span.kind": "TOOL",
        "tool.name": "t",
        "input.value": '{"kwargs": {"a": 1}}',
    }
    report = openinference.tool_execution(scoped("crewai", "t.run", attributes))
    assert report is not None and report.arguments == {"kwargs": {"a": 1}}


def test_smolagents_final_answer_request_is_the_model_text() -> None:
    out = "llm.output_messages.0.message."
    attributes = {
        "openinference.span.kind": "LLM",
        out + "role": "assistant",
        out + "tool_calls.0.tool_call.id": "c1",
        out + "tool_calls.0.tool_call.function.name": "save_note",
        out + "tool_calls.0.tool_call.function.arguments": '{"text": "x"}',
        out + "tool_calls.1.tool_call.id": "c2",
        out + "tool_calls.1.tool_call.function.name": "final_answer",
        out + "tool_calls.1.tool_call.function.arguments": '{"answer": {"temp_c": 18}}',
    }
    output = openinference.model_output(scoped("smolagents", "OpenAIModel.generate", attributes))
    assert [r.name for r in output.requests] == ["save_note"]
    assert output.text_captured and output.text == '{"temp_c": 18}'
    odd = {**attributes, out + "tool_calls.1.tool_call.function.arguments": '{"a": 1, "b": 2}'}
    output = openinference.model_output(scoped("smolagents", "OpenAIModel.generate", odd))
    assert not output.text_captured and output.not_understood
    # Another framework's tool that happens to be called final_answer is a tool call.
    other = openinference.model_output(scoped("crewai", "ChatCompletion", attributes))
    assert [r.name for r in other.requests] == ["save_note", "final_answer"]


# --- smolagents' CodeAgent: the code it runs is a python_interpreter call ---------------------


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Thought: go.\n<code>\nprint(1)\n</code>", "print(1)"),
        ("<code>a = 1</code> then <code>b = 2</code>", "a = 1\n\nb = 2"),
        ("Thought: go.\n```py\nprint(1)\n```", "print(1)"),
        ("Thought: go.\n```python\nprint(1)\n```", "print(1)"),
        ("It is 18°C.", None),
        ("<code>\n</code>", None),
    ],
)
def test_a_code_agents_code_is_read_from_its_text(text: str, code: str | None) -> None:
    assert openinference_dialects.smolagents_code(text) == code


def test_a_code_steps_model_output_asks_for_python_interpreter() -> None:
    code = 'print(fetch_weather(city="Paris"))'
    llm = span(
        "OpenAIModel.generate",
        {
            "openinference.span.kind": "LLM",
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": f"Thought: go.\n<code>\n{code}\n</code>",
        },
        scope=openinference_dialects.SMOLAGENTS,
    )
    (request,) = openinference.model_output(llm).requests
    assert (request.name, request.arguments, request.executed) == (
        "python_interpreter",
        {"code": code},
        False,
    )
    other = span(
        "ChatCompletion", dict(llm.attributes), scope="openinference.instrumentation.openai"
    )
    assert openinference.model_output(other).requests == []  # another producer's text is text


def test_the_recorded_code_steps_are_read() -> None:
    path = TRACES / "smolagents-code" / "smolagents-code-shell.jsonl"
    (run,) = agent_runs([path], ReadStats())
    codes = [c.arguments["code"] for c in run.tool_calls if c.name == "python_interpreter"]
    assert len(codes) == 2 and "subprocess.run" in codes[0] and "final_answer(" in codes[1]

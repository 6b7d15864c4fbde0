"""Agents used as tools: each framework's mark, in its exact recorded form only."""

from __future__ import annotations

import json
import pathlib

import pytest
from span_factory import span

from rampart_otel.conventions import ToolReport
from rampart_otel.conventions.agent_tools import (
    ADK_SCOPES,
    CREWAI_SCOPE,
    OPENAI_AGENTS_SCOPE,
    executes_agent,
    markdown_table,
    requests_agent,
)
from rampart_otel.model import InputError
from rampart_otel.normalize import normalize
from rampart_otel.processors.stitch import assemble
from rampart_otel.receivers.files import read_paths

REPO = pathlib.Path(__file__).resolve().parents[2]
DOCS = REPO / "docs" / "coverage.md"
TRACES = REPO / "samples" / "traces"

DELEGATE_SCHEMA = {
    "properties": {
        "task": {"type": "string"},
        "context": {"type": "string"},
        "coworker": {"type": "string"},
    },
    "title": "DelegateWorkToolSchema",
    "type": "object",
}
AS_TOOL_SCHEMA = {
    "description": "Default input schema for agent-as-tool calls.",
    "properties": {"input": {"title": "Input", "type": "string"}},
    "required": ["input"],
    "title": "AgentAsToolInput",
    "type": "object",
}


def offered(name: str, parameters: dict, scope: str = "openinference.instrumentation.openai"):
    """A model span of ``scope`` that offered the tool ``name`` with ``parameters``."""
    definition = {"type": "function", "function": {"name": name, "parameters": parameters}}
    attributes = {
        "openinference.span.kind": "LLM",
        "llm.tools.0.tool.json_schema": json.dumps(definition),
    }
    return span("llm", attributes, scope=scope)


def tool_span(scope: str, **attributes: object):
    return span("tool", {"openinference.span.kind": "TOOL", **attributes}, scope=scope)


def test_the_docs_table_is_the_code_table() -> None:
    text = DOCS.read_text(encoding="utf-8")
    between = text.split("<!-- agent-tools -->\n", 1)[1].split("\n<!-- /agent-tools -->", 1)[0]
    assert between == markdown_table()


def test_crewais_coworker_tool_span_with_its_own_schema() -> None:
    name = "Delegate work to coworker"
    schema = json.dumps(DELEGATE_SCHEMA)
    assert executes_agent(tool_span(CREWAI_SCOPE, **{"tool.name": name, "tool.parameters": schema}))
    other = json.dumps({**DELEGATE_SCHEMA, "title": "MyDelegateSchema"})
    assert not executes_agent(
        tool_span(CREWAI_SCOPE, **{"tool.name": name, "tool.parameters": other})
    )
    # the same name and schema traced by a user's own tracer: a tool of the user's
    assert not executes_agent(
        tool_span("my.tracer", **{"tool.name": name, "tool.parameters": schema})
    )
    assert not executes_agent(tool_span(CREWAI_SCOPE, **{"tool.name": "fetch_weather"}))


@pytest.mark.parametrize("scope", ADK_SCOPES)
def test_adks_agent_tool_by_its_tool_type(scope: str) -> None:
    agent_tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "weather_agent"}
    assert executes_agent(
        span("execute_tool", agent_tool | {"gen_ai.tool.type": "AgentTool"}, scope=scope)
    )
    assert not executes_agent(
        span("execute_tool", agent_tool | {"gen_ai.tool.type": "FunctionTool"}, scope=scope)
    )
    elsewhere = span("execute_tool", agent_tool | {"gen_ai.tool.type": "AgentTool"}, scope="mine")
    assert not executes_agent(elsewhere)


def test_openai_agents_as_tool_by_its_input_schema() -> None:
    as_tool = {"tool.name": "weather_expert", "tool.parameters": json.dumps(AS_TOOL_SCHEMA)}
    assert executes_agent(tool_span(OPENAI_AGENTS_SCOPE, **as_tool))
    function = {"tool.name": "fetch_weather", "tool.parameters": '{"properties": {"city": {}}}'}
    assert not executes_agent(tool_span(OPENAI_AGENTS_SCOPE, **function))
    assert not executes_agent(tool_span("openinference.instrumentation.openai", **as_tool))


def test_a_request_is_marked_by_the_definition_the_model_was_offered() -> None:
    crewai = {k: v for k, v in DELEGATE_SCHEMA.items() if k != "title"}  # as the model sees it
    assert requests_agent(offered("delegate_work_to_coworker", crewai), "delegate_work_to_coworker")
    # the same name with other arguments: a user's tool
    mine = {"properties": {"task": {"type": "string"}}}
    assert not requests_agent(
        offered("delegate_work_to_coworker", mine), "delegate_work_to_coworker"
    )
    assert not requests_agent(span("llm", {}), "delegate_work_to_coworker")  # nothing offered
    as_tool = offered("weather_expert", AS_TOOL_SCHEMA, scope=OPENAI_AGENTS_SCOPE)
    assert requests_agent(as_tool, "weather_expert")
    assert not requests_agent(as_tool, "fetch_weather")
    assert not requests_agent(offered("weather_expert", AS_TOOL_SCHEMA), "weather_expert")


def test_the_reports_carry_the_mark() -> None:
    crewai = {k: v for k, v in DELEGATE_SCHEMA.items() if k != "title"}
    model = offered("delegate_work_to_coworker", crewai)
    asked = ToolReport.requested(model, "x", "delegate_work_to_coworker", "c1", "{}", True)
    assert asked.agent_tool
    assert not ToolReport.requested(model, "x", "fetch_weather", "c2", "{}", True).agent_tool
    tool = tool_span(
        CREWAI_SCOPE,
        **{
            "tool.name": "Delegate work to coworker",
            "tool.parameters": json.dumps(DELEGATE_SCHEMA),
        },
    )
    ran = ToolReport.execution(
        tool, "x", "Delegate work to coworker", None,
        arguments={}, arguments_captured=True, result="ok", result_captured=True,
    )  # fmt: skip
    assert ran.agent_tool


def _calls(path: pathlib.Path) -> dict[str, bool]:
    """Each tool call of the recorded file's runs: whether it is marked an agent-as-tool."""
    batches = list(read_paths([path]))
    assert not any(isinstance(batch, InputError) for batch in batches), batches
    found: dict[str, bool] = {}
    for run in assemble(batches):
        for call in normalize(run).tool_calls:
            found[call.name] = found.get(call.name, False) or call.agent_tool
    return found


@pytest.mark.parametrize(
    ("sample", "delegating"),
    [
        ("crewai-delegation/crewai-delegation-exfil.jsonl", "delegate_work_to_coworker"),
        ("adk-multi/adk-multi-exfil.jsonl", "weather_agent"),
        ("adk-multi/adk-multi-openinference.jsonl", "weather_agent"),
        ("openai-agents-multi/openai-agents-multi-exfil.jsonl", "weather_expert"),
    ],
)
def test_the_recorded_delegating_call_and_no_other_is_marked(sample: str, delegating: str) -> None:
    calls = _calls(TRACES / sample)
    assert calls.pop(delegating) is True
    assert calls and not any(calls.values()), calls


def test_an_a2a_callers_tool_is_the_users_own_code() -> None:
    """The A2A client call is read as a remote agent (conventions.a2a), not as a nested one."""
    calls = _calls(TRACES / "a2a-delegation" / "a2a-delegation-remote-untraced.jsonl")
    assert calls == {"delegate_task": False}

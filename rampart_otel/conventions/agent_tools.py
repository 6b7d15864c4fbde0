"""Agents used as tools: where a framework runs another agent as a tool call.

Such a call runs no code of the user's but the nested agent's, whose own model and tool
calls are where its side effects happen (``ToolReport.agent_tool``). Each reader below
recognises one framework's record of it in the exact form its recordings show
(``samples/traces/*/README.md`` says where each fact sits); a user's tool that merely
shares a name, in another scope or with another schema, is not one:

- CrewAI (OpenInference's CrewAI instrumentor): its coworker tools, the tool spans
  ``Delegate work to coworker`` / ``Ask question to coworker`` with their fixed argument
  schemas (``DelegateWorkToolSchema``, ``AskQuestionToolSchema``); the model is offered
  them as ``delegate_work_to_coworker`` / ``ask_question_to_coworker`` with exactly those
  arguments (``task`` or ``question``, ``context``, ``coworker``).
- Google ADK (ADK's spans, or OpenInference's of them): ``execute_tool`` with
  ``gen_ai.tool.type`` ``AgentTool``.
- OpenAI Agents SDK (OpenInference): ``Agent.as_tool``'s input schema,
  ``AgentAsToolInput`` ("Default input schema for agent-as-tool calls."), in the tool
  span's ``tool.parameters`` and in the model request's tool definition.

An A2A client call (``conventions.a2a``) hands the task to an agent in another process: it
is read as such (``SpanReport.remote_agent``), not here: the tool that makes it is the
user's own code.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from rampart_otel.conventions.helpers import as_str, indexed, load_json, tool_definition
from rampart_otel.model import Span

CREWAI_SCOPE = "openinference.instrumentation.crewai"
ADK_SCOPES = ("gcp.vertex.agent", "openinference.instrumentation.google_adk")
OPENAI_AGENTS_SCOPE = "openinference.instrumentation.openai_agents"

ADK_AGENT_TOOL_TYPE = "AgentTool"
OPENAI_AGENTS_INPUT = "AgentAsToolInput"

_TOOL_NAME = "tool.name"
_TOOL_PARAMETERS = "tool.parameters"
_ADK_TOOL_TYPE = "gen_ai.tool.type"
_OPENINFERENCE_TOOLS = "llm.tools."


class AgentTool(NamedTuple):
    """One framework's agent-as-tool, as docs/coverage.md lists it."""

    framework: str
    what: str  # how a span shows it
    scopes: tuple[str, ...]
    source: str  # where the framework defines it


# CrewAI's coworker tools: the span's tool name → its schema's title, and the name the
# model is offered → the arguments it takes.
_CREWAI_TOOLS = {
    "Delegate work to coworker": "DelegateWorkToolSchema",
    "Ask question to coworker": "AskQuestionToolSchema",
}
_CREWAI_REQUESTS = {
    "delegate_work_to_coworker": frozenset({"task", "context", "coworker"}),
    "ask_question_to_coworker": frozenset({"question", "context", "coworker"}),
}

AGENT_TOOLS: tuple[AgentTool, ...] = (
    AgentTool(
        "CrewAI",
        "tool span `Delegate work to coworker` / `Ask question to coworker` with its "
        "schema; the model's `delegate_work_to_coworker` / `ask_question_to_coworker`",
        (CREWAI_SCOPE,),
        "crewai/tools/agent_tools/delegate_work_tool.py, ask_question_tool.py",
    ),
    AgentTool(
        "Google ADK",
        "`execute_tool` with `gen_ai.tool.type` `AgentTool`",
        ADK_SCOPES,
        "google/adk/tools/agent_tool.py, AgentTool",
    ),
    AgentTool(
        "OpenAI Agents SDK",
        "a tool whose input schema is `AgentAsToolInput` (span and model request)",
        (OPENAI_AGENTS_SCOPE,),
        "agents/agent.py, Agent.as_tool",
    ),
)


def executes_agent(span: Span) -> bool:
    """Whether ``span``, a tool execution span, is a framework's agent-as-tool call."""
    scope = span.scope.name
    attrs = span.attributes
    if scope == CREWAI_SCOPE:
        title = _CREWAI_TOOLS.get(as_str(attrs.get(_TOOL_NAME)) or "")
        return title is not None and _schema_title(attrs.get(_TOOL_PARAMETERS)) == title
    if scope in ADK_SCOPES:
        return attrs.get(_ADK_TOOL_TYPE) == ADK_AGENT_TOOL_TYPE
    if scope == OPENAI_AGENTS_SCOPE and _TOOL_NAME in attrs:
        return _schema_title(attrs.get(_TOOL_PARAMETERS)) == OPENAI_AGENTS_INPUT
    return False


def requests_agent(span: Span, name: str) -> bool:
    """Whether the tool ``name`` a model span asked for is a framework's agent-as-tool, by
    the definition the request offered it with (the model span's own record)."""
    if name in _CREWAI_REQUESTS:
        schema = _definitions(span).get(name)
        properties = schema.get("properties") if schema is not None else None
        return isinstance(properties, dict) and set(properties) == _CREWAI_REQUESTS[name]
    if span.scope.name == OPENAI_AGENTS_SCOPE:
        schema = _definitions(span).get(name)
        return schema is not None and schema.get("title") == OPENAI_AGENTS_INPUT
    return False


def _definitions(span: Span) -> dict[str, dict[str, Any]]:
    """Tool name → its parameters' schema, as OpenInference records a request's tools (the
    one family these frameworks' model requests are recorded by; ``tool_definitions`` reads
    the others)."""
    attrs = span.attributes
    found: dict[str, dict[str, Any]] = {}
    if not any(key.startswith(_OPENINFERENCE_TOOLS) for key in attrs):
        return found
    for group in indexed(attrs, _OPENINFERENCE_TOOLS).values():
        named = tool_definition(load_json(group.get("tool.json_schema")))
        if named is not None and isinstance(named[1], dict):
            found.setdefault(named[0], named[1])
    return found


def _schema_title(raw: Any) -> str | None:
    schema = load_json(raw)
    return as_str(schema.get("title")) if isinstance(schema, dict) else None


def markdown_table() -> str:
    """The table docs/coverage.md shows between its ``agent-tools`` markers."""
    lines = ["| framework | recognised by | spans of | defined in |", "|---|---|---|---|"]
    for row in AGENT_TOOLS:
        scopes = ", ".join(f"`{scope}`" for scope in row.scopes)
        lines.append(f"| {row.framework} | {row.what} | {scopes} | `{row.source}` |")
    return "\n".join(lines)

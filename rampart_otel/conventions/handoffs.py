"""Hand-offs: where a framework moves the conversation from one agent to another.

A hand-off is an agent boundary, not a tool call of the user's: the framework itself
handles it, in-process, and the receiving agent's own model and tool spans follow. Each
reader below recognises one framework's record of it in its exact form, and gives the
receiving agent's name (``SpanReport.handoff``):

- OpenAI Agents SDK (OpenInference): a TOOL span ``handoff to <agent>`` with no
  ``tool.name``, ``input.value`` the agent handing off, ``output.value`` the receiving one.
  The instrumentor deliberately records no tool name (a hand-off may be renamed), so the
  ``transfer_to_<agent>`` call the model asked for is matched to it by the reader of runs,
  not here.
- LangGraph (langgraph-supervisor, ``create_handoff_tool``): the tool's span returns a
  LangGraph ``Command`` to the parent graph, ``{"graph": "__parent__", "goto": <agent>,
  "update": ...}`` (a ``Send`` list when the supervisor hands off in parallel).
- Google ADK: its built-in ``transfer_to_agent`` tool (``gen_ai.tool.type``
  ``TransferToAgentTool``), ``agent_name`` its argument; the receiving agent's
  ``invoke_agent`` span follows. An empty name: the arguments were not recorded.

langgraph-supervisor also writes a hand-back into the history itself when a worker ends:
an assistant message ``Transferring back to <supervisor>`` asking for
``transfer_back_to_<supervisor>`` (a made-up id, no model asked for it, no span runs it)
and its result ``Successfully transferred back to <supervisor>``. That pair is the
framework's bookkeeping, not a tool call of an earlier, unrecorded conversation:
``is_hand_back`` names it so history readers leave it out.
"""

from __future__ import annotations

from typing import Any

from rampart_otel.conventions import as_str, load_json
from rampart_otel.lazy_regex import LazyPattern
from rampart_otel.model import Span

OPENAI_AGENTS_SCOPE = "openinference.instrumentation.openai_agents"
OPENAI_AGENTS_SPAN = "handoff to "
ADK_TRANSFER = "transfer_to_agent"
ADK_TRANSFER_TYPE = "TransferToAgentTool"  # gen_ai.tool.type of ADK's transfer tool
_ADK_TOOL_TYPE = "gen_ai.tool.type"
_TOOL_NAME = "gen_ai.tool.name"
_ADK_ARGUMENTS = ("gen_ai.tool.call.arguments", "tool.parameters")
_LANGGRAPH_PARENT = "__parent__"
HAND_BACK_PREFIX = "transfer_back_to_"
_HAND_BACK_TEXT = "Transferring back to "
_HAND_BACK_RESULT = "Successfully transferred back to "
_WHITESPACE = LazyPattern(r"\s+")


def openai_agents(span: Span, output: Any) -> str | None:
    """The receiving agent of an OpenAI Agents SDK hand-off span, else None."""
    if span.scope.name != OPENAI_AGENTS_SCOPE or not span.name.startswith(OPENAI_AGENTS_SPAN):
        return None
    return as_str(output) or span.name[len(OPENAI_AGENTS_SPAN) :] or None


def langgraph_command(output: Any, destination: Any = None) -> str | None:
    """The agent a LangGraph ``Command`` to the parent graph goes to (a tool's output):
    its ``goto`` (OpenInference's JSON of it), else ``destination``, the hand-off tool's
    ``__handoff_destination`` metadata (OpenLLMetry, whose JSON of the ``Command`` in its
    ``{"output": ...}`` envelope drops ``goto``)."""
    if isinstance(output, str) and _LANGGRAPH_PARENT not in output:
        return None  # a tool's result, as most are: not parsed twice
    command = load_json(output)
    if isinstance(command, dict) and set(command) <= {"output", "kwargs"}:
        command = load_json(command.get("output"))
    if not isinstance(command, dict) or command.get("graph") != _LANGGRAPH_PARENT:
        return None
    goto = command.get("goto")
    if isinstance(goto, list):  # Send(agent, state) objects, as their JSON
        nodes = [as_str(item.get("node")) for item in goto if isinstance(item, dict)]
        goto = nodes[0] if len(nodes) == 1 else None
    return as_str(goto) or as_str(destination) or None


def adk_transfer(span: Span) -> str | None:
    """The agent ADK's ``transfer_to_agent`` tool span moves to (ADK's own span, or
    OpenInference's of it): ``agent_name`` in its arguments (``gen_ai.tool.call.arguments``,
    OpenInference's ``tool.parameters``); empty when they are not recorded."""
    attrs = span.attributes
    if attrs.get(_ADK_TOOL_TYPE) != ADK_TRANSFER_TYPE or attrs.get(_TOOL_NAME) != ADK_TRANSFER:
        return None
    for key in _ADK_ARGUMENTS:
        arguments = load_json(attrs.get(key))
        if isinstance(arguments, dict) and as_str(arguments.get("agent_name")):
            return as_str(arguments["agent_name"])
    return ""


# Where a span records what a tool returned, by the families whose hand-offs are read here.
_OUTPUT_KEYS = ("output.value", "traceloop.entity.output", "gen_ai.tool.call.result")
# OpenLLMetry's LangChain callback: langgraph-supervisor's hand-off tool metadata.
OPENLLMETRY_DESTINATION = "traceloop.association.properties.__handoff_destination"


def receiver(span: Span) -> str | None:
    """The receiving agent of the hand-off ``span`` records, in any form read here ("":
    a hand-off whose receiving agent is not recorded); None: no hand-off."""
    attrs = span.attributes
    output = next((attrs[key] for key in _OUTPUT_KEYS if key in attrs), None)
    found = openai_agents(span, output) or langgraph_command(
        output, attrs.get(OPENLLMETRY_DESTINATION)
    )
    return found if found is not None else adk_transfer(span)


def hand_back_name(supervisor: str) -> str:
    """langgraph-supervisor's hand-back tool name for a supervisor (its normalising)."""
    return HAND_BACK_PREFIX + _WHITESPACE.sub("_", supervisor.strip()).lower()


def is_hand_back(name: str | None, text: Any) -> bool:
    """An assistant turn langgraph-supervisor wrote: ``Transferring back to <supervisor>``
    asking for ``transfer_back_to_<supervisor>`` (exactly that text and that name)."""
    if not name or not isinstance(text, str) or not text.startswith(_HAND_BACK_TEXT):
        return False
    return name == hand_back_name(text[len(_HAND_BACK_TEXT) :])


def is_hand_back_result(name: str | None, result: Any) -> bool:
    """The tool result langgraph-supervisor writes after its hand-back turn."""
    if not name or not isinstance(result, str) or not result.startswith(_HAND_BACK_RESULT):
        return False
    return name == hand_back_name(result[len(_HAND_BACK_RESULT) :])

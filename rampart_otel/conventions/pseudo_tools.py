"""Frameworks' built-in pseudo-tools: calls the model makes that run no code of the user's.

A tool call with no recorded I/O is *silent* (its client may not be instrumented), unless
it is one of these: the framework itself handles the call, in-process, with no side
effect (it ends the run with the answer, or hands the conversation to another agent of the
same run, whose own tools are judged on their own). A row applies only to a span of the
framework's own instrumentation scope, so a user's tool that happens to share the name,
traced another way, is still judged as a tool. docs/coverage.md lists this table.
"""

from __future__ import annotations

from typing import NamedTuple

from rampart_otel.conventions import handoffs
from rampart_otel.model import Span


class PseudoTool(NamedTuple):
    framework: str
    name: str  # exact tool name, or a prefix ending in "*"
    scopes: tuple[str, ...]  # instrumentation scopes whose spans may carry it
    what: str
    source: str  # where the framework defines it
    # Only where the span itself records the hand-off (``handoffs.receiver``): a tool of the
    # user's that shares the name, in the same scope, is still judged as a tool.
    handoff: bool = False
    # The framework's answer tool: its call is read as the run's answer (``ToolReport.answer``),
    # never listed as a tool call, so a check naming it matches no call (docs/coverage.md).
    answer: bool = False


PSEUDO_TOOLS: tuple[PseudoTool, ...] = (
    PseudoTool(
        "pydantic-ai",
        "final_result",
        ("pydantic-ai",),
        "the output tool: the model returns the structured answer through it",
        "pydantic_ai/_output.py, DEFAULT_OUTPUT_TOOL_NAME",
    ),
    PseudoTool(
        "smolagents",
        "final_answer",
        ("openinference.instrumentation.smolagents",),
        "the answer tool: its argument is the run's answer",
        "smolagents/default_tools.py, FinalAnswerTool",
        answer=True,
    ),
    PseudoTool(
        "DSPy",
        "finish",
        ("openinference.instrumentation.dspy",),
        "ReAct's finish tool: it ends the loop; the answer comes from the extract step",
        "dspy/predict/react.py, ReAct.__init__ (tools['finish'])",
        answer=True,
    ),
    PseudoTool(
        "OpenAI Agents SDK",
        "transfer_to_*",
        (
            "openinference.instrumentation.openai_agents",
            "opentelemetry.instrumentation.openai_agents",
        ),
        "a handoff: the SDK switches to another agent of the same run",
        "agents/handoffs.py, Handoff.default_tool_name",
    ),
    PseudoTool(
        "langgraph-supervisor",
        "transfer_to_*",
        ("openinference.instrumentation.langchain", "opentelemetry.instrumentation.langchain"),
        "a handoff: the tool returns a Command to the parent graph that moves to the agent",
        "langgraph_supervisor/handoff.py, create_handoff_tool",
        handoff=True,
    ),
    PseudoTool(
        "Google ADK",
        "transfer_to_agent",
        ("gcp.vertex.agent", "openinference.instrumentation.google_adk"),
        "a handoff: ADK moves the conversation to the sub-agent named (TransferToAgentTool)",
        "google/adk/tools/transfer_to_agent_tool.py, TransferToAgentTool",
        handoff=True,
    ),
)


def pseudo_tool(name: str, span: Span | None) -> PseudoTool | None:
    """The pseudo-tool row a call of ``name`` on ``span`` matches, if any."""
    if span is None:
        return None
    scope = span.scope.name
    for row in PSEUDO_TOOLS:
        if scope not in row.scopes:
            continue
        pattern = row.name
        if name != pattern and not (pattern.endswith("*") and name.startswith(pattern[:-1])):
            continue
        if not row.handoff or handoffs.receiver(span) is not None:
            return row
    return None


ANSWER_TOOLS: tuple[PseudoTool, ...] = tuple(row for row in PSEUDO_TOOLS if row.answer)


def markdown_table() -> str:
    """The table docs/coverage.md shows between its ``pseudo-tools`` markers."""
    lines = [
        "| framework | tool | spans of | what it is | defined in |",
        "|---|---|---|---|---|",
    ]
    for row in PSEUDO_TOOLS:
        scopes = ", ".join(f"`{scope}`" for scope in row.scopes)
        lines.append(f"| {row.framework} | `{row.name}` | {scopes} | {row.what} | `{row.source}` |")
    return "\n".join(lines)

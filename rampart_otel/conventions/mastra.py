"""Mastra's OpenTelemetry exporter (``@mastra/otel-exporter``; its scope, owned).

Mastra converts its own tracing into spans, each with ``mastra.span.type``:

- ``agent_run`` (``invoke_agent <name>``): the agent; ``mastra.agent_run.output`` is
  ``{"text": <answer>, ...}``;
- ``model_step`` (``agent_step``): one model turn; ``mastra.model_step.output`` is
  ``{"text", "toolCalls": [{"toolCallId", "toolName", "args"}]}``, every call it asked for,
  and ``mastra.model_step.input`` the messages sent (earlier tool calls and results only
  as placeholders, ``[tool: name]``);
- ``model_inference`` (``chat <model>``, inside the step): the request, with
  ``gen_ai.response.finish_reasons``; its ``gen_ai.output.messages`` hold the text only, never
  the tool calls, so it is read as a layer of the step's call, through the step;
- ``tool_call`` (``execute_tool <name>``): GenAI semconv ``gen_ai.tool.*`` keys;
- ``model_generation`` (the whole generation), ``model_chunk`` (streamed parts) and the
  workflow spans: recognized, no role. Any other type is reported as not understood.

Mastra 0.24 (``@mastra/otel-exporter`` 0.3, scope ``@mastra/otel``; recorded in
``samples/traces/mastra-0.24/``) writes the same span types with plain ``input`` /
``output`` keys: ``agent_run`` (``agent.<id>``) ``output`` ``{"text": <answer>}``;
``model_step`` (``step: N``) ``output`` ``{"text", "toolCalls"}`` and ``input`` the request
``{"body": {"messages": [...]}}``; ``tool_call`` (``tool.execute <name>``)
``gen_ai.tool.name`` with ``input`` / ``output`` (no call id: paired by name and order).
Its ``model_generation`` (``chat <model>``) is the whole generation: no role, as in 1.x.
"""

from __future__ import annotations

from typing import Any

from rampart_otel.conventions import genai
from rampart_otel.conventions.helpers import (
    as_str,
    as_str_list,
    load_json,
    parse_arguments,
    parse_result,
)
from rampart_otel.conventions.interface import (
    Convention,
    ModelOutput,
    SpanReport,
    ToolReport,
    UserInput,
)
from rampart_otel.conventions.labels import MASTRA
from rampart_otel.model import Span

SCOPE = "@mastra/otel-exporter"
SCOPE_0_24 = "@mastra/otel"
TYPE = "mastra.span.type"
STEP_OUTPUT = "mastra.model_step.output"
STEP_INPUT = "mastra.model_step.input"
AGENT_OUTPUT = "mastra.agent_run.output"
# Mastra 0.24's keys: the same values under plain names; the raw response (``body``,
# ``headers``) and GenAI-named copies (``gen_ai.prompt``, ``gen_ai.completion``,
# ``gen_ai.tool.input`` / ``output``) of what is read from ``input`` / ``output``.
INPUT, OUTPUT = "input", "output"
TOOL_INPUT_0_24, TOOL_OUTPUT_0_24 = "gen_ai.tool.input", "gen_ai.tool.output"
COPIES_0_24 = ("body", "headers", "gen_ai.prompt", "gen_ai.completion")
NEUTRAL_TYPES = frozenset(
    {
        "model_generation",
        "model_chunk",
        "generic",
        "workflow_run",
        "workflow_step",
        "workflow_conditional",
        "workflow_conditional_eval",
        "workflow_parallel",
        "workflow_loop",
        "workflow_sleep",
        "workflow_wait_event",
        "processor_run",
    }
)


def read(span: Span) -> SpanReport | None:
    kind = as_str(span.attributes.get(TYPE))
    if kind is None:
        return None
    if kind == "agent_run":
        return SpanReport(MASTRA, agent=True, answer=_answer(span))
    if kind == "model_step":
        return SpanReport(MASTRA, model=True, output=step_output(span))
    if kind == "model_inference":
        finish = as_str_list(span.attributes.get(genai.FINISH_REASONS))
        output = ModelOutput(readable=False, finish_reasons=finish, convention=MASTRA)
        output.provider = genai.provider(span)
        return SpanReport(MASTRA, model=True, output=output)
    if kind in ("tool_call", "mcp_tool_call"):
        if span.scope.name == SCOPE_0_24:
            return SpanReport(MASTRA, execution=_tool_call_0_24(span))
        execution = genai.tool_execution(span)
        if execution is not None:
            execution.convention = MASTRA
        return SpanReport(MASTRA, execution=execution)
    if kind in NEUTRAL_TYPES:
        return SpanReport(MASTRA)
    return SpanReport(MASTRA, not_understood=[f"span type {kind[:40]!r}"])


def step_output(span: Span) -> ModelOutput:
    """What one model turn produced: its text and every tool call it asked for."""
    value = load_json(span.attributes.get(_key(span, STEP_OUTPUT, OUTPUT)))
    calls = value.get("toolCalls") if isinstance(value, dict) else None
    if not isinstance(calls, list):
        output = ModelOutput(readable=False, convention=MASTRA)
        if value is not None:
            output.not_understood.append(f"{STEP_OUTPUT} (no toolCalls list)")
        return output
    output = ModelOutput(readable=True, convention=MASTRA)
    text = value.get("text")
    if isinstance(text, str):
        output.text, output.text_captured = text, True
    for call in calls:
        if not isinstance(call, dict):
            output.not_understood.append(f"a tool call that is no object in {STEP_OUTPUT}")
            continue
        name, call_id, args = call.get("toolName"), call.get("toolCallId"), call.get("args")
        output.requests.append(ToolReport.requested(span, MASTRA, name, call_id, args, True))
    return output


def user_input(span: Span) -> UserInput | None:
    key = _key(span, STEP_INPUT, INPUT)
    if span.attributes.get(TYPE) != "model_step" or key not in span.attributes:
        return None
    found = UserInput()
    messages = load_json(span.attributes[key])
    if key == INPUT:  # 0.24: the request body
        body = messages.get("body") if isinstance(messages, dict) else None
        messages = body.get("messages") if isinstance(body, dict) else None
        if messages is None:
            found.not_understood.append(f"{INPUT} (no body.messages)")
            return found
    genai.read_user_messages(messages, key, found)
    return found


def _tool_call_0_24(span: Span) -> ToolReport:
    attrs = span.attributes
    arguments = attrs.get(INPUT, attrs.get(TOOL_INPUT_0_24))
    result = attrs.get(OUTPUT, attrs.get(TOOL_OUTPUT_0_24))
    return ToolReport.execution(
        span,
        MASTRA,
        as_str(attrs.get(genai.TOOL_NAME)) or span.name.removeprefix("tool.execute "),
        None,
        arguments=parse_arguments(arguments),
        arguments_captured=arguments is not None,
        result=parse_result(result) if result is not None else None,
        result_captured=result is not None,
    )


def _key(span: Span, key: str, key_0_24: str) -> str:
    """Where this span's version of the exporter writes a value."""
    return key_0_24 if span.scope.name == SCOPE_0_24 else key


def _answer(span: Span) -> str | None:
    value: Any = load_json(span.attributes.get(_key(span, AGENT_OUTPUT, OUTPUT)))
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        return value["text"]
    return value if isinstance(value, str) else None


CONVENTION = Convention(
    MASTRA,
    read,
    user_input=user_input,
    content_keys=(
        STEP_OUTPUT,
        STEP_INPUT,
        AGENT_OUTPUT,
        "mastra.",
        INPUT,
        OUTPUT,
        TOOL_INPUT_0_24,
        TOOL_OUTPUT_0_24,
        *COPIES_0_24,
    ),
    scopes=(SCOPE, SCOPE_0_24),
)

"""The Anthropic Python SDK's own spans (scope ``com.anthropic.sdk.python``).

``anthropic`` 2.x writes a span per API call itself, on by default, beside any
instrumentation of the same client: ``anthropic.messages.create`` next to OpenLLMetry's
``anthropic.chat`` is one model call, told apart only by ``gen_ai.response.id``, which
``normalize`` matches. ``genai`` reads the GenAI keys of these spans; this module
reads what only the SDK writes:

- ``anthropic.message.stop_reason``, the raw API stop reason (``tool_use``, ``end_turn``): the
  SDK span's only finish reason (no ``gen_ai.response.finish_reasons``, and its output
  messages carry no ``finish_reason``), there even with content off, its default.
- Tool results as Anthropic content blocks (a string return is sent as one text block), in
  the tool runner's ``anthropic.custom_tool_use <name>`` spans (``anthropic.tool_result.content``)
  and in ``tool_call_response`` parts of the SDK's input messages: read as their text, the
  tool's return. This module's history reader is registered before ``genai``'s so the
  unwrapped form is the one kept.
- ``anthropic.content.truncated``: the SDK dropped message parts or result blocks to fit its
  size limit, so a read output or result may lack a tool request or a block: not understood.
"""

from __future__ import annotations

from typing import Any

from rampart_otel.conventions import genai
from rampart_otel.conventions.envelopes import text_blocks
from rampart_otel.conventions.helpers import as_str, as_str_list, load_json, parse_arguments
from rampart_otel.conventions.interface import (
    Convention,
    Gate,
    History,
    ModelOutput,
    SpanReport,
    ToolReport,
)
from rampart_otel.conventions.labels import ANTHROPIC
from rampart_otel.model import Span

SCOPE = "com.anthropic.sdk.python"
STOP_REASON = "anthropic.message.stop_reason"
TOOL_RESULT = "anthropic.tool_result.content"
TRUNCATED = "anthropic.content.truncated"
TOOL_SPAN_PREFIXES = (
    "anthropic.custom_tool_use ",
    "anthropic.mcp_tool_use ",
    "anthropic.tool_use ",
)


def read(span: Span) -> SpanReport | None:
    attrs = span.attributes
    stop = attrs.get(STOP_REASON)
    result = attrs.get(TOOL_RESULT)
    truncated = attrs.get(TRUNCATED) is True
    if stop is None and result is None and not truncated:
        return None
    report = SpanReport(ANTHROPIC)
    if truncated:
        report.not_understood.append(
            f"{TRUNCATED}: the SDK cut content to its size limit (parts or result blocks lost)"
        )
    if stop is not None:
        report.model = True
        report.output = ModelOutput(
            readable=False,
            finish_reasons=as_str_list(stop),
            convention=ANTHROPIC,
            provider=genai.provider(span) or ANTHROPIC,
            response_id=as_str(attrs.get(genai.RESPONSE_ID)) or None,
        )
    if result is not None:
        report.execution = tool_execution(span)
    return report


def tool_execution(span: Span) -> ToolReport:
    """A tool runner's span with its result: name, id and arguments are GenAI keys."""
    attrs = span.attributes
    name = as_str(attrs.get(genai.TOOL_NAME)) or _after_prefix(span.name)
    arguments_raw = attrs.get(genai.TOOL_CALL_ARGUMENTS)
    result_raw = attrs.get(TOOL_RESULT)
    return ToolReport.execution(
        span,
        ANTHROPIC,
        name,
        attrs.get(genai.TOOL_CALL_ID),
        arguments=parse_arguments(arguments_raw),
        arguments_captured=arguments_raw is not None,
        result=content_blocks(result_raw),
        result_captured=result_raw is not None,
        failed=genai.ERROR_TYPE in attrs,
    )


def content_blocks(value: Any) -> Any:
    """Anthropic content blocks → their text (JSON text decoded); other blocks kept raw."""
    value = load_json(value)
    text = text_blocks(value)
    return load_json(text) if text is not None else value


def history(span: Span) -> History:
    """The SDK's input messages (content mode), with tool results unwrapped from blocks."""
    if genai.INPUT_MESSAGES not in span.attributes:  # its gate's key, probed first
        return History({}, {})
    if span.scope.name != SCOPE and STOP_REASON not in span.attributes:
        return History({}, {})
    arguments, results, names = genai.input_history(span)
    results = {call_id: content_blocks(value) for call_id, value in results.items()}
    return History(arguments, results, names)


def _after_prefix(name: str) -> str:
    for prefix in TOOL_SPAN_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


CONVENTION = Convention(
    ANTHROPIC,
    read,
    history,
    content_keys=(TOOL_RESULT,),
    read_gate=Gate(keys=(STOP_REASON, TOOL_RESULT, TRUNCATED)),
    history_gate=Gate(keys=(genai.INPUT_MESSAGES,)),
)

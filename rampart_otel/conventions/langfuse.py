"""The Langfuse SDK (v3 and later, built on OpenTelemetry; scope ``langfuse-sdk``, owned).

Every observation is a span with ``langfuse.observation.type`` and its ``input`` / ``output``
(JSON text, or the string itself when the value was one):

- ``generation``: a model call. Langfuse's OpenAI drop-in records the request as
  ``{"messages": [...], "tools": [...]}`` (Chat Completions messages: the history of earlier
  calls and their results, the user's messages) and the response as the assistant message
  (``content``, ``tool_calls`` with ids and JSON arguments). No finish reason is recorded:
  a message read whole lists every call asked for.
- ``tool``: a tool run (``@observe(as_type="tool")``): the span's name is the tool's,
  ``input`` is ``{"args": [...], "kwargs": {...}}`` (the keyword arguments by name,
  positional ones under ``args``), ``output`` the result; ``level = ERROR`` or an error
  status is a failure. No call id is recorded.
- ``agent``: the agent run; its ``output`` is the answer.
- ``span``, ``chain``, ``event``, ``retriever``, ``embedding``, ``evaluator``,
  ``guardrail``: recognized, no role. Any other type is reported as not understood.

A ``mask`` that withholds content writes its marker (``[REDACTED]``) in place of it: read as
content not recorded.
"""

from __future__ import annotations

from typing import Any

from rampart_otel.conventions import genai
from rampart_otel.conventions.helpers import load_json, parse_result, redacted
from rampart_otel.conventions.interface import (
    Convention,
    History,
    ModelOutput,
    SpanReport,
    ToolReport,
    UserInput,
)
from rampart_otel.conventions.labels import LANGFUSE
from rampart_otel.conventions.litellm import chat_history
from rampart_otel.model import Span

SCOPE = "langfuse-sdk"
TYPE = "langfuse.observation.type"
INPUT = "langfuse.observation.input"
OUTPUT = "langfuse.observation.output"
LEVEL = "langfuse.observation.level"
MODEL_TYPES = frozenset({"generation"})
NEUTRAL_TYPES = frozenset(
    {"span", "chain", "event", "retriever", "embedding", "evaluator", "guardrail"}
)


def read(span: Span) -> SpanReport | None:
    kind = span.attributes.get(TYPE)
    if kind is None:
        return None
    if kind in MODEL_TYPES:
        return SpanReport(LANGFUSE, model=True, output=model_output(span))
    if kind == "tool":
        return SpanReport(LANGFUSE, execution=tool_execution(span))
    if kind == "agent":
        return SpanReport(LANGFUSE, agent=True, answer=_answer(span))
    if kind in NEUTRAL_TYPES:
        return SpanReport(LANGFUSE)
    return SpanReport(LANGFUSE, not_understood=[f"observation type {str(kind)[:40]!r}"])


def model_output(span: Span) -> ModelOutput:
    """The generation's output: an assistant message read whole, else unreadable."""
    raw = span.attributes.get(OUTPUT)
    message = load_json(raw)
    if isinstance(message, dict) and ("content" in message or "tool_calls" in message):
        output = genai._from_choices([{"message": message}], span)
        for request in output.requests:
            request.convention = LANGFUSE
    else:
        output = ModelOutput(readable=False)
        if raw is not None and not redacted(raw):
            output.not_understood.append(f"{OUTPUT} (not an assistant message)")
    output.convention = LANGFUSE
    return output


def tool_execution(span: Span) -> ToolReport:
    attrs = span.attributes
    raw_input, raw_output = attrs.get(INPUT), attrs.get(OUTPUT)
    arguments = _arguments(raw_input)
    return ToolReport.execution(
        span,
        LANGFUSE,
        span.name,
        None,
        arguments=arguments,
        arguments_captured=arguments is not None,
        result=parse_result(raw_output) if _captured(raw_output) else None,
        result_captured=_captured(raw_output),
        failed=attrs.get(LEVEL) == "ERROR",
    )


def input_history(span: Span) -> History:
    return chat_history(_input_messages(span))


def user_input(span: Span) -> UserInput | None:
    if span.attributes.get(TYPE) not in MODEL_TYPES or INPUT not in span.attributes:
        return None
    found = UserInput()
    raw = span.attributes[INPUT]
    if redacted(raw):
        found.add(None, f"{INPUT} ({raw})")
        return found
    value = load_json(raw)
    messages = value.get("messages") if isinstance(value, dict) else value
    genai.read_user_messages(messages if isinstance(messages, list) else raw, INPUT, found)
    return found


def _answer(span: Span) -> str | None:
    raw = span.attributes.get(OUTPUT)
    if not _captured(raw):
        return None
    return raw if isinstance(raw, str) else str(raw)


def _arguments(raw: Any) -> dict[str, Any] | str | None:
    """``{"args": [...], "kwargs": {...}}`` as named arguments (positional under ``args``);
    any other recorded input kept as it is."""
    if not _captured(raw):
        return None
    value = load_json(raw)
    if isinstance(value, dict) and set(value) <= {"args", "kwargs"}:
        named = value.get("kwargs")
        positional = value.get("args")
        if isinstance(named, dict) and isinstance(positional, list | None):
            arguments = dict(named)
            if positional:
                arguments["args"] = positional
            return arguments
    return value if isinstance(value, dict) else str(raw)


def _captured(raw: Any) -> bool:
    return raw is not None and not redacted(raw)


def _input_messages(span: Span) -> list[Any]:
    if span.attributes.get(TYPE) not in MODEL_TYPES:
        return []
    value = load_json(span.attributes.get(INPUT))
    messages = value.get("messages") if isinstance(value, dict) else value
    return messages if isinstance(messages, list) else []


CONVENTION = Convention(
    LANGFUSE,
    read,
    history=input_history,
    user_input=user_input,
    content_keys=(INPUT, OUTPUT),
    scopes=(SCOPE,),
)

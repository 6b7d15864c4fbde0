"""Vercel AI SDK's own ``ai.*`` spans (AI SDK 3-6, and AI SDK 7's ``LegacyOpenTelemetry``).

``ai.operationId`` names each span's role. The function span (``ai.generateText``, ...)
holds the answer; its ``ai.response.toolCalls`` repeats every step's calls, so requests are
read only on the provider-call spans (``...doGenerate`` / ``...doStream``). The SDK writes
``ai.response.toolCalls`` only when there are calls, so an output is known whole once it or
``ai.response.text`` is recorded; with neither (content off) only the finish reason is left.
``ai.toolCall.result`` is ``JSON.stringify`` of the return value: a string returned is
decoded twice. A failed tool has ERROR status and an ``exception`` event; its error text
reaches the model only in the next call's ``ai.prompt.messages``, read as history. Legacy
AI SDK 7 nests the tool spans inside ``doGenerate`` (one span per step): ``normalize``
keeps their side effects the agent's.
"""

from __future__ import annotations

from typing import Any

from rampart_otel.conventions.helpers import (
    as_str,
    load_json,
    parse_arguments,
    parse_result,
    parse_stringified_result,
)
from rampart_otel.conventions.interface import (
    Convention,
    Gate,
    History,
    ModelOutput,
    SpanReport,
    ToolReport,
    UserInput,
)
from rampart_otel.conventions.labels import VERCEL_AI
from rampart_otel.model import Span

OPERATION_ID = "ai.operationId"
ROOT_OPERATIONS = frozenset(
    {"ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject"}
)
MODEL_OPERATIONS = frozenset(
    {
        "ai.generateText.doGenerate",
        "ai.streamText.doStream",
        "ai.generateObject.doGenerate",
        "ai.streamObject.doStream",
    }
)
OBJECT_OPERATIONS = frozenset(
    {
        "ai.generateObject",
        "ai.streamObject",
        "ai.generateObject.doGenerate",
        "ai.streamObject.doStream",
    }
)
TOOL_OPERATION = "ai.toolCall"
# Embedding and reranking calls: no tool request, no answer of the agent's.
NEUTRAL_OPERATIONS = frozenset(
    {
        "ai.embed",
        "ai.embed.doEmbed",
        "ai.embedMany",
        "ai.embedMany.doEmbed",
        "ai.rerank",
        "ai.rerank.doRerank",
    }
)

# Current keys first, then AI SDK 3's.
TEXT_KEYS = ("ai.response.text", "ai.result.text")
TOOL_CALLS_KEYS = ("ai.response.toolCalls", "ai.result.toolCalls")
OBJECT_KEYS = ("ai.response.object", "ai.result.object")
FINISH_KEYS = ("ai.response.finishReason", "ai.finishReason")
PROVIDER_KEY = "ai.model.provider"
TOOL_NAME = "ai.toolCall.name"
TOOL_ID = "ai.toolCall.id"
TOOL_ARGS_KEYS = ("ai.toolCall.args", "ai.toolCall.input")
TOOL_RESULT_KEYS = ("ai.toolCall.result", "ai.toolCall.output")
PROMPT_MESSAGES = "ai.prompt.messages"
PROMPT = "ai.prompt"  # the root span's call: {"system", "prompt" | "messages"}
ERROR_TYPE = "error.type"
# Tool-result output types (``@ai-sdk/provider``) that carry what the tool returned.
_RESULT_OUTPUTS = frozenset({"text", "json", "error-text", "error-json", "content"})


def operation(span: Span) -> str | None:
    value = span.attributes.get(OPERATION_ID)
    return value if isinstance(value, str) else None


def read(span: Span) -> SpanReport | None:
    op = operation(span)
    if op is None:
        return None
    if op in MODEL_OPERATIONS:
        return SpanReport(VERCEL_AI, model=True, output=model_output(span))
    if op == TOOL_OPERATION:
        report = tool_execution(span)
        notes = [] if report.name else [f"{op} span without {TOOL_NAME}"]
        return SpanReport(VERCEL_AI, execution=report, not_understood=notes)
    if op in ROOT_OPERATIONS:
        return SpanReport(VERCEL_AI, agent=True, answer=answer(span))
    if op in NEUTRAL_OPERATIONS:
        return SpanReport(VERCEL_AI)
    return SpanReport(VERCEL_AI, not_understood=[f"{OPERATION_ID} {op!r}"])


def tool_execution(span: Span) -> ToolReport:
    """The call an ``ai.toolCall`` span ran; a failed one has no result (ERROR status)."""
    attrs = span.attributes
    arguments_raw = _first(attrs, TOOL_ARGS_KEYS)
    result_raw = _first(attrs, TOOL_RESULT_KEYS)
    return ToolReport.execution(
        span,
        VERCEL_AI,
        attrs.get(TOOL_NAME),
        attrs.get(TOOL_ID),
        arguments=parse_arguments(arguments_raw),
        arguments_captured=arguments_raw is not None,
        result=parse_stringified_result(result_raw),
        result_captured=result_raw is not None,
        failed=ERROR_TYPE in attrs or any(event.name == "exception" for event in span.events),
    )


def model_output(span: Span) -> ModelOutput:
    """What one provider call produced: text (or object) and the tool calls asked for."""
    attrs = span.attributes
    output = ModelOutput(readable=False, convention=VERCEL_AI)
    reason = as_str(_first(attrs, FINISH_KEYS))
    output.finish_reasons = [reason] if reason else []
    output.provider = as_str(attrs.get(PROVIDER_KEY))
    text_keys = OBJECT_KEYS if operation(span) in OBJECT_OPERATIONS else TEXT_KEYS
    text = _first(attrs, text_keys)
    calls_raw = _first(attrs, TOOL_CALLS_KEYS)
    if calls_raw is not None:
        calls = load_json(calls_raw)
        if not isinstance(calls, list):
            output.not_understood.append(f"{TOOL_CALLS_KEYS[0]} (not a JSON array of calls)")
            return output
        for call in calls:
            if not isinstance(call, dict):
                output.not_understood.append(f"{TOOL_CALLS_KEYS[0]} entry {call!r:.40}")
                continue
            raw = call.get("input", call.get("args"))
            output.requests.append(
                ToolReport.requested(
                    span,
                    VERCEL_AI,
                    call.get("toolName"),
                    call.get("toolCallId"),
                    raw,
                    raw is not None,
                )
            )
    if text is None and calls_raw is None:
        return output  # outputs not recorded: the calls asked for are unknown
    output.readable = True
    output.text = _text(text) if text is not None else ""
    output.text_captured = True
    return output


def answer(span: Span) -> str | None:
    """The function span's result: the final step's text (or the generated object)."""
    keys = OBJECT_KEYS if operation(span) in OBJECT_OPERATIONS else TEXT_KEYS
    value = _first(span.attributes, keys)
    return _text(value) if value is not None else None


def input_history(span: Span) -> History:
    """Call id → arguments and call id → result, from ``ai.prompt.messages`` (SDK format).

    Assistant ``tool-call`` parts carry ``input`` (AI SDK 4: ``args``); ``tool-result``
    parts carry ``output: {type, value}`` (AI SDK 4: ``result``). A denied execution
    (``execution-denied``) returned nothing and is not a result.
    """
    arguments: dict[str, Any] = {}
    results: dict[str, Any] = {}
    names: dict[str, str] = {}
    raw = span.attributes.get(PROMPT_MESSAGES)
    if not isinstance(raw, str) or ('"tool-result"' not in raw and '"tool-call"' not in raw):
        return History(arguments, results)
    messages = load_json(raw)
    for message in messages if isinstance(messages, list) else ():
        content = message.get("content") if isinstance(message, dict) else None
        for part in content if isinstance(content, list) else ():
            if not isinstance(part, dict):
                continue
            call_id = as_str(part.get("toolCallId"))
            if not call_id:
                continue
            kind = part.get("type")
            if kind == "tool-call":
                if as_str(part.get("toolName")):
                    names.setdefault(call_id, as_str(part.get("toolName")) or "")
                raw_args = part.get("input", part.get("args"))
                if raw_args is not None:
                    arguments.setdefault(call_id, parse_arguments(raw_args))
            elif kind == "tool-result":
                found, value = _tool_result(part)
                if found:
                    results.setdefault(call_id, value)
    return History(arguments, results, names)


def user_input(span: Span) -> UserInput | None:
    """The user messages a model call was sent (``ai.prompt.messages``, SDK format), or the
    root call's ``ai.prompt`` (its ``prompt`` text or ``messages``)."""
    op = operation(span)
    if op in MODEL_OPERATIONS:
        raw, key = span.attributes.get(PROMPT_MESSAGES), PROMPT_MESSAGES
    elif op in ROOT_OPERATIONS:
        raw, key = span.attributes.get(PROMPT), PROMPT
    else:
        return None
    if raw is None:
        return None
    found = UserInput()
    value = load_json(raw)
    if key == PROMPT and isinstance(value, dict):
        if isinstance(value.get("prompt"), str):
            found.texts.append(value["prompt"])
            return found
        # ``prompt`` may be a list of messages too (AI SDK 5+), else ``messages``.
        value = value["prompt"] if isinstance(value.get("prompt"), list) else value.get("messages")
    if not isinstance(value, list):
        found.not_understood.append(f"{key} (no prompt text or list of messages)")
        return found
    where = f"user messages of {key}"
    for message in value:
        if not isinstance(message, dict) or message.get("role") != "user":
            continue  # the system prompt, the model's turns and tool results
        content = message.get("content")
        if not isinstance(content, list):
            found.add(content, where)
            continue
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                found.add(part.get("text"), where)
            else:
                kind = part.get("type") if isinstance(part, dict) else None
                found.not_understood.append(f"part type {kind!r} in {where}")
    return found


def _tool_result(part: dict[str, Any]) -> tuple[bool, Any]:
    output = part.get("output")
    if isinstance(output, dict) and isinstance(output.get("type"), str):
        if output["type"] not in _RESULT_OUTPUTS or "value" not in output:
            return False, None
        value = output["value"]
        return True, parse_result(value) if output["type"] == "text" else value
    if "result" in part:  # AI SDK 4
        return True, parse_result(part["result"])
    return False, None


def _first(attrs: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        value = attrs.get(key)
        if value is not None:
            return value
    return None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


CONVENTION = Convention(
    VERCEL_AI,
    read,
    input_history,
    user_input,
    content_keys=(
        "ai.prompt",
        "ai.prompt.",
        "ai.response.text",
        "ai.response.toolCalls",
        "ai.response.object",
        "ai.response.reasoning",
        "ai.response.files",
        "ai.result.",
        "ai.toolCall.args",
        "ai.toolCall.input",
        "ai.toolCall.result",
        "ai.toolCall.output",
        "ai.value",
        "ai.values",
        "ai.embedding",
        "ai.embeddings",
        "ai.documents",
        "ai.ranking",
    ),
    read_gate=Gate(keys=(OPERATION_ID,)),
    history_gate=Gate(keys=(PROMPT_MESSAGES,)),
    input_gate=Gate(keys=(OPERATION_ID,)),
)

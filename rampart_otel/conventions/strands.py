"""Strands Agents' own spans (scope ``strands.telemetry.tracer``).

Strands writes GenAI-semconv spans (``invoke_agent``, ``chat``, ``execute_tool``) plus its
``execute_event_loop_cycle`` steps, in one of two forms:

- **default**: content in the v1.36 GenAI events, with Strands' own (Bedrock-style)
  content blocks as JSON text, and event names that mean different things per span: on
  ``chat``, ``gen_ai.choice`` is the model output (``message`` blocks ``toolUse`` /
  ``text``, ``finish_reason`` ``tool_use`` / ``end_turn``); on ``execute_tool``,
  ``gen_ai.tool.message`` holds the arguments and ``gen_ai.choice`` the result; on
  ``invoke_agent``, ``gen_ai.choice`` is the answer as plain text. The cycle span's events
  repeat the chat's output and the tool results: read once, from the chat and tool spans.
- **latest** (``gen_ai_latest_experimental``): the semconv's messages, in
  ``gen_ai.client.inference.operation.details`` events or on the span, read by ``genai``;
  tool results (and ``gen_ai.tool.call.result``) are the content-block list.

Redaction (``gen_ai_unredacted_attributes``) writes ``[REDACTED]`` for every content value:
withheld, never read as a value.
"""

from __future__ import annotations

from typing import Any

from rampart_otel.conventions import genai
from rampart_otel.conventions.envelopes import bedrock_tool_result, text_blocks
from rampart_otel.conventions.helpers import as_str, load_json, parse_arguments, redacted
from rampart_otel.conventions.interface import (
    Convention,
    History,
    ModelOutput,
    SpanReport,
    ToolReport,
    UserInput,
)
from rampart_otel.conventions.labels import STRANDS
from rampart_otel.model import Event, Span

SCOPE = "strands.telemetry.tracer"
CYCLE = "execute_event_loop_cycle"
TOOL_STATUS = "gen_ai.tool.status"
_NEUTRAL_BLOCKS = frozenset({"reasoningContent", "cachePoint", "citationsContent"})


def read(span: Span) -> SpanReport | None:
    if span.scope.name != SCOPE:
        return None
    op = genai.operation(span)
    if op == CYCLE:
        return SpanReport(STRANDS)  # a step: its events repeat the chat and tool spans'
    report = genai.read(span)
    if report is None:
        return None
    report.convention = STRANDS
    if op == "chat":
        choice = _event(span, genai.CHOICE_EVENT)
        if choice is not None and "message" in choice.attributes:
            report.output = _choice_output(span, choice)
    elif op == "execute_tool" and report.execution is not None:
        _fill_execution(report.execution, span)
    elif op == "invoke_agent":
        answer = report.answer
        if answer is None:
            choice = _event(span, genai.CHOICE_EVENT)
            message = choice.attributes.get("message") if choice is not None else None
            answer = message if isinstance(message, str) and not redacted(message) else None
        report.answer = answer.removesuffix("\n") if answer is not None else None
    return report


def input_history(span: Span) -> History:
    """Call id → arguments and → result from the history events (both forms)."""
    if span.scope.name != SCOPE:
        return History({}, {})
    arguments, results, names = genai.input_history(span)
    results = {call_id: unwrap_result(value) for call_id, value in results.items()}
    for event in span.events:
        blocks = _blocks(event.attributes.get("content"))
        if blocks is None:
            continue
        for block in blocks:
            use = block.get("toolUse")
            if event.name == genai.ASSISTANT_EVENT and isinstance(use, dict):
                call_id = as_str(use.get("toolUseId"))
                if call_id and as_str(use.get("name")):
                    names.setdefault(call_id, as_str(use.get("name")) or "")
                if call_id and "input" in use:
                    arguments.setdefault(call_id, parse_arguments(use["input"]))
            result = block.get("toolResult")
            if event.name == genai.TOOL_EVENT and isinstance(result, dict):
                call_id = as_str(result.get("toolUseId"))
                if call_id:
                    results.setdefault(call_id, unwrap_result(block))
    return History(arguments, results, names)


def user_input(span: Span) -> UserInput | None:
    """The user's messages: the semconv messages (latest form, read by ``genai``), else the
    default form's ``gen_ai.user.message`` events of content blocks. Tool results sent back
    as ``toolResult`` blocks are not the user's."""
    if span.scope.name != SCOPE or genai.operation(span) == CYCLE:
        return None  # a cycle span repeats its chat span's input
    if genai.contents(span, genai.INPUT_MESSAGES):
        return genai.user_input(span)
    found: UserInput | None = None
    where = f"{genai.USER_EVENT} events"
    for event in span.events:
        if event.name != genai.USER_EVENT:
            continue
        found = found or UserInput()
        content = event.attributes.get("content")
        blocks = _blocks(content)
        if blocks is None:
            if content is None or redacted(content):
                found.add(None, f"{where} ({content})" if content else where)
            else:
                found.not_understood.append(f"content of {where} (not a list of content blocks)")
            continue
        for block in blocks:
            if isinstance(block.get("text"), str):
                found.texts.append(block["text"])
            elif "toolResult" not in block:
                kinds = ", ".join(repr(key) for key in list(block)[:2])
                found.not_understood.append(f"content block {kinds} in {where}")
    return found


def unwrap_result(value: Any) -> Any:
    """A tool result as Strands records it (a content-block list, or a ``toolResult``)."""
    value = load_json(value)
    if isinstance(value, list):
        text = text_blocks(value)
        if text is not None:
            return load_json(text)
    return bedrock_tool_result(value)


# --- model output ----------------------------------------------------------------------


def _choice_output(span: Span, choice: Event) -> ModelOutput:
    """The ``chat`` span's ``gen_ai.choice``: content blocks and Strands' finish reason."""
    reason = as_str(choice.attributes.get("finish_reason"))
    output = ModelOutput(
        readable=False,
        finish_reasons=[reason] if reason else [],
        convention=STRANDS,
        provider=genai.provider(span),
    )
    message = choice.attributes.get("message")
    if redacted(message):
        return output
    blocks = _blocks(message)
    if blocks is None:
        output.not_understood.append("gen_ai.choice message (not a list of content blocks)")
        return output
    output.readable = True
    texts: list[str] = []
    for block in blocks:
        if isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif isinstance(block.get("toolUse"), dict):
            use = block["toolUse"]
            raw = use.get("input")
            output.requests.append(
                ToolReport.requested(
                    span, STRANDS, use.get("name"), use.get("toolUseId"), raw, raw is not None
                )
            )
        elif not _NEUTRAL_BLOCKS & set(block):
            output.not_understood.append(f"content block {sorted(block)!r} in gen_ai.choice")
    output.text, output.text_captured = "\n".join(texts), True
    return output


# --- tool executions -------------------------------------------------------------------


def _fill_execution(execution: ToolReport, span: Span) -> None:
    """Arguments and result from the default form's events; results unwrapped; errors."""
    if not execution.arguments_captured:
        message = _event(span, genai.TOOL_EVENT)
        raw = message.attributes.get("content") if message is not None else None
        if raw is not None and not redacted(raw):
            execution.arguments = parse_arguments(raw)
            execution.arguments_captured = True
    if not execution.result_captured:
        choice = _event(span, genai.CHOICE_EVENT)
        raw = choice.attributes.get("message") if choice is not None else None
        if raw is not None and not redacted(raw):
            execution.result, execution.result_captured = raw, True
    if execution.result_captured:
        execution.result = unwrap_result(execution.result)
    if span.attributes.get(TOOL_STATUS) == "error":
        execution.error = True


def _event(span: Span, name: str) -> Event | None:
    return next((event for event in span.events if event.name == name), None)


def _blocks(value: Any) -> list[dict[str, Any]] | None:
    """Strands content blocks from their JSON text; None when not a list of blocks."""
    if value is None or redacted(value):
        return None
    decoded = load_json(value)
    if not isinstance(decoded, list) or not all(isinstance(b, dict) for b in decoded):
        return None
    return decoded


CONVENTION = Convention(
    STRANDS,
    read,
    input_history,
    user_input,
    content_keys=genai.CONVENTION.content_keys,
    content_events=genai.CONVENTION.content_events,
    scopes=(SCOPE,),
)

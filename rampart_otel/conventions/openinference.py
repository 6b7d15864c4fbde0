"""OpenInference semantic conventions (Arize Phoenix instrumentations).

Model spans (``openinference.span.kind=LLM``) flatten the output into
``llm.output_messages.{i}.message.*``; hiding outputs drops those keys and replaces
``output.value`` with ``__REDACTED__``, while ``llm.finish_reason`` stays. Tools are
``TOOL`` spans with ``tool.name`` / ``input.value`` / ``output.value``; an ``AGENT``
span's ``output.value`` is the agent's answer.

Framework quirks read here, each only in its exact shape:
- OpenAI Agents SDK: ``llm.finish_reason`` is the Responses status ("stop" on tool turns
  too), so ``finish_reasons`` never takes it as "asked for no tool"; ``output.value`` holds
  the whole ``Response``, whose items the flattened messages may leave out (``mcp_call``,
  ``local_shell_call``...): those are not understood, and it is the output when the
  flattened messages alone were hidden. Tool spans carry no call id (paired by order).
- LangChain/LangGraph: a tool's ``output.value`` is a ``ToolMessage`` (its content is the
  result, its ``tool_call_id`` the call's id); a one-argument tool's ``input.value`` is the
  bare value (kept raw), while the ``tools`` CHAIN span's input lists the calls with ids and
  named arguments; the graph's AGENT ``output.value`` is its final state (the answer is the
  last AI message). Tool spans never become the current context, so the side effects inside
  them are separate one-span traces: fragments, never attributed.
"""

from __future__ import annotations

from typing import Any

from rampart_otel.conventions import (
    OPENINFERENCE,
    Convention,
    ModelOutput,
    SpanReport,
    ToolReport,
    as_str,
    envelopes,
    indexed,
    openai_responses,
    parse_arguments,
    parse_result,
)
from rampart_otel.model import Span

SPAN_KIND = "openinference.span.kind"
OUTPUT_MESSAGES = "llm.output_messages."
INPUT_MESSAGES = "llm.input_messages."
FINISH_REASON = "llm.finish_reason"
INPUT_VALUE = "input.value"
OUTPUT_VALUE = "output.value"
TOOL_NAME = "tool.name"
TOOL_ID_KEYS = ("tool.id", "tool_call.id", "gen_ai.tool.call.id")
REDACTED = "__REDACTED__"
PROVIDER_KEYS = ("llm.provider", "llm.system")
MODEL_KINDS = frozenset({"LLM"})
# The spec's other kinds: steps, retrieval and checks that ask for no tool and answer nothing.
NEUTRAL_KINDS = frozenset(
    {"CHAIN", "EMBEDDING", "RETRIEVER", "RERANKER", "GUARDRAIL", "EVALUATOR", "PROMPT", "UNKNOWN"}
)
_FIRST_OUTPUT_KEYS = (
    "role",
    "content",
    "tool_calls.0.tool_call.function.name",
    "contents.0.message_content.text",
)


def span_kind(span: Span) -> str | None:
    value = span.attributes.get(SPAN_KIND)
    return value.upper() if isinstance(value, str) else None


def read(span: Span) -> SpanReport | None:
    if SPAN_KIND not in span.attributes:
        return None
    kind = span_kind(span)
    if kind in MODEL_KINDS:
        return SpanReport(OPENINFERENCE, model=True, output=model_output(span))
    if kind == "CHAIN":
        return SpanReport(OPENINFERENCE, dispatched=dispatched_calls(span))
    if kind == "TOOL":
        report = SpanReport(OPENINFERENCE, execution=tool_execution(span))
        if TOOL_NAME not in span.attributes:  # the span's name is a guess at the tool's
            report.not_understood.append(f"TOOL span without {TOOL_NAME}")
        return report
    if kind == "AGENT":
        return SpanReport(OPENINFERENCE, agent=True, answer=agent_output(span))
    if kind in NEUTRAL_KINDS:
        return SpanReport(OPENINFERENCE)
    value = span.attributes.get(SPAN_KIND)
    return SpanReport(OPENINFERENCE, not_understood=[f"{SPAN_KIND} {value!r}"])


def is_model_span(span: Span) -> bool:
    return span_kind(span) in MODEL_KINDS


def is_agent_span(span: Span) -> bool:
    return span_kind(span) == "AGENT"


def is_tool_span(span: Span) -> bool:
    return span_kind(span) == "TOOL"


def captured(value: Any) -> bool:
    """Present and not masked by OpenInference's hide_* settings."""
    return value is not None and value != REDACTED


def tool_execution(span: Span) -> ToolReport | None:
    if not is_tool_span(span):
        return None
    attrs = span.attributes
    call_id = next((as_str(attrs[key]) for key in TOOL_ID_KEYS if key in attrs), None)
    arguments_raw = attrs.get(INPUT_VALUE)
    result_raw = attrs.get(OUTPUT_VALUE)
    args_ok, result_ok = captured(arguments_raw), captured(result_raw)
    # LangChain tools return a ToolMessage: the call's id and status travel in it.
    message = envelopes.langchain_tool_message(result_raw) if result_ok else None
    if message is not None:
        call_id = call_id or as_str(message.get("tool_call_id"))
    return ToolReport(
        name=as_str(attrs.get(TOOL_NAME)) or span.name,
        call_id=call_id or None,
        arguments=parse_arguments(arguments_raw) if args_ok else None,
        arguments_captured=args_ok,
        result=envelopes.langchain_message(result_raw) if result_ok else None,
        result_captured=result_ok,
        executed=True,
        error=span.status_code == "ERROR" or (message or {}).get("status") == "error",
        span=span,
        convention=OPENINFERENCE,
    )


def dispatched_calls(span: Span) -> list[ToolReport]:
    """The calls a CHAIN span hands to tools: LangGraph's ToolNode (``tools``) gets the AI
    message's tool calls as its ``input.value``, ids and named arguments included — what a
    one-argument tool span loses (its ``input.value`` is the bare value)."""
    raw = span.attributes.get(INPUT_VALUE)
    if not isinstance(raw, str) or '"tool_call"' not in raw or not raw.startswith("[{"):
        return []
    calls = envelopes.langgraph_tool_calls(raw) or []
    return [
        ToolReport.requested(span, OPENINFERENCE, name, call_id, args, args is not None)
        for name, call_id, args in calls
    ]


def model_output(span: Span) -> ModelOutput:
    attrs = span.attributes
    reason = as_str(attrs.get(FINISH_REASON))
    finish = [reason] if reason else []
    messages = indexed(attrs, OUTPUT_MESSAGES) if _has_output(attrs) else None
    provider = next((as_str(attrs[key]) for key in PROVIDER_KEYS if key in attrs), None)
    output = ModelOutput(
        readable=bool(messages),
        finish_reasons=finish,
        convention=OPENINFERENCE,
        provider=provider,
        source=span.scope.name,  # finish_reasons knows which scopes write a status
    )
    response = openai_responses.output_items(attrs.get(OUTPUT_VALUE))
    if response is not None:
        _read_response(output, response, span, bool(messages))
    if not messages:
        return output
    texts: list[str] = []
    text_missing = False
    content_seen = False
    for _, message in sorted(messages.items()):
        if message.get("message.role") not in (None, "assistant", "model"):
            continue
        text, missing = _message_text(message)
        if text is not None:
            texts.append(text)
            content_seen = True
        text_missing = text_missing or missing
        for _, call in sorted(indexed(message, "message.tool_calls.").items()):
            raw = call.get("tool_call.function.arguments")
            report = ToolReport.requested(
                span,
                OPENINFERENCE,
                call.get("tool_call.function.name"),
                call.get("tool_call.id"),
                raw,
                captured(raw),
            )
            content_seen = content_seen or report.arguments_captured
            output.requests.append(report)
    if texts and not text_missing:
        output.text, output.text_captured = "\n".join(texts), True
    elif not texts and not text_missing and content_seen:
        output.text, output.text_captured = "", True
    return output


# The Responses output item types the Agents SDK instrumentor flattens into
# llm.output_messages; it drops the others (mcp_call, local_shell_call, shell_call, ...).
_FLATTENED_ITEMS = frozenset(
    {
        "message",
        "function_call",
        "custom_tool_call",
        "file_search_call",
        "web_search_call",
        "computer_call",
        "reasoning",
    }
)


def _read_response(
    output: ModelOutput, items: list[dict[str, Any]], span: Span, flattened: bool
) -> None:
    """The whole ``Response`` in ``output.value``: items the flattened messages leave out are
    not understood; with no flattened messages (hidden alone), it is the output."""
    found = openai_responses.read(items, span, OPENINFERENCE)
    if flattened:
        left_out = {kind for kind in found.item_types if kind not in _FLATTENED_ITEMS}
    else:
        known = openai_responses.CALL_ITEMS | openai_responses.QUIET_ITEMS | {"message"}
        left_out = {kind for kind in found.item_types if kind not in known}
        output.readable = True
        output.requests.extend(found.requests)
        output.text, output.text_captured = "\n".join(found.texts), True
        output.not_understood.extend(
            f"message part type {kind!r} in {OUTPUT_VALUE}" for kind in found.unread_parts
        )
    output.not_understood.extend(
        f"output item type {kind!r} in {OUTPUT_VALUE}" for kind in sorted(left_out)
    )


def _has_output(attrs: dict[str, Any]) -> bool:
    """Cheap probe before the key scan: the first output message's keys."""
    first = OUTPUT_MESSAGES + "0.message."
    return any(
        first + key in attrs
        for key in (
            "role",
            "content",
            "tool_calls.0.tool_call.function.name",
            "contents.0.message_content.text",
        )
    )


def agent_output(span: Span) -> str | None:
    """The AGENT span's ``output.value``; a LangGraph graph's is its final state, whose
    answer is the last (AI) message's text."""
    value = span.attributes.get(OUTPUT_VALUE)
    if not captured(value):
        return None
    state, answer = envelopes.langgraph_answer(value)
    if state:
        return answer
    return value if isinstance(value, str) else str(value)


def input_history(span: Span) -> tuple[dict[str, Any], dict[str, Any]]:
    """Call id → arguments and call id → result from ``llm.input_messages``."""
    arguments: dict[str, Any] = {}
    results: dict[str, Any] = {}
    if SPAN_KIND not in span.attributes:
        return arguments, results
    for _, message in indexed(span.attributes, INPUT_MESSAGES).items():
        role = message.get("message.role")
        if role == "tool":
            call_id = as_str(message.get("message.tool_call_id"))
            content = message.get("message.content")
            if call_id and captured(content):
                results.setdefault(call_id, parse_result(content))
        elif role == "assistant":
            for _, call in indexed(message, "message.tool_calls.").items():
                call_id = as_str(call.get("tool_call.id"))
                raw = call.get("tool_call.function.arguments")
                if call_id and captured(raw):
                    arguments.setdefault(call_id, parse_arguments(raw))
    return arguments, results


def _message_text(message: dict[str, Any]) -> tuple[str | None, bool]:
    """(text, missing): ``message.content``, else the text items of ``message.contents``."""
    if "message.content" in message:
        content = message["message.content"]
        return (str(content), False) if captured(content) else (None, True)
    pieces: list[str] = []
    missing = False
    for _, item in sorted(indexed(message, "message.contents.").items()):
        if item.get("message_content.type", "text") != "text":
            continue
        text = item.get("message_content.text")
        if captured(text):
            pieces.append(str(text))
        else:
            missing = True
    return ("".join(pieces) if pieces else None), missing


CONVENTION = Convention(
    OPENINFERENCE,
    read,
    input_history,
    content_keys=(
        "input.value",
        "output.value",
        "llm.input_messages.",
        "llm.output_messages.",
        "llm.prompts",
        "llm.prompt_template.",
    ),
)

"""OpenLLMetry (Traceloop) conventions.

Older releases flatten model output into ``gen_ai.completion.{i}.*`` (content, role,
finish_reason, ``tool_calls.{j}.{id,name,arguments}``, legacy ``function_call.*``) and mark
model spans with ``llm.request.type``; newer ones write GenAI ``gen_ai.output.messages``,
read by ``genai``. With ``TRACELOOP_TRACE_CONTENT=false`` no completion keys are written
at all. The Traceloop SDK's ``@tool`` / ``@agent`` / ``@workflow`` decorators mark spans with
``traceloop.span.kind`` and record ``traceloop.entity.input`` (``{"args", "kwargs"}``) and
``traceloop.entity.output``.

The LangChain instrumentation writes the same kinds, with its callback envelopes as entity
input/output (also as ``gen_ai.tool.call.*`` and ``gen_ai.task.*``): a tool's arguments are
at ``inputs`` and its call id at ``kwargs.tool_call_id``, its result is ``output`` (a
``ToolMessage``); LangGraph nodes are ``task`` spans (``execute_task``), the ToolNode's input
lists the calls it runs, and the graph's ``workflow`` output is its final state (the answer
is the last AI message).
"""

from __future__ import annotations

from typing import Any

from rampart_otel.conventions import envelopes, mcp
from rampart_otel.conventions.helpers import (
    as_str,
    as_str_list,
    indexed,
    load_json,
    parse_arguments,
    parse_result,
    skipped_indices,
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
from rampart_otel.conventions.labels import OPENLLMETRY
from rampart_otel.model import Span

SPAN_KIND = "traceloop.span.kind"
ENTITY_NAME = "traceloop.entity.name"
ENTITY_INPUT = "traceloop.entity.input"
ENTITY_OUTPUT = "traceloop.entity.output"
REQUEST_TYPE = "llm.request.type"
COMPLETION = "gen_ai.completion."
PROMPT = "gen_ai.prompt."
LEGACY_PROMPT = "llm.prompts."  # before the gen_ai.prompt.* names
FINISH_REASON_KEYS = ("llm.response.finish_reason", "gen_ai.response.finish_reasons")
AGENT_KINDS = frozenset({"agent", "workflow"})
NEUTRAL_KINDS = frozenset({"task", "unknown"})
_FIRST_COMPLETION_KEYS = tuple(
    f"{COMPLETION}0.{key}" for key in ("role", "finish_reason", "content")
)


def span_kind(span: Span) -> str | None:
    value = span.attributes.get(SPAN_KIND)
    return value.lower() if isinstance(value, str) else None


def read(span: Span) -> SpanReport | None:
    attrs = span.attributes
    model = REQUEST_TYPE in attrs
    if SPAN_KIND not in attrs:
        if model or has_completions(span):
            return SpanReport(OPENLLMETRY, model=model, output=model_output(span))
        return None
    if mcp.is_openllmetry_span(span):
        return None  # OpenLLMetry's MCP instrumentation: read by conventions.mcp
    kind = span_kind(span)
    if kind == "tool":
        return SpanReport(OPENLLMETRY, execution=tool_execution(span))
    if kind in AGENT_KINDS:
        return SpanReport(OPENLLMETRY, agent=True, answer=agent_output(span))
    if kind in NEUTRAL_KINDS:
        return SpanReport(OPENLLMETRY, dispatched=dispatched_calls(span))
    return SpanReport(OPENLLMETRY, not_understood=[f"{SPAN_KIND} {attrs.get(SPAN_KIND)!r}"])


def is_model_span(span: Span) -> bool:
    return REQUEST_TYPE in span.attributes


def is_agent_span(span: Span) -> bool:
    return span_kind(span) in AGENT_KINDS


def is_tool_span(span: Span) -> bool:
    return span_kind(span) == "tool"


def tool_execution(span: Span) -> ToolReport | None:
    if not is_tool_span(span):
        return None
    attrs = span.attributes
    arguments_raw = attrs.get(ENTITY_INPUT)
    result_raw = attrs.get(ENTITY_OUTPUT)
    arguments, call_id = _entity_arguments(arguments_raw), None
    callback = envelopes.langchain_callback_arguments(arguments_raw)
    if callback is not None:  # the LangChain instrumentation's callback envelope
        arguments, call_id = parse_arguments(callback[0]), callback[1]
    return ToolReport.execution(
        span,
        OPENLLMETRY,
        as_str(attrs.get(ENTITY_NAME)) or span.name.removesuffix(".tool"),
        call_id,
        arguments=arguments,
        arguments_captured=arguments_raw is not None,
        result=envelopes.langchain_callback_result(result_raw),
        result_captured=result_raw is not None,
    )


def model_output(span: Span) -> ModelOutput:
    """The flattened ``gen_ai.completion.*`` output of a model span."""
    attrs = span.attributes
    finish: list[str] = []
    for key in FINISH_REASON_KEYS:
        finish.extend(as_str_list(attrs.get(key)))
    choices = indexed(attrs, COMPLETION) if has_completions(span) else None
    provider = as_str(attrs.get("gen_ai.system"))
    if not choices:
        return ModelOutput(
            readable=False, finish_reasons=finish, convention=OPENLLMETRY, provider=provider
        )
    output = ModelOutput(readable=True, convention=OPENLLMETRY, provider=provider)
    texts: list[str] = []
    content_seen = False
    for _, choice in sorted(choices.items()):
        if choice.get("role") not in (None, "assistant"):
            continue
        reason = as_str(choice.get("finish_reason"))
        if reason:
            output.finish_reasons.append(reason)
        content = choice.get("content")
        if content is not None:
            texts.append(content if isinstance(content, str) else str(content))
            content_seen = True
        for report in _requests(choice, span):
            content_seen = content_seen or report.arguments_captured
            output.requests.append(report)
    output.finish_reasons.extend(r for r in finish if r not in output.finish_reasons)
    if texts:
        output.text, output.text_captured = "\n".join(texts), True
    elif content_seen:
        output.text, output.text_captured = "", True
    return output


def has_completions(span: Span) -> bool:
    """Cheap probe before any key scan: an older OpenLLMetry span, or a first completion."""
    attrs = span.attributes
    return REQUEST_TYPE in attrs or any(key in attrs for key in _FIRST_COMPLETION_KEYS)


def agent_output(span: Span) -> str | None:
    """``traceloop.entity.output``: the decorated function's return value, or a LangGraph
    graph's final state (its answer is the last, AI, message)."""
    raw = span.attributes.get(ENTITY_OUTPUT)
    if raw is None:
        return None
    state, answer = envelopes.langgraph_answer(raw)
    if state:
        return answer
    value = load_json(raw)
    return value if isinstance(value, str) else (raw if isinstance(raw, str) else str(raw))


def dispatched_calls(span: Span) -> list[ToolReport]:
    """The calls a task span hands to tools: LangGraph's ToolNode (``execute_task tools``)
    records the AI message's tool calls, with ids, as its input."""
    raw = span.attributes.get(ENTITY_INPUT)
    if not isinstance(raw, str) or not raw.startswith('{"inputs": [{') or '"tool_call"' not in raw:
        return []
    calls = envelopes.langgraph_tool_calls(raw) or []
    return [
        ToolReport.requested(span, OPENLLMETRY, name, call_id, args, args is not None)
        for name, call_id, args in calls
    ]


def input_history(span: Span) -> History:
    """Call id → arguments, result and tool name from the flattened ``gen_ai.prompt.*``."""
    arguments: dict[str, Any] = {}
    results: dict[str, Any] = {}
    names: dict[str, str] = {}
    if REQUEST_TYPE not in span.attributes and f"{PROMPT}0.role" not in span.attributes:
        return History(arguments, results)
    for _, message in indexed(span.attributes, PROMPT).items():
        role = message.get("role")
        if role == "tool":
            call_id = as_str(message.get("tool_call_id"))
            if call_id and "content" in message:
                results.setdefault(call_id, parse_result(message["content"]))
        elif role == "assistant":
            for report in _requests(message, span):
                if report.call_id and report.name:
                    names.setdefault(report.call_id, report.name)
                if report.call_id and report.arguments_captured:
                    arguments.setdefault(report.call_id, report.arguments)
    return History(arguments, results, names)


def user_input(span: Span) -> UserInput | None:
    """The user messages of the flattened ``gen_ai.prompt.{i}.role/content`` (or the older
    ``llm.prompts.{i}.*``), before OpenLLMetry wrote ``gen_ai.input.messages`` (``genai``)."""
    attrs = span.attributes
    prefix = next((p for p in (PROMPT, LEGACY_PROMPT) if f"{p}0.role" in attrs), None)
    if prefix is None:
        return None
    found = UserInput()
    messages = indexed(attrs, prefix)
    found.not_understood.extend(
        f"message {index} missing from {prefix}* (its index is skipped)"
        for index in skipped_indices(messages)
    )
    for _, message in sorted(messages.items()):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str) and content.startswith('[{"type"'):
                content = load_json(content)
            if isinstance(content, list):  # content parts: the text ones are readable
                for part in content:
                    if isinstance(part, dict) and part.get("type") == "text":
                        found.add(part.get("text"), f"user messages of {prefix}*")
                    else:
                        found.not_understood.append(f"a non-text part in {prefix}*")
            else:
                found.add(content, f"user messages of {prefix}*")
    return found


def _requests(choice: dict[str, Any], span: Span) -> list[ToolReport]:
    found: list[ToolReport] = []
    for _, call in sorted(indexed(choice, "tool_calls.").items()):
        raw = call.get("arguments")
        found.append(
            ToolReport.requested(
                span, OPENLLMETRY, call.get("name"), call.get("id"), raw, raw is not None
            )
        )
    if "function_call.name" in choice:  # pre-tools OpenAI function calling
        raw = choice.get("function_call.arguments")
        found.append(
            ToolReport.requested(
                span, OPENLLMETRY, choice["function_call.name"], None, raw, raw is not None
            )
        )
    return found


def _entity_arguments(raw: Any) -> dict[str, Any] | str | None:
    """``{"args": [...], "kwargs": {...}}`` → keyword arguments, positional ones under ``args``."""
    value = parse_arguments(raw)
    if isinstance(value, dict) and set(value) <= {"args", "kwargs"} and value:
        kwargs = value.get("kwargs")
        merged: dict[str, Any] = dict(kwargs) if isinstance(kwargs, dict) else {}
        positional = value.get("args")
        if positional:
            merged["args"] = positional
        return merged
    return value


CONVENTION = Convention(
    OPENLLMETRY,
    read,
    input_history,
    user_input,
    content_keys=(
        "traceloop.entity.input",
        "traceloop.entity.output",
        "gen_ai.task.input",  # the same as traceloop.entity.input/output
        "gen_ai.task.output",
        "gen_ai.prompt.",
        "gen_ai.completion.",
        "llm.prompts.",
    ),
    read_gate=Gate(keys=(SPAN_KIND, REQUEST_TYPE, *_FIRST_COMPLETION_KEYS)),
    history_gate=Gate(keys=(REQUEST_TYPE, f"{PROMPT}0.role")),
    input_gate=Gate(keys=(f"{PROMPT}0.role", f"{LEGACY_PROMPT}0.role")),
)

"""OpenTelemetry GenAI semantic conventions (and pydantic-ai's native instrumentation).

Current form: ``gen_ai.output.messages`` / ``gen_ai.input.messages`` (JSON arrays of
messages with typed parts) on model spans; ``execute_tool`` spans with ``gen_ai.tool.*``.
Legacy form: ``gen_ai.choice`` / ``gen_ai.assistant.message`` / ``gen_ai.tool.message``
events. With content capture off, instrumentations still list the parts, only without
``content`` / ``arguments`` — so the calls a model asked for stay readable even then.
"""

from __future__ import annotations

import json
from typing import Any

from rampart_otel.conventions import envelopes, handoffs
from rampart_otel.conventions.helpers import (
    as_str,
    as_str_list,
    load_json,
    parse_arguments,
    parse_result,
    parse_stringified_result,
    redacted,
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
from rampart_otel.conventions.labels import GEN_AI
from rampart_otel.lazy_regex import LazyPattern
from rampart_otel.model import Event, Span

OPERATION = "gen_ai.operation.name"
OUTPUT_MESSAGES = "gen_ai.output.messages"
INPUT_MESSAGES = "gen_ai.input.messages"
# The semconv's event form of the content attributes: one event per attribute, or several.
OPERATION_DETAILS = "gen_ai.client.inference.operation.details"
FINISH_REASONS = "gen_ai.response.finish_reasons"
# Semantic Kernel's own diagnostics (scopes ``semantic_kernel.*``): a chat span's finish
# reason is the singular ``gen_ai.response.finish_reason`` holding its enum's repr
# ("FinishReason.TOOL_CALLS"), and an agent span's output messages carry their text as a
# plain ``content`` string, not as parts.
SEMANTIC_KERNEL = "semantic_kernel."
SK_FINISH_REASON = "gen_ai.response.finish_reason"
# Semantic Kernel names a tool by its function's fully qualified name, ``<plugin>-<function>``
# (``KernelFunctionMetadata.fully_qualified_name``, separator
# ``semantic_kernel.const.DEFAULT_FULLY_QUALIFIED_NAME_SEPARATOR``): its execute_tool spans'
# ``gen_ai.tool.name`` (``function_tracer.start_as_current_span``) and the function calls
# its chat spans record. A plugin name has no hyphen (``PLUGIN_NAME_REGEX``), so the first
# one ends it, as SK's ``FunctionCallContent`` splits the name; a function may hold one.
SK_SEPARATOR = "-"
SK_PLUGIN_NAME = LazyPattern(r"[0-9A-Za-z_]+")
RESPONSE_ID = "gen_ai.response.id"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT = "gen_ai.tool.call.result"
ERROR_TYPE = "error.type"

PROVIDER_KEYS = ("gen_ai.provider.name", "gen_ai.system")

MODEL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content", "completion"})
AGENT_OPERATIONS = frozenset({"invoke_agent"})
TOOL_OPERATIONS = frozenset({"execute_tool"})
# Operations that produce no tool call, answer or side effect of the agent's: the Vercel AI
# SDK's ``agent_step`` (one step's model call and tool runs, each with its own span);
# OpenLLMetry's LangGraph node, chain or middleware step (``execute_task``), vector store
# query and ``Command`` goto; a workflow's run (``invoke_workflow``: ADK's root, or an
# ``AgentTool``'s nested run, its agents' spans under it).
NEUTRAL_OPERATIONS = frozenset(
    {
        "create_agent",
        "invoke_workflow",
        "embeddings",
        "retrieval",
        "rerank",
        "agent_step",
        "execute_task",
        "vector_db_retrieve",
        "goto",
    }
)
# Output part types (semconv and the instrumentations we read) that hold no tool request.
_PLAIN_PARTS = frozenset(
    {
        "text",
        "reasoning",
        "thinking",
        "blob",
        "file",
        "uri",
        "image",
        "audio",
        "video",
        "image_url",
        "tool_call_response",
        "server_tool_call_response",
    }
)

# pydantic-ai: instrumentation version 2 names, the run span's answer, and deferred calls.
PYDANTIC_TOOL_ARGUMENTS = "tool_arguments"
PYDANTIC_TOOL_RESPONSE = "tool_response"
PYDANTIC_FINAL_RESULT = "final_result"
PYDANTIC_ALL_MESSAGES = "pydantic_ai.all_messages"
PYDANTIC_DEFERRAL = "pydantic_ai.tool.deferral.name"
PYDANTIC_AGENT_SPAN_NAMES = ("agent run", "invoke_agent")
PYDANTIC_TOOL_SPAN_NAMES = ("running tool", "execute_tool", "running output function")

CHOICE_EVENT = "gen_ai.choice"
ASSISTANT_EVENT = "gen_ai.assistant.message"
TOOL_EVENT = "gen_ai.tool.message"
USER_EVENT = "gen_ai.user.message"
PROMPT_EVENT = "gen_ai.content.prompt"
PROMPT_TEXT = "gen_ai.prompt"
_EVENT_BODY_KEYS = ("body", "event.body", "gen_ai.event.content")
REQUEST_MODEL = "gen_ai.request.model"  # a model span, before the operation name existed
_AGENT_NAME_KEYS = ("agent_name", "gen_ai.agent.name")  # pydantic-ai's agent run span
_PACKED_EVENTS = "events"  # pydantic-ai v1: the GenAI events as one JSON attribute


def operation(span: Span) -> str | None:
    value = span.attributes.get(OPERATION)
    return value if isinstance(value, str) else None


def span_role(span: Span) -> str | None:
    """``model`` / ``agent`` / ``tool`` from ``gen_ai.operation.name``, else older shapes.

    Before the operation name existed: a model span had ``gen_ai.request.model``;
    pydantic-ai named its spans ``agent run`` / ``running tool``.
    """
    attrs = span.attributes
    op = attrs.get(OPERATION)
    if isinstance(op, str):
        if op in MODEL_OPERATIONS:
            return "model"
        if op in TOOL_OPERATIONS:
            return "tool"
        return "agent" if op in AGENT_OPERATIONS else None
    if TOOL_NAME in attrs:
        return "tool" if span.name.startswith(PYDANTIC_TOOL_SPAN_NAMES) else None
    if REQUEST_MODEL in attrs:
        return "model"
    if span.name.startswith(PYDANTIC_AGENT_SPAN_NAMES) and (
        any(key in attrs for key in _AGENT_NAME_KEYS)
    ):
        return "agent"
    return None


def read(span: Span) -> SpanReport | None:
    """The GenAI reading of one span: its role, and model output wherever gen_ai content is;
    on Semantic Kernel's spans, each call's plugin and function read from its name."""
    report = _read(span)
    if report is not None and span.scope.name.startswith(SEMANTIC_KERNEL):
        calls = [report.execution, *report.dispatched]
        calls.extend(report.output.requests if report.output is not None else ())
        for call in calls:
            if call is not None:
                qualify_plugin_function(call)
    return report


def qualify_plugin_function(report: ToolReport) -> None:
    """A Semantic Kernel call's plugin and function, from its ``<plugin>-<function>`` name."""
    plugin, separator, function = report.name.partition(SK_SEPARATOR)
    if separator and function and SK_PLUGIN_NAME.fullmatch(plugin):
        report.namespace, report.local_name = plugin, function


def _read(span: Span) -> SpanReport | None:
    role = span_role(span)
    if role is None:
        if _has_output_content(span):
            return SpanReport(GEN_AI, output=model_output(span))
        op = span.attributes.get(OPERATION)
        if op is None:
            return None
        if op in NEUTRAL_OPERATIONS:
            return SpanReport(GEN_AI)
        return SpanReport(GEN_AI, not_understood=[f"{OPERATION} {op!r}"])
    if role == "model":
        return SpanReport(GEN_AI, model=True, output=model_output(span))
    if role == "agent":
        return SpanReport(GEN_AI, agent=True, answer=agent_output(span))
    return SpanReport(GEN_AI, execution=tool_execution(span), handoff=handoffs.receiver(span))


def _has_output_content(span: Span) -> bool:
    """Model output in GenAI form on a span another convention may own (cheap probes)."""
    if OUTPUT_MESSAGES in span.attributes:
        return True
    return any(
        event.name == CHOICE_EVENT
        or (event.name == OPERATION_DETAILS and OUTPUT_MESSAGES in event.attributes)
        for event in span.events
    )


def content(span: Span, key: str) -> Any:
    """A content attribute: on the span, else on its last operation-details event."""
    value = span.attributes.get(key)
    if value is not None:
        return value
    for event in reversed(span.events):
        if event.name == OPERATION_DETAILS and key in event.attributes:
            return event.attributes[key]
    return None


def contents(span: Span, key: str) -> list[Any]:
    """Every value of a content attribute: the span's, then each operation-details event's."""
    found = [span.attributes[key]] if key in span.attributes else []
    found.extend(
        event.attributes[key]
        for event in span.events
        if event.name == OPERATION_DETAILS and key in event.attributes
    )
    return found


def provider(span: Span) -> str | None:
    attrs = span.attributes
    for key in PROVIDER_KEYS:
        value = attrs.get(key)
        if isinstance(value, str):
            return value
    return None


def is_model_span(span: Span) -> bool:
    return span_role(span) == "model"


def is_agent_span(span: Span) -> bool:
    return span_role(span) == "agent"


def is_tool_span(span: Span) -> bool:
    return span_role(span) == "tool"


def tool_execution(span: Span) -> ToolReport | None:
    """The call an ``execute_tool`` span ran (pydantic-ai's v2 attribute names too)."""
    if not is_tool_span(span):
        return None
    attrs = span.attributes
    name = as_str(attrs.get(TOOL_NAME)) or _name_after(span.name, "execute_tool ")
    arguments_raw = attrs.get(TOOL_CALL_ARGUMENTS, attrs.get(PYDANTIC_TOOL_ARGUMENTS))
    result_raw = attrs.get(TOOL_CALL_RESULT, attrs.get(PYDANTIC_TOOL_RESPONSE))
    arguments_raw = None if redacted(arguments_raw) else arguments_raw
    result_raw = None if redacted(result_raw) else result_raw
    # The semconv result is the value's JSON text: a string returned is a JSON string literal.
    read_result = parse_stringified_result if TOOL_CALL_RESULT in attrs else parse_result
    deferred = PYDANTIC_DEFERRAL in attrs  # waiting for approval or an external run: not run
    call_id = as_str(attrs.get(TOOL_CALL_ID))
    # OpenLLMetry's LangChain tool spans put its callback envelopes in these keys.
    callback = envelopes.langchain_callback_arguments(arguments_raw)
    if callback is not None:
        arguments_raw, call_id = callback[0], call_id or callback[1]
    return ToolReport.execution(
        span,
        GEN_AI,
        name,
        call_id,
        arguments=parse_arguments(arguments_raw),
        arguments_captured=arguments_raw is not None,
        result=envelopes.langchain_callback_result(read_result(result_raw)),
        result_captured=result_raw is not None,
        failed=ERROR_TYPE in attrs,
        ran=not deferred,
    )


def model_output(span: Span) -> ModelOutput:
    """What the model produced, from output messages, else legacy choice events."""
    finish = as_str_list(span.attributes.get(FINISH_REASONS)) or _semantic_kernel_finish(span)
    raw = content(span, OUTPUT_MESSAGES)
    if redacted(raw):
        raw = None  # withheld, like content capture off: unreadable, nothing not understood
    messages = _messages(raw)
    if messages is not None:
        output = _from_messages(messages, span)
    else:
        choices = [body for name, body in _event_bodies(span) if name == CHOICE_EVENT]
        if not choices:
            output = ModelOutput(readable=False, finish_reasons=finish, convention=GEN_AI)
            if raw is not None:
                output.not_understood.append(f"{OUTPUT_MESSAGES} (not a JSON array of messages)")
            output.provider = provider(span)
            output.response_id = as_str(span.attributes.get(RESPONSE_ID)) or None
            return output
        output = _from_choices(choices, span)
    for reason in finish:
        if reason not in output.finish_reasons:
            output.finish_reasons.append(reason)
    output.provider = provider(span)
    output.response_id = as_str(span.attributes.get(RESPONSE_ID)) or None
    return output


def _semantic_kernel_finish(span: Span) -> list[str]:
    """Semantic Kernel's singular finish reason, its enum's repr read as the value."""
    if not span.scope.name.startswith(SEMANTIC_KERNEL):
        return []
    value = as_str(span.attributes.get(SK_FINISH_REASON))
    return [value.removeprefix("FinishReason.").lower()] if value else []


def agent_output(span: Span) -> str | None:
    """The agent's answer on an agent span: output messages, else pydantic-ai ``final_result``."""
    messages = _messages(content(span, OUTPUT_MESSAGES))
    if messages is not None:
        output = _from_messages(messages, span)
        if output.text_captured:
            return output.text
        if span.scope.name.startswith(SEMANTIC_KERNEL):
            texts = [
                m["content"]
                for m in messages
                if m.get("role") in (None, "assistant") and isinstance(m.get("content"), str)
            ]
            if texts and not any(redacted(text) for text in texts):
                return "\n".join(texts)
    final = span.attributes.get(PYDANTIC_FINAL_RESULT)
    if final is None:
        return None
    return final if isinstance(final, str) else json.dumps(final, default=str)


def input_history(span: Span) -> History:
    """Call id → arguments and call id → result, from the history sent to the model.

    A tool result sent back to the model shows the call ran and what it returned, even when
    no tool span was recorded. Only calls already known from this run are matched by id.
    """
    arguments: dict[str, Any] = {}
    results: dict[str, Any] = {}
    names: dict[str, str] = {}
    hand_backs: set[str] = set()
    for raw in contents(span, INPUT_MESSAGES):
        if not isinstance(raw, str) or _may_hold_call_content(raw):
            for message in _messages(raw) or ():
                parts = _parts(message)
                calls = False
                for part in parts:
                    _history_part(part, arguments, results)
                    if part.get("type") == "tool_call":
                        calls = True
                        if as_str(part.get("id")):
                            name = as_str(part.get("name"))
                            if name:
                                names.setdefault(as_str(part.get("id")) or "", name)
                if calls:  # most messages call no tool: no hand-back to look for
                    hand_backs.update(_hand_backs(parts))
                _openai_history(message, arguments, results, names)
    for name, body in _event_bodies(span):
        if name == TOOL_EVENT:
            call_id = as_str(body.get("id")) or as_str(body.get("tool_call_id"))
            if call_id and "content" in body:
                results.setdefault(call_id, parse_result(body["content"]))
        elif name == ASSISTANT_EVENT:
            for call in _list(body.get("tool_calls")):
                call_id, name, args, captured = _openai_tool_call(call)
                if call_id and name:
                    names.setdefault(call_id, name)
                if call_id and captured:
                    arguments.setdefault(call_id, args)
    for call_id in hand_backs:  # langgraph-supervisor's own bookkeeping: no call of the run's
        for found in (arguments, results, names):
            found.pop(call_id, None)
    return History(arguments, results, names)


def _hand_backs(parts: list[dict[str, Any]]) -> list[str]:
    """The ids of the hand-back calls in an assistant message (its ``parts``) that
    langgraph-supervisor wrote itself (``handoffs.is_hand_back``: its exact text and tool
    name)."""
    calls = [part for part in parts if part.get("type") == "tool_call"]
    if not calls:  # most messages: no text to join
        return []
    text = "".join(str(p.get("content")) for p in parts if p.get("type") == "text")
    return [
        as_str(part.get("id")) or ""
        for part in calls
        if handoffs.is_hand_back(as_str(part.get("name")), text)
    ]


def user_input(span: Span) -> UserInput | None:
    """The user-role messages of the input: ``gen_ai.input.messages`` (on the span or its
    operation-details events), else the legacy ``gen_ai.user.message`` events."""
    found: UserInput | None = None
    for raw in contents(span, INPUT_MESSAGES):
        found = found or UserInput()
        read_user_messages(raw, INPUT_MESSAGES, found)
    if found is not None:
        return found
    if PYDANTIC_ALL_MESSAGES in span.attributes:  # pydantic-ai's agent run span
        found = UserInput()
        read_user_messages(span.attributes[PYDANTIC_ALL_MESSAGES], PYDANTIC_ALL_MESSAGES, found)
        return found
    for name, body in _event_bodies(span):
        if name == USER_EVENT:
            found = found or UserInput()
            content = body.get("content")
            if isinstance(content, list):  # content parts, as in the messages' form
                read_user_parts(content, USER_EVENT, found)
            else:
                found.add(content, f"{USER_EVENT} events (no content)")
    if found is None and (
        PROMPT_TEXT in span.attributes or any(e.name == PROMPT_EVENT for e in span.events)
    ):
        # Older OpenLIT/OpenLLMetry: every message's role and text in one string.
        where = PROMPT_EVENT if PROMPT_TEXT not in span.attributes else PROMPT_TEXT
        return UserInput(not_understood=[f"{where} (the prompt as one text of every role)"])
    return found


def read_user_messages(raw: Any, where: str, found: UserInput) -> None:
    """The user messages of a semconv message list (JSON text or a list) into ``found``."""
    if redacted(raw):
        found.add(None, f"{where} ({raw})")
        return
    messages = _messages(raw)
    if messages is None:
        found.not_understood.append(f"{where} (not a JSON array of messages)")
        return
    for message in messages:
        if message.get("role") != "user":
            continue  # system/developer prompts, the model's turns and tool results
        if "parts" in message:
            read_user_parts(_list(message["parts"]), where, found)
        else:
            found.add(message.get("content"), f"user messages without content in {where}")


def read_user_parts(parts: list[Any], where: str, found: UserInput) -> None:
    """A user message's parts: text is the user's; tool results are not (pydantic-ai and
    Anthropic send them as role ``user``); any other part (an image, a file) is input we
    cannot read as text."""
    for part in parts:
        if not isinstance(part, dict):
            found.not_understood.append(f"a user message part that is no object in {where}")
            continue
        kind = part.get("type", "text")
        if kind == "text":
            found.add(part.get("content"), f"text parts without content in {where}")
        elif kind not in ("tool_call_response", "server_tool_call_response"):
            found.not_understood.append(f"part type {kind!r} in a user message of {where}")


# --- message parsing -------------------------------------------------------------------


def _may_hold_call_content(raw: str) -> bool:
    """Substring probe before parsing a whole history: call parts with content in them, or
    a result in the Chat Completions shape (a tool message's ``tool_call_id``)."""
    return '"tool_call' in raw and (
        '"arguments"' in raw or '"result"' in raw or '"response"' in raw or '"tool_call_id"' in raw
    )


def _openai_history(
    message: dict[str, Any],
    arguments: dict[str, Any],
    results: dict[str, Any],
    names: dict[str, str],
) -> None:
    """The Chat Completions shape some writers put in ``gen_ai.input.messages`` (LiteLLM):
    an assistant message's calls under ``tool_calls``; a tool message's result as its
    ``content`` or text parts, with its ``tool_call_id``."""
    for call in _list(message.get("tool_calls")):
        call_id, name, args, captured = _openai_tool_call(call)
        if call_id and name:
            names.setdefault(call_id, name)
        if call_id and captured and not redacted(args):
            arguments.setdefault(call_id, args)
    call_id = as_str(message.get("tool_call_id"))
    if not call_id or message.get("role") != "tool":
        return
    content = message.get("content")
    if content is None:
        texts = [
            part["content"]
            for part in _parts(message)
            if part.get("type") == "text" and isinstance(part.get("content"), str)
        ]
        content = "".join(texts) if texts else None
    if content is not None and not redacted(content):
        results.setdefault(call_id, parse_result(content))


def _messages(raw: Any) -> list[dict[str, Any]] | None:
    value = load_json(raw) if isinstance(raw, str) else raw
    if not isinstance(value, list):
        return None
    return [item for item in value if isinstance(item, dict)]


def _parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [part for part in _list(message.get("parts")) if isinstance(part, dict)]


def _list(value: Any) -> list[Any]:
    value = load_json(value) if isinstance(value, str) else value
    return value if isinstance(value, list) else []


def _from_messages(messages: list[dict[str, Any]], span: Span) -> ModelOutput:
    output = ModelOutput(readable=True, convention=GEN_AI)
    texts: list[str] = []
    text_missing = False
    content_seen = False
    for message in messages:
        role = message.get("role")
        if role not in (None, "assistant", "model"):
            continue
        reason = as_str(message.get("finish_reason"))
        if reason:
            output.finish_reasons.append(reason)
        for part in _parts(message):
            kind = part.get("type")
            if kind == "text":
                if part.get("content") is not None and not redacted(part["content"]):
                    texts.append(str(part["content"]))
                    content_seen = True
                else:
                    text_missing = True
            elif kind in ("tool_call", "server_tool_call"):
                report = _request_from_part(part, span)
                content_seen = content_seen or report.arguments_captured
                output.requests.append(report)
            elif kind not in _PLAIN_PARTS:
                output.not_understood.append(f"part type {kind!r} in {OUTPUT_MESSAGES}")
    _set_text(output, texts, text_missing, content_seen)
    return output


def _request_from_part(part: dict[str, Any], span: Span) -> ToolReport:
    if part.get("type") == "server_tool_call":
        payload = part.get("server_tool_call")
        raw = (
            {k: v for k, v in payload.items() if k != "type"} if isinstance(payload, dict) else None
        )
    else:
        raw = part.get("arguments")
    captured = raw is not None and not redacted(raw)
    return ToolReport.requested(span, GEN_AI, part.get("name"), part.get("id"), raw, captured)


def _history_part(part: dict[str, Any], arguments: dict[str, Any], results: dict[str, Any]) -> None:
    kind = part.get("type")
    call_id = as_str(part.get("id"))
    if not call_id:
        return
    if kind == "tool_call_response":
        # The spec names the field ``response``; pydantic-ai writes ``result``.
        for key in ("response", "result"):
            if key in part:
                if not redacted(part[key]):
                    results.setdefault(call_id, parse_result(part[key]))
                break
    elif (
        kind == "tool_call"
        and part.get("arguments") is not None
        and not redacted(part["arguments"])
    ):
        arguments.setdefault(call_id, parse_arguments(part["arguments"]))


def _set_text(output: ModelOutput, texts: list[str], missing: bool, content_seen: bool) -> None:
    """Text counts as captured when no text part lost its content and some content is there."""
    if texts and not missing:
        output.text, output.text_captured = "\n".join(texts), True
    elif not texts and not missing and content_seen:
        output.text, output.text_captured = "", True


# --- legacy events -----------------------------------------------------------------------


def _event_bodies(span: Span) -> list[tuple[str, dict[str, Any]]]:
    """Legacy GenAI events as (name, body): span events, or pydantic-ai v1's ``events``."""
    found: list[tuple[str, dict[str, Any]]] = []
    for event in span.events:
        if event.name.startswith("gen_ai."):
            found.append((event.name, _event_body(event)))
    packed = span.attributes.get(_PACKED_EVENTS)
    if isinstance(packed, str) and '"gen_ai.' in packed:
        for item in _list(packed):
            if isinstance(item, dict) and isinstance(item.get("event.name"), str):
                found.append((item["event.name"], item))
    return found


def _event_body(event: Event) -> dict[str, Any]:
    attrs = event.attributes
    for key in _EVENT_BODY_KEYS:
        if key in attrs:
            body = load_json(attrs[key])
            if isinstance(body, dict):
                return body
    body = dict(attrs)
    if "message" in body:
        body["message"] = load_json(body["message"])
    if "tool_calls" in body:
        body["tool_calls"] = load_json(body["tool_calls"])
    return body


def _from_choices(choices: list[dict[str, Any]], span: Span) -> ModelOutput:
    output = ModelOutput(readable=True, convention=GEN_AI)
    texts: list[str] = []
    text_missing = False
    content_seen = False
    for body in sorted(choices, key=_choice_index):
        reason = as_str(body.get("finish_reason"))
        if reason:
            output.finish_reasons.append(reason)
        message = body.get("message")
        message = message if isinstance(message, dict) else {}
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
            content_seen = True
        elif content is not None:
            texts.append(json.dumps(content, default=str))
            content_seen = True
        elif not message.get("tool_calls"):
            text_missing = True  # a choice with neither content nor calls: content not captured
        for call in _list(message.get("tool_calls")):
            call_id, name, args, captured = _openai_tool_call(call)
            content_seen = content_seen or captured
            output.requests.append(
                ToolReport.requested(span, GEN_AI, name, call_id, args, captured)
            )
    _set_text(output, texts, text_missing, content_seen)
    return output


def _choice_index(body: dict[str, Any]) -> int:
    index = body.get("index")
    return index if isinstance(index, int) else 0


def _openai_tool_call(call: Any) -> tuple[str | None, str, Any, bool]:
    """(id, name, arguments, captured) of an OpenAI-shaped ``tool_calls`` entry."""
    if not isinstance(call, dict):
        return None, "", None, False
    function = call.get("function")
    function = function if isinstance(function, dict) else {}
    raw = function.get("arguments")
    name = as_str(function.get("name")) or as_str(call.get("name")) or ""
    return as_str(call.get("id")) or None, name, parse_arguments(raw), raw is not None


def _name_after(span_name: str, prefix: str) -> str:
    return span_name[len(prefix) :] if span_name.startswith(prefix) else span_name


CONVENTION = Convention(
    GEN_AI,
    read,
    input_history,
    user_input,
    content_keys=(
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
        "gen_ai.prompt",
        "gen_ai.completion",
        "tool_arguments",
        "tool_response",
        "final_result",
        PYDANTIC_ALL_MESSAGES,
        "events",
    ),
    content_events=(
        "gen_ai.choice",
        "gen_ai.user.message",
        "gen_ai.system.message",
        "gen_ai.assistant.message",
        "gen_ai.tool.message",
        "gen_ai.content.prompt",
        "gen_ai.content.completion",
        OPERATION_DETAILS,
    ),
    # span_role's and _has_output_content's probes, and the operation name;
    # input_history's: the messages, on the span or its events, or pydantic-ai's ``events``.
    read_gate=Gate(
        keys=(OPERATION, TOOL_NAME, REQUEST_MODEL, *_AGENT_NAME_KEYS, OUTPUT_MESSAGES),
        events=True,
    ),
    history_gate=Gate(keys=(INPUT_MESSAGES, _PACKED_EVENTS), events=True),
    input_gate=Gate(
        keys=(INPUT_MESSAGES, PYDANTIC_ALL_MESSAGES, _PACKED_EVENTS, PROMPT_TEXT), events=True
    ),
)

"""OpenInference semantic conventions (Arize Phoenix instrumentations).

Model spans (``openinference.span.kind=LLM``) flatten the output into
``llm.output_messages.{i}.message.*``; hiding outputs drops those keys and replaces
``output.value`` with ``__REDACTED__``, while ``llm.finish_reason`` stays. Tools are
``TOOL`` spans with ``tool.name`` / ``input.value`` / ``output.value``; an ``AGENT``
span's ``output.value`` is the agent's answer. Framework instrumentors that fill these
their own way (bound-argument inputs, result and answer envelopes, an answer tool, LLM
spans that call no model) are read through their dialect, keyed by instrumentation scope
(``openinference_dialects``), so no other producer's spans change.

Shapes read wherever they occur, each only in its exact form:
- ``output.value`` holding a whole OpenAI ``Response`` (the Agents SDK instrumentor): the
  complete account of the output, whose items the flattened messages may leave out (not
  understood), and the output when the flattened messages alone were hidden; its
  ``llm.finish_reason`` is the Responses status ("stop" on tool turns too, see
  ``finish_reasons``). Else a ``chat.completion`` or an assistant message is the output
  when only the flattened messages were hidden.
- LangChain/LangGraph: a tool's ``output.value`` is a ``ToolMessage`` (its content the
  result, its ``tool_call_id`` the call's id); a one-argument tool's ``input.value`` is the
  bare value (kept raw), while the ``tools`` CHAIN span's input lists the calls with ids and
  named arguments; the graph's AGENT ``output.value`` is its final state (the answer is the
  last AI message). Tool spans never become the current context, so the side effects inside
  them are separate one-span traces: fragments, never attributed.
"""

from __future__ import annotations

import json
from typing import Any

from rampart_otel.conventions import envelopes, haystack, openai_responses
from rampart_otel.conventions.envelopes import text_blocks
from rampart_otel.conventions.helpers import (
    as_str,
    indexed,
    load_json,
    parse_arguments,
    parse_result,
    redacted,
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
from rampart_otel.conventions.labels import OPENINFERENCE
from rampart_otel.conventions.openinference_dialects import (
    CODE_TOOL,
    Dialect,
    dialect,
    tool_name_from_span,
)
from rampart_otel.model import Span

SPAN_KIND = "openinference.span.kind"
OUTPUT_MESSAGES = "llm.output_messages."
INPUT_MESSAGES = "llm.input_messages."
PROMPTS = "llm.prompts"
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
        if builds_request_only(span):
            return SpanReport(OPENINFERENCE)  # a step of the call, not the call
        return SpanReport(OPENINFERENCE, model=True, output=model_output(span))
    if kind == "CHAIN":
        spoken = dialect(span)
        if span.name in spoken.agent_chains:
            return _agent_chain(span)
        step = spoken.code_steps is not None and spoken.code_steps.fullmatch(span.name) is not None
        return SpanReport(OPENINFERENCE, dispatched=dispatched_calls(span), code_step=step)
    if kind == "TOOL":
        report = SpanReport(OPENINFERENCE, execution=tool_execution(span))
        # The span's name is a guess at the tool's, unless its dialect names tools that way.
        if TOOL_NAME not in span.attributes and tool_name_from_span(span) is None:
            report.not_understood.append(f"TOOL span without {TOOL_NAME}")
        return report
    if kind == "AGENT":
        return SpanReport(OPENINFERENCE, agent=True, answer=agent_output(span))
    if kind in NEUTRAL_KINDS:
        return SpanReport(OPENINFERENCE)
    value = span.attributes.get(SPAN_KIND)
    return SpanReport(OPENINFERENCE, not_understood=[f"{SPAN_KIND} {value!r}"])


def _agent_chain(span: Span) -> SpanReport:
    """A framework's agent recorded as a CHAIN span (Haystack's ``Agent.run``), with no
    model or tool span of its own: the run's agent span. The conversation in its output
    holds the calls the agent ran (ids, names, arguments, results) and the answer; messages
    in a form not read are named as not understood, never taken for a run that called no
    tool."""
    report = SpanReport(OPENINFERENCE, agent=True)
    value = span.attributes.get(OUTPUT_VALUE)
    if not captured(value):
        return report
    calls = haystack.tool_calls(value, span, OPENINFERENCE)
    if calls is None:
        what = "messages in a form not understood, or a tool call without its id or result"
        report.not_understood.append(f"{OUTPUT_VALUE}: {what}")
        return report
    report.answer = haystack.answer(value)
    report.dispatched.extend(calls)
    return report


def is_model_span(span: Span) -> bool:
    return span_kind(span) in MODEL_KINDS and not builds_request_only(span)


def builds_request_only(span: Span) -> bool:
    """An LLM-kind span of a framework helper that builds the request and calls no model
    (LlamaIndex's ``_prepare_chat_with_tools``); one that records output stays a model span."""
    builders = dialect(span).builders
    if not builders or not span.name.endswith(builders):
        return False
    return FINISH_REASON not in span.attributes and not _has_output(span.attributes)


def is_agent_span(span: Span) -> bool:
    return span_kind(span) == "AGENT"


def is_tool_span(span: Span) -> bool:
    return span_kind(span) == "TOOL"


def captured(value: Any) -> bool:
    """Present and not masked by OpenInference's hide_* settings."""
    return value is not None and not redacted(value)


def tool_execution(span: Span) -> ToolReport | None:
    if not is_tool_span(span):
        return None
    attrs = span.attributes
    framework = dialect(span)
    call_id = next((as_str(attrs[key]) for key in TOOL_ID_KEYS if key in attrs), None)
    arguments_raw = attrs.get(INPUT_VALUE)
    result_raw = attrs.get(OUTPUT_VALUE)
    args_ok, result_ok = captured(arguments_raw), captured(result_raw)
    name = as_str(attrs.get(TOOL_NAME)) or tool_name_from_span(span) or span.name
    # LangChain tools return a ToolMessage: the call's id and status travel in it.
    message = envelopes.langchain_tool_message(result_raw) if result_ok else None
    if message is not None:
        call_id = call_id or as_str(message.get("tool_call_id"))
    return ToolReport.execution(
        span,
        OPENINFERENCE,
        name,
        call_id,
        arguments=framework.arguments(parse_arguments(arguments_raw)) if args_ok else None,
        arguments_captured=args_ok,
        result=framework.result(envelopes.langchain_message(result_raw)) if result_ok else None,
        result_captured=result_ok,
        failed=(result_ok and framework.failed(result_raw))
        or (message or {}).get("status") == "error",
        answer=framework.answer_tool is not None and name == framework.answer_tool,
    )


# One output message as read: (text, text missing, [(name, call id, raw arguments)]).
_Message = tuple[str | None, bool, list[tuple[Any, Any, Any]]]


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
    provider = next((as_str(attrs[key]) for key in PROVIDER_KEYS if key in attrs), None)
    output = ModelOutput(
        readable=False,
        finish_reasons=finish,
        convention=OPENINFERENCE,
        provider=provider,
        source=span.scope.name,  # finish_reasons knows which scopes write a status
    )
    flattened = indexed(attrs, OUTPUT_MESSAGES) if _has_output(attrs) else None
    messages: list[_Message] | None
    response = openai_responses.output_items(attrs.get(OUTPUT_VALUE))
    if response is not None:  # the whole Response: read it, then the flattened messages
        _read_response(output, response, span, bool(flattened))
    if flattened:
        messages = [
            _flattened_message(message)
            for _, message in sorted(flattened.items())
            if message.get("message.role") in (None, "assistant", "model")
        ]
    elif response is not None:
        return output
    else:
        messages = _output_value_messages(attrs.get(OUTPUT_VALUE), output)
        if messages is None:
            return output
    output.readable = True
    framework = dialect(span)
    texts: list[str] = []
    text_missing = False
    content_seen = False
    for text, missing, calls in messages:
        code = framework.code_action(text) if text else None
        if text is not None:
            texts.append(text)
            content_seen = True
        text_missing = text_missing or missing
        for name, call_id, raw in calls:
            if framework.answer_tool is not None and name == framework.answer_tool:
                text = _answer_argument(raw, framework, output)
                if text is None:
                    text_missing = True
                else:
                    texts.append(text)
                    content_seen = True
                continue
            report = ToolReport.requested(span, OPENINFERENCE, name, call_id, raw, captured(raw))
            content_seen = content_seen or report.arguments_captured
            output.requests.append(report)
        if code is not None:  # a code agent's action: the code is the call's argument
            action = {"code": code}
            output.requests.append(
                ToolReport.requested(span, OPENINFERENCE, CODE_TOOL, None, action, True)
            )
    if texts and not text_missing:
        output.text, output.text_captured = "\n".join(texts), True
    elif not texts and not text_missing and content_seen:
        output.text, output.text_captured = "", True
    return output


def _flattened_message(message: dict[str, Any]) -> _Message:
    text, missing, _ = _message_text(message)  # the output's images ask for no tool
    calls = [
        (
            call.get("tool_call.function.name"),
            call.get("tool_call.id"),
            call.get("tool_call.function.arguments"),
        )
        for _, call in sorted(indexed(message, "message.tool_calls.").items())
    ]
    return text, missing, calls


def _output_value_messages(value: Any, output: ModelOutput) -> list[_Message] | None:
    """The output from ``output.value`` when no ``llm.output_messages`` were recorded
    (hide_output_messages alone keeps it): an OpenAI ``chat.completion`` (the OpenAI
    instrumentor) or an assistant message (smolagents' ``ChatMessage``). None: not there,
    or in another form (LlamaIndex's ``"assistant: ..."`` text names no tool calls)."""
    if not isinstance(value, str) or not value.startswith("{") or not captured(value):
        return None
    decoded = load_json(value)
    if not isinstance(decoded, dict):
        return None
    if isinstance(decoded.get("choices"), list) and decoded["choices"]:
        choices = decoded["choices"]
        if not all(isinstance(choice, dict) for choice in choices):
            return None
        found = [choice.get("message") for choice in choices]
        reasons = [r for choice in choices if isinstance(r := choice.get("finish_reason"), str)]
    elif decoded.get("role") == "assistant" and ("content" in decoded or "tool_calls" in decoded):
        found, reasons = [decoded], []
    else:
        return None
    messages: list[_Message] = []
    for message in found:
        read = _json_message(message)
        if read is None:
            return None
        messages.append(read)
    if not output.finish_reasons:
        output.finish_reasons = reasons
    return messages


def _json_message(message: Any) -> _Message | None:
    """An OpenAI-shaped assistant message; None when any part is in another form."""
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, list):
        content = text_blocks(content)
        if content is None:
            return None
    elif content is not None and not isinstance(content, str):
        return None
    calls: list[tuple[Any, Any, Any]] = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            return None
        calls.append((function["name"], call.get("id"), function.get("arguments")))
    return content, False, calls


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


def _answer_argument(raw: Any, framework: Dialect, output: ModelOutput) -> str | None:
    """The answer a request of the framework's answer tool carries: its one argument."""
    if not captured(raw):
        return None
    arguments = parse_arguments(raw)
    if isinstance(arguments, dict) and len(arguments) == 1:
        (value,) = arguments.values()
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    output.not_understood.append(
        f"arguments of {framework.answer_tool!r} (the answer) in a form not understood"
    )
    return None


def agent_output(span: Span) -> str | None:
    """The AGENT span's ``output.value``; a LangGraph graph's is its final state, whose
    answer is the last (AI) message's text."""
    value = span.attributes.get(OUTPUT_VALUE)
    if not captured(value):
        return None
    state, answer = envelopes.langgraph_answer(value)
    if state:
        return answer
    value = dialect(span).answer(value)
    return value if isinstance(value, str) else str(value)


def input_history(span: Span) -> History:
    """Call id → arguments, result and tool name from ``llm.input_messages``."""
    arguments: dict[str, Any] = {}
    results: dict[str, Any] = {}
    names: dict[str, str] = {}
    if SPAN_KIND not in span.attributes:
        return History(arguments, results)
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
                name = as_str(call.get("tool_call.function.name"))
                if call_id and name:
                    names.setdefault(call_id, name)
                if call_id and captured(raw):
                    arguments.setdefault(call_id, parse_arguments(raw))
    return History(arguments, results, names)


def user_input(span: Span) -> UserInput | None:
    """The user messages of an LLM span's ``llm.input_messages``; an AGENT span's caller
    input (``input.value``: the text, LangGraph's ``messages`` state, smolagents' ``task``);
    a framework agent's CHAIN span's input messages (Haystack's ``Agent.run``).

    With inputs hidden, ``input.value`` is ``__REDACTED__`` and no messages are recorded.
    """
    kind = span_kind(span)
    if kind == "AGENT":
        return _agent_input(span.attributes.get(INPUT_VALUE))
    if kind == "CHAIN" and span.name in dialect(span).agent_chains:
        value = span.attributes.get(INPUT_VALUE)
        if value is None:
            return None
        if redacted(value):
            return UserInput(withheld=[f"{INPUT_VALUE} ({value})"])
        return haystack.user_input(value, INPUT_VALUE)
    if kind not in MODEL_KINDS:
        return None
    attrs = span.attributes
    first = INPUT_MESSAGES + "0.message."
    recorded = first + "role" in attrs or first + "content" in attrs
    messages = indexed(attrs, INPUT_MESSAGES) if recorded else {}
    if not messages:
        if PROMPTS in attrs or PROMPTS + ".0.prompt.text" in attrs:
            return UserInput(not_understood=[f"{PROMPTS} (a completion prompt, no roles)"])
        value = attrs.get(INPUT_VALUE)
        if redacted(value) or value is None:
            return UserInput(withheld=[f"{INPUT_VALUE} ({value})"]) if value else None
        return UserInput(not_understood=[f"{INPUT_VALUE} without {INPUT_MESSAGES}*"])
    found = UserInput()
    where = f"user messages of {INPUT_MESSAGES}*"
    found.not_understood.extend(
        f"message {index} missing from {INPUT_MESSAGES}* (its index is skipped)"
        for index in skipped_indices(messages)
    )
    for _, message in sorted(messages.items()):
        role = message.get("message.role")
        if role is None and any(key.startswith("message.content") for key in message):
            # OpenInference always records the role: whose message this is, is not known
            found.not_understood.append(f"a message without message.role in {INPUT_MESSAGES}*")
            continue
        if role != "user":
            continue  # system prompts, the model's turns and tool results
        text, missing, other = _message_text(message)
        if text is not None:
            found.texts.append(text)
        if missing or (text is None and not other):
            found.add(None, where)
        found.not_understood.extend(f"content type {kind!r} in {where}" for kind in other)
    return found


def _agent_input(value: Any) -> UserInput | None:
    if not captured(value):
        return None
    decoded = load_json(value)
    if isinstance(decoded, str):
        return UserInput(texts=[decoded])
    if isinstance(decoded, dict) and isinstance(decoded.get("task"), str):
        return UserInput(texts=[decoded["task"]])  # smolagents' run(task=...)
    if isinstance(decoded, dict) and isinstance(decoded.get("messages"), list):
        found = UserInput()  # a LangGraph state: its user messages
        for message in decoded["messages"]:
            if isinstance(message, dict) and message.get("role") in ("user", "human"):
                content = message.get("content")
                if isinstance(content, str):
                    found.texts.append(content)
        return found if found.texts else None
    return None  # another framework's arguments: not the caller's text


def _message_text(message: dict[str, Any]) -> tuple[str | None, bool, list[str]]:
    """(text, missing, other kinds): ``message.content``, else the text items of
    ``message.contents``, and the types of its items that are not text (an image)."""
    if "message.content" in message:
        content = message["message.content"]
        return (str(content), False, []) if captured(content) else (None, True, [])
    pieces: list[str] = []
    missing = False
    other: list[str] = []
    for _, item in sorted(indexed(message, "message.contents.").items()):
        kind = item.get("message_content.type", "text")
        if kind != "text":
            other.append(str(kind))
            continue
        text = item.get("message_content.text")
        if captured(text):
            pieces.append(str(text))
        else:
            missing = True
    return ("".join(pieces) if pieces else None), missing, other


CONVENTION = Convention(
    OPENINFERENCE,
    read,
    input_history,
    user_input,
    content_keys=(
        "input.value",
        "output.value",
        "llm.input_messages.",
        "llm.output_messages.",
        "llm.prompts",
        "llm.prompt_template.",
    ),
    read_gate=Gate(keys=(SPAN_KIND,)),
    history_gate=Gate(keys=(SPAN_KIND,)),
    input_gate=Gate(keys=(SPAN_KIND,)),
)

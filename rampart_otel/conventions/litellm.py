"""LiteLLM's OpenTelemetry callback (``litellm.callbacks = ["otel"]``).

Two kinds of span carry what it records:

- ``raw_gen_ai_request`` (scope ``litellm``; a ``generation_name`` renames it): one per
  completion, with the provider's raw request and response as ``llm.<provider>.<field>``,
  each structure in Python ``repr`` text (``"[{'role': 'user', ...}]"``): ``messages`` and
  ``tools`` sent, ``id`` and ``choices`` returned (the Chat Completions shape for OpenAI and
  every OpenAI-compatible provider). It is the model call: its output is read from
  ``choices``, its history (earlier calls and results) and user input from ``messages``.
  Written only while content capture is on (``turn_off_message_logging`` drops it).
  A response in another shape is reported as not understood.
- the caller's span: while a span of the application's is active, the callback writes each
  completion's ``gen_ai.*`` and ``litellm.*`` attributes onto that span, each completion
  overwriting the last, instead of a ``litellm_request`` span of its own. Such a span
  (``litellm.call_id`` on a span of another scope) is reported as the caller's
  (``SpanReport.caller``): holding the completions' own spans, it is not taken for a model
  call, and its children are not the model's transport.

The ``repr`` text is read as Python literals only (``ast.literal_eval``), never evaluated.
"""

from __future__ import annotations

import ast
from typing import Any

from rampart_otel.conventions import genai
from rampart_otel.conventions.helpers import as_str, load_json, parse_arguments, parse_result
from rampart_otel.conventions.interface import (
    Convention,
    Gate,
    History,
    ModelOutput,
    SpanReport,
    UserInput,
)
from rampart_otel.conventions.labels import LITELLM
from rampart_otel.model import Span

SCOPE = "litellm"
CALL_ID = "litellm.call_id"
RAW_REQUEST = "raw_gen_ai_request"  # the span's default name
PREFIX = "llm."
MESSAGES, CHOICES, RESPONSE_ID = "messages", "choices", "id"
# The raw request's and response's fields that tell a raw-request span.
_RAW_FIELDS = (MESSAGES, CHOICES)
_NOT_PROVIDERS = frozenset({"request", "response", "is_streaming", "usage", "token_count"})


def read(span: Span) -> SpanReport | None:
    attrs = span.attributes
    if span.scope.name != SCOPE:
        return SpanReport(LITELLM, caller=True) if CALL_ID in attrs else None
    prefix = _raw_prefix(span)
    if prefix is None:
        return None
    return SpanReport(LITELLM, model=True, output=model_output(span, prefix))


def model_output(span: Span, prefix: str) -> ModelOutput:
    """The completion's output from the raw response's ``choices``."""
    attrs = span.attributes
    provider = prefix[len(PREFIX) : -1]
    choices = literal(attrs.get(prefix + CHOICES))
    if isinstance(choices, list) and all(isinstance(c, dict) for c in choices):
        output = genai._from_choices(choices, span)
        output.convention = LITELLM
        for request in output.requests:
            request.convention = LITELLM
    else:
        output = ModelOutput(readable=False, convention=LITELLM)
        raw = [key for key in attrs if key.startswith(prefix) and key != prefix + MESSAGES]
        if raw:
            shown = prefix + CHOICES if prefix + CHOICES in attrs else raw[0]
            output.not_understood.append(f"{shown} (a raw response shape not read)")
    output.provider = provider
    output.response_id = as_str(attrs.get(prefix + RESPONSE_ID)) or None
    return output


def input_history(span: Span) -> History:
    """Call id → arguments, results and names from the Chat Completions messages sent."""
    return chat_history(_messages(span))


def chat_history(messages: list[Any]) -> History:
    """Call id → arguments, results and names in Chat Completions messages: assistant
    ``tool_calls`` (id, function name and JSON arguments), ``tool`` messages' results."""
    arguments: dict[str, Any] = {}
    results: dict[str, Any] = {}
    names: dict[str, str] = {}
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "assistant":
            for call in message.get("tool_calls") or ():
                function = call.get("function") if isinstance(call, dict) else None
                call_id = as_str(call.get("id")) if isinstance(call, dict) else None
                if not call_id or not isinstance(function, dict):
                    continue
                name = as_str(function.get("name"))
                if name:
                    names.setdefault(call_id, name)
                if "arguments" in function:
                    arguments.setdefault(call_id, parse_arguments(function["arguments"]))
        elif role == "tool":
            call_id = as_str(message.get("tool_call_id"))
            if call_id and "content" in message:
                results.setdefault(call_id, parse_result(message["content"]))
    return History(arguments, results, names)


def user_input(span: Span) -> UserInput | None:
    prefix = _raw_prefix(span) if span.scope.name == SCOPE else None
    if prefix is None or prefix + MESSAGES not in span.attributes:
        return None
    found = UserInput()
    messages = literal(span.attributes[prefix + MESSAGES])
    if not isinstance(messages, list):
        found.not_understood.append(f"{prefix}{MESSAGES} (not a list of messages)")
        return found
    genai.read_user_messages(messages, prefix + MESSAGES, found)
    return found


def literal(value: Any) -> Any:
    """A Python ``repr`` of literals (dicts, lists, strings, numbers, None) as its value,
    else JSON text decoded; anything else is returned as it is."""
    if not isinstance(value, str):
        return value
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return load_json(value)


def _raw_prefix(span: Span) -> str | None:
    """``llm.<provider>.`` of a raw-request span's fields, when it has any."""
    for key in span.attributes:
        if not key.startswith(PREFIX):
            continue
        head, _, field = key[len(PREFIX) :].partition(".")
        if field in _RAW_FIELDS and head not in _NOT_PROVIDERS:
            return f"{PREFIX}{head}."
    return None


def _messages(span: Span) -> list[dict[str, Any]]:
    prefix = _raw_prefix(span) if span.scope.name == SCOPE else None
    if prefix is None:
        return []
    messages = literal(span.attributes.get(prefix + MESSAGES))
    if not isinstance(messages, list):
        return []
    return [message for message in messages if isinstance(message, dict)]


CONVENTION = Convention(
    LITELLM,
    read,
    history=input_history,
    user_input=user_input,
    content_keys=("llm.openai.",),
    read_gate=Gate(keys=(CALL_ID,), scopes=(SCOPE,)),
    history_gate=Gate(scopes=(SCOPE,)),
    input_gate=Gate(scopes=(SCOPE,)),
)

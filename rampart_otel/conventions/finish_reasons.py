"""Finish reasons of every provider and framework, in one table.

A model span's finish reason is the only evidence of what an uncaptured output held, so
it is read strictly: ``TOOLS`` when the spelling is known to mean "asked for tools",
``NO_TOOLS`` only when it is known to mean the turn ended with a finished answer, and
``UNKNOWN`` for everything else — a new spelling, a truncated or filtered turn (a cut-off
tool request cannot be ruled out), or a reason the provider also gives to tool calls
(Gemini's ``STOP``).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from functools import lru_cache


class ToolRequest(StrEnum):
    TOOLS = "tools"  # the model asked for tools
    NO_TOOLS = "no_tools"  # the model finished its answer and asked for none
    UNKNOWN = "unknown"  # the reason does not say


# Lower-cased spellings. Sources: OpenAI Chat Completions (stop, length, tool_calls,
# content_filter, function_call); GenAI semconv (stop, length, content_filter, tool_call,
# error); Anthropic and Bedrock Converse (end_turn, stop_sequence, tool_use, max_tokens,
# pause_turn, refusal, guardrail_intervened, content_filtered,
# model_context_window_exceeded); Gemini (STOP, MAX_TOKENS, SAFETY, RECITATION, ...,
# MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, TOO_MANY_TOOL_CALLS); Mistral (stop,
# length, model_length, error, tool_calls); Cohere (COMPLETE, STOP_SEQUENCE, MAX_TOKENS,
# TOOL_CALL, ERROR, TIMEOUT); Vercel AI SDK (stop, length, content-filter, tool-calls,
# error, other, unknown; interrupted since AI SDK 7); OpenAI Responses API statuses as
# OpenInference and OpenLLMetry map them (incomplete, cancelled).
_TOOLS = frozenset(
    {
        "tool_calls",
        "tool_call",
        "tool-calls",
        "tool-call",
        "toolcalls",
        "function_call",
        "function_calls",
        "tool_use",
        "malformed_function_call",
        "unexpected_tool_call",
        "too_many_tool_calls",
    }
)
_STOP = frozenset({"stop", "end_turn", "stop_sequence", "complete", "eos", "end"})
# Known, but they do not say whether a tool request was cut off or hidden.
_INCONCLUSIVE = frozenset(
    {
        "length",
        "max_tokens",
        "model_length",
        "content_filter",
        "content-filter",
        "content_filtered",
        "safety",
        "recitation",
        "blocklist",
        "prohibited_content",
        "spii",
        "image_safety",
        "language",
        "refusal",
        "guardrail_intervened",
        "pause_turn",
        "model_context_window_exceeded",
        "error",
        "error_toxic",
        "error_limit",
        "timeout",
        "user_cancel",
        "other",
        "unknown",
        "interrupted",
        "finish_reason_unspecified",
        "incomplete",
        "cancelled",
    }
)
# Providers whose "stop" also ends a turn that asked for tools. Google ADK's model spans
# (read with provider "gcp.vertex.agent") carry Gemini's reasons whatever the model.
_STOP_WITH_TOOLS_PROVIDERS = ("gemini", "vertex", "google", "gcp")
# Instrumentations (scope names) whose finish reason is an OpenAI Responses API response's
# status mapped to a reason (completed → "stop", whatever the output holds): their "stop"
# says the response completed, not that it asked for no tool.
STATUS_AS_REASON_SOURCES = frozenset({"openinference.instrumentation.openai_agents"})
# The scope name a trace store that does not keep the instrumentation scope gives its spans
# (receivers/stores): "scope not kept by Phoenix". The scope could have been one of the
# above, so a "stop" from such a span says nothing about tools either.
SCOPE_NOT_KEPT = "scope not kept by "


def scope_not_kept(store: str) -> str:
    """The scope name of spans read from ``store``, which did not keep theirs."""
    return SCOPE_NOT_KEPT + store


def classify(reason: str, provider: str | None = None, source: str | None = None) -> ToolRequest:
    """What one finish reason says about tool requests; ``provider`` as the span names it,
    ``source`` the instrumentation scope that wrote it."""
    key = reason.strip().lower()
    if key.startswith("finishreason."):  # an SDK enum's str(): "FinishReason.STOP"
        key = key[len("finishreason.") :]
    if key in _TOOLS:
        return ToolRequest.TOOLS
    if key in _STOP:
        if key == "stop" and (
            (provider and any(p in provider.lower() for p in _STOP_WITH_TOOLS_PROVIDERS))
            or source in STATUS_AS_REASON_SOURCES
            or (source or "").startswith(SCOPE_NOT_KEPT)
        ):
            return ToolRequest.UNKNOWN
        return ToolRequest.NO_TOOLS
    return ToolRequest.UNKNOWN


def known(reason: str) -> bool:
    """Whether the spelling is in the table at all (for "not understood" wording)."""
    key = reason.strip().lower().removeprefix("finishreason.")
    return key in _TOOLS or key in _STOP or key in _INCONCLUSIVE


def combine(
    reasons: Iterable[str], provider: str | None = None, source: str | None = None
) -> ToolRequest:
    """Several reasons of one model span: any tool reason wins; else all must say none."""
    plain = (provider is None or type(provider) is str) and (source is None or type(source) is str)
    found = [
        _classified(reason, provider, source)
        if plain and type(reason) is str
        else classify(reason, provider, source)
        for reason in reasons
    ]
    if not found:
        return ToolRequest.UNKNOWN
    if ToolRequest.TOOLS in found:
        return ToolRequest.TOOLS
    if all(item is ToolRequest.NO_TOOLS for item in found):
        return ToolRequest.NO_TOOLS
    return ToolRequest.UNKNOWN


# ``classify``'s answers by (reason, provider, source): a model span's tool request is read
# from its finish reasons wherever a job asks (``ModelOutput.tool_request``), and runs repeat
# a handful of spellings. Bounded: the reasons are trace data.
_classified = lru_cache(maxsize=1024)(classify)

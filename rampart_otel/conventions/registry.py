"""Every convention family, in the order their readings are merged.

GenAI semantic conventions first (after the Anthropic SDK's own keys: its tool results in
GenAI message history are content blocks, and its reading of them must be kept over the
generic one), then OpenInference and OpenLLMetry, then MCP and the general side-effect
conventions. Frameworks that write their own spans (Google ADK, Claude Code, Strands,
OpenLIT's traced functions) own their instrumentation scope: a span of that scope is read
by its family and the side-effect conventions only. Adding a family is adding its module
here, with its recorded samples and tests; ``processors.normalize`` does not change.
"""

from __future__ import annotations

from rampart_otel.conventions import (
    Convention,
    KnownContent,
    adk,
    anthropic,
    claude_code,
    content_hint,
    finish_reasons,
    genai,
    langfuse,
    litellm,
    mastra,
    mcp,
    mlflow,
    openinference,
    openinference_dialects,
    openlit,
    openllmetry,
    strands,
    vercel_ai,
)
from rampart_otel.conventions import side_effects as effects
from rampart_otel.model import Span

CONVENTIONS: tuple[Convention, ...] = (
    anthropic.CONVENTION,
    genai.CONVENTION,
    openinference.CONVENTION,
    openllmetry.CONVENTION,
    mcp.CONVENTION,
    vercel_ai.CONVENTION,
    litellm.CONVENTION,
    effects.CONVENTION,
    adk.CONVENTION,
    claude_code.CONVENTION,
    strands.CONVENTION,
    openlit.CONVENTION,
    openlit.TRACES,
    langfuse.CONVENTION,
    mlflow.CONVENTION,
    mastra.CONVENTION,
)

# Conventions that read every span, and those that read the spans of one scope only.
GENERAL: tuple[Convention, ...] = tuple(c for c in CONVENTIONS if not c.scopes)
BY_SCOPE: dict[str, tuple[Convention, ...]] = {
    scope: (owner, effects.CONVENTION) for owner in CONVENTIONS for scope in owner.scopes
}

# Every instrumentation scope some reading depends on: owned scopes, OpenInference's
# dialects, the scopes whose finish reasons or spans read their own way. A span whose form
# lost its scope (``Scope.lost_by``) is read as if it had each of these too; where a
# reading differs, the span cannot be read for sure.
SCOPE_DEPENDENT: tuple[str, ...] = tuple(
    dict.fromkeys(
        (
            *BY_SCOPE,
            *openinference_dialects.DIALECTS,
            *sorted(finish_reasons.STATUS_AS_REASON_SOURCES),
            anthropic.SCOPE,
            mcp.OPENLLMETRY_SCOPE,
        )
    )
)

KNOWN_CONTENT = KnownContent(
    (key for convention in CONVENTIONS for key in convention.content_keys),
    (name for convention in CONVENTIONS for name in convention.content_events),
)


def unread_content(span: Span) -> str | None:
    """Content on ``span`` in a place no registered convention reads (see ``content_hint``)."""
    return content_hint(span, KNOWN_CONTENT)


# The setting that turns an instrumentation's content capture on, by instrumentation scope
# (prefix): named where content is missing. The GenAI utility's instrumentations (openai-v2
# 2.x) ignore the older value ``true`` under the latest conventions, and ``EVENT_ONLY``
# writes content to log events only, never to the spans a trace holds.
_OTEL_GENAI = (
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY (or SPAN_AND_EVENT) with "
    "OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental"
)
CONTENT_SETTINGS: tuple[tuple[str, str], ...] = (
    ("opentelemetry.util.genai", _OTEL_GENAI),
    ("opentelemetry.instrumentation.openai_v2", _OTEL_GENAI),
    ("opentelemetry.instrumentation.openai.v1", "TRACELOOP_TRACE_CONTENT=true"),
    ("litellm", "litellm.turn_off_message_logging = False"),
)


def content_setting(span: Span) -> str | None:
    """The setting that records content for ``span``'s instrumentation, when known."""
    scope = span.scope.name
    for prefix, setting in CONTENT_SETTINGS:
        if scope == prefix or scope.startswith(prefix + "."):
            return setting
    return None

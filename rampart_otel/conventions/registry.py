"""Every convention family, in the order their readings are merged.

GenAI semantic conventions first (after the Anthropic SDK's own keys: its tool results in
GenAI message history are content blocks, and its reading of them must be kept over the
generic one), then OpenInference and OpenLLMetry, then MCP and the general side-effect
conventions. Frameworks that write their own spans (Google ADK, Claude Code, Strands,
OpenLIT's traced functions) own their instrumentation scope: a span of that scope is read
by its family and the side-effect conventions only. Adding a family is adding its module
here, with its recorded samples and tests; ``normalize`` does not change.
"""

from __future__ import annotations

from rampart_otel.conventions import (
    a2a,
    adk,
    anthropic,
    claude_code,
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
    watch,
)
from rampart_otel.conventions import side_effects as effects
from rampart_otel.conventions.interface import Convention
from rampart_otel.conventions.unread import KnownContent, content_hint
from rampart_otel.model import Span

CONVENTIONS: tuple[Convention, ...] = (
    anthropic.CONVENTION,
    genai.CONVENTION,
    openinference.CONVENTION,
    openllmetry.CONVENTION,
    mcp.CONVENTION,
    a2a.CONVENTION,
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
    watch.CONVENTION,
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

"""Every convention family, in the order their readings are merged.

GenAI semantic conventions first (after the Anthropic SDK's own keys: its tool results in
GenAI message history are content blocks, and its reading of them must be kept over the
generic one), then OpenInference and OpenLLMetry, then MCP and the general side-effect
conventions. Adding a family is adding its module here, with its recorded samples and
tests; ``processors.normalize`` does not change.
"""

from __future__ import annotations

from rampart_otel.conventions import (
    Convention,
    anthropic,
    content_hint,
    genai,
    mcp,
    openinference,
    openllmetry,
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
    effects.CONVENTION,
)

CONTENT_KEYS = tuple(key for convention in CONVENTIONS for key in convention.content_keys)
CONTENT_EVENTS = tuple(name for convention in CONVENTIONS for name in convention.content_events)


def unread_content(span: Span) -> str | None:
    """Content on ``span`` in a place no registered convention reads (see ``content_hint``)."""
    return content_hint(span, CONTENT_KEYS, CONTENT_EVENTS)

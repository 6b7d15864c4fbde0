"""Telemetry conventions → what an agent did, one module per convention family.

Each family module reads one ``Span`` at a time and says what it shows in a
``SpanReport`` (model output, a tool execution, side effects, an agent's answer), behind
one small interface (``interface``: ``Convention``, its ``Gate``s and what it reports),
registered in ``registry``. A convention only says what one span shows; deciding that two
reports are the same call is ``normalize``'s job. The readers share ``helpers``
(values decoded) and ``labels`` (their names); ``unread`` says where a span holds what no
convention reads.

This module only re-exports those public names: ``from rampart_otel.conventions import X``.
"""

from __future__ import annotations

from rampart_otel.conventions.helpers import (
    REDACTED_MARKERS,
    as_str,
    as_str_list,
    indexed,
    load_json,
    parse_arguments,
    parse_result,
    parse_stringified_result,
    redacted,
    skipped_indices,
)
from rampart_otel.conventions.interface import (
    Convention,
    Gate,
    History,
    ModelOutput,
    SideEffectDetails,
    SpanReport,
    ToolReport,
    UserInput,
)
from rampart_otel.conventions.labels import (
    ADK,
    ANTHROPIC,
    CLAUDE_CODE,
    GEN_AI,
    LANGFUSE,
    LITELLM,
    MASTRA,
    MCP,
    MLFLOW,
    OPENINFERENCE,
    OPENLIT,
    OPENLLMETRY,
    SEMCONV,
    STRANDS,
    VERCEL_AI,
)
from rampart_otel.conventions.unread import (
    AGENT_FAMILY_PREFIXES,
    EXCEPTION_EVENT,
    OBSERVATION_SEGMENT,
    KnownContent,
    agent_family,
    content_hint,
    redaction_hint,
)

__all__ = [
    "ADK",
    "AGENT_FAMILY_PREFIXES",
    "ANTHROPIC",
    "CLAUDE_CODE",
    "EXCEPTION_EVENT",
    "GEN_AI",
    "LANGFUSE",
    "LITELLM",
    "MASTRA",
    "MCP",
    "MLFLOW",
    "OBSERVATION_SEGMENT",
    "OPENINFERENCE",
    "OPENLIT",
    "OPENLLMETRY",
    "REDACTED_MARKERS",
    "SEMCONV",
    "STRANDS",
    "VERCEL_AI",
    "Convention",
    "Gate",
    "History",
    "KnownContent",
    "ModelOutput",
    "SideEffectDetails",
    "SpanReport",
    "ToolReport",
    "UserInput",
    "agent_family",
    "as_str",
    "as_str_list",
    "content_hint",
    "indexed",
    "load_json",
    "parse_arguments",
    "parse_result",
    "parse_stringified_result",
    "redacted",
    "redaction_hint",
    "skipped_indices",
]

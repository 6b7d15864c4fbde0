"""What a span shows of content it does not hold: what its form dropped, and where content
that is missing left a trace of itself (a redaction marker, attributes cut short, content
in a form not read).

Classification attaches the notes to a span's ``not_understood`` (kept short: findings show
80 characters of a note); coverage decides with ``missing_content`` and ``wording`` quotes
what it found.
"""

from __future__ import annotations

from typing import Any

from rampart_otel.conventions import redaction_hint
from rampart_otel.conventions.registry import unread_content
from rampart_otel.model import Span
from rampart_otel.render import safe_text

# What left a span's scope unknown when its form carries scopes: the span's own data.
UNNAMED_SCOPE = "OTLP data (an empty scope name)"


def scope_lost(form: str, family: str) -> str:
    """A span whose trace form dropped its instrumentation scope, where the scope decides
    how the span is read."""
    return f"no scope in the {form}; it reads otherwise as {family}"


def cut_by_zipkin(keys: tuple[str, ...]) -> str:
    """Attributes a Zipkin exporter may have cut short at its tag limit."""
    shown = ", ".join(safe_text(k, 40) for k in keys[:2]) + (" ..." if len(keys) > 2 else "")
    return f"Zipkin tags cut at a length limit? {shown}"


# Words of the keys that hold the agent's answer, so a redaction marker found is the answer's.
ANSWER_KEYS = ("output", "choice", "completion", "response")


def missing_content(
    spans: list[Span], prefer: tuple[str, ...] = ()
) -> tuple[str, Span, Any] | None:
    """Where content that is missing shows a trace of itself, as (how, span, detail): a
    redaction marker (``redacted``; keys with ``prefer`` words first), attributes a Zipkin
    exporter cut (``cut``), content in a form not understood (``unread``); None when none of
    ``spans`` holds any (not recorded)."""
    for words in (prefer, ()) if prefer else ((),):
        for span in spans:
            marker = redaction_hint(span, words)
            if marker is not None and (not words or any(w in marker for w in words)):
                return "redacted", span, marker
    for span in spans:
        if span.cut_keys:
            return "cut", span, span.cut_keys
    for span in spans:
        hint = unread_content(span)
        if hint is not None:
            return "unread", span, hint
    return None

"""What a span shows that no convention reads, in the words of a coverage reason: content
in a place no convention reads (``content_hint``), a redaction marker in place of content
(``redaction_hint``), keys of an agent telemetry family no convention recognizes
(``agent_family``). A span of these is "present but not understood", never "content
capture off".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from rampart_otel.conventions.helpers import REDACTED_MARKERS
from rampart_otel.lazy_regex import LazyPattern
from rampart_otel.model import Span

# Attribute-key prefixes of agent telemetry families; a span carrying one that no convention
# recognizes is a span not understood (it may be a model call or tool run we cannot read).
AGENT_FAMILY_PREFIXES: tuple[tuple[str, str], ...] = (
    ("gen_ai.", "gen_ai"),
    ("openinference.", "OpenInference"),
    ("llm.", "llm.*"),
    ("traceloop.", "OpenLLMetry"),
    ("mcp.", "MCP"),
    ("ai.", "Vercel AI SDK"),
    ("gcp.vertex.agent.", "Google ADK"),
    ("claude_code.", "Claude Code"),
    ("crewai.", "CrewAI"),
    ("langsmith.", "LangSmith"),
    ("autogen.", "AutoGen"),
    ("langfuse.observation.", "Langfuse"),
    ("mlflow.span", "MLflow"),
    ("mastra.", "Mastra"),
    ("haystack.", "Haystack"),
)


# A trace store's observation record (Langfuse's ``langfuse.observation.*``, and the like
# of other stores): GenAI-looking data wherever its prefix.
OBSERVATION_SEGMENT = ".observation."


def agent_family(span: Span) -> str | None:
    """The agent-telemetry family a span's attributes belong to, if any (first match)."""
    for key in span.attributes:
        for prefix, family in AGENT_FAMILY_PREFIXES:
            if key.startswith(prefix):
                return family
    for key in span.attributes:
        if key.startswith(OBSERVATION_SEGMENT[1:]) or OBSERVATION_SEGMENT in key:
            return "trace-store observation"
    return None


# The last segment of an attribute key that holds content (messages, arguments, results...).
_CONTENT_SEGMENT = LazyPattern(
    r"(?:^|[._])(messages?|prompts?|completions?|contents?|arguments|args|input|output|result|"
    r"results|response|text|choices?|parts|llm_request|llm_response|tool_call_args|"
    r"tool_response|body)$",
    re.IGNORECASE,
)
_NO_CONTENT = (None, "", "[]", "{}", *REDACTED_MARKERS)
_METADATA = LazyPattern(r"token|usage", re.IGNORECASE)  # llm.token_count.prompt is a number
EXCEPTION_EVENT = "exception"  # OTel's record of an error: its message is not content


class KnownContent:
    """The attribute keys (exact, or prefixes ending in ".") and events conventions read."""

    __slots__ = ("_unread", "events", "exact", "prefixes")

    def __init__(self, keys: Iterable[str], events: Iterable[str]) -> None:
        keys = tuple(keys)
        self.exact = frozenset(key for key in keys if not key.endswith("."))
        self.prefixes = tuple(key for key in keys if key.endswith("."))
        self.events = frozenset(events)
        # Key → whether it names content no convention reads (``unread_key``), by key:
        # spans repeat a few hundred keys, and each is matched against every prefix.
        self._unread: dict[str, bool] = {}

    def unread_key(self, key: str) -> bool:
        """Whether attribute ``key`` names content (``_names_content``) that no convention
        reads (neither a key nor under a prefix of theirs)."""
        found = self._unread.get(key)
        if found is None:
            found = not (key in self.exact or key.startswith(self.prefixes)) and _names_content(key)
            if len(self._unread) >= _CONTENT_KEYS_CACHED:
                self._unread.clear()  # keys are trace data: never let them grow memory unbounded
            self._unread[key] = found
        return found


def content_hint(span: Span, known: KnownContent) -> str | None:
    """Where ``span`` holds content that no convention reads, if it does: the wording for a
    reason ("attribute 'ai.toolCall.args'"); None when every content-like key is known."""
    events, unread = known.events, known._unread
    for key, value in span.attributes.items():
        found = unread.get(key)
        if found is None:
            found = known.unread_key(key)
        if found and _is_content(value):
            return f"attribute {key!r}"
    for event in span.events:
        if event.name in events or event.name == EXCEPTION_EVENT:
            continue  # a known event: its reader says itself what it could not read
        for key, value in event.attributes.items():
            if _holds_content(key, value):
                return f"event {event.name!r} attribute {key!r}"
    return None


def redaction_hint(span: Span, prefer: tuple[str, ...] = ()) -> str | None:
    """Where ``span`` holds a redaction marker (the wording for a reason), if it does: a key
    naming one of ``prefer`` ("output", "result"...) first, so the reason names the
    content it is about."""
    found: list[tuple[str, str]] = []
    markers = REDACTED_MARKERS
    for key, value in span.attributes.items():
        if isinstance(value, str) and value in markers:  # redacted(), inline: every value
            found.append((key, f"{value!r} in attribute {key!r}"))
    for event in span.events:
        for key, value in event.attributes.items():
            if isinstance(value, str) and value in markers:
                found.append(
                    (f"{event.name} {key}", f"{value!r} in event {event.name!r} attribute {key!r}")
                )
    for words in (prefer, ()):
        for where, wording in found:
            if not words or any(word in where for word in words):
                return wording
    return None


def _holds_content(key: str, value: Any) -> bool:
    return _is_content(value) and _names_content(key)


def _is_content(value: Any) -> bool:
    """A value that is content: not absent, empty or a redaction marker."""
    return not (
        value is None or (isinstance(value, (str, list, dict, bytes)) and value in _NO_CONTENT)
    )


def _names_content(key: str) -> bool:
    """Whether ``key`` names content (its last segment says so, and not its metadata)."""
    named = _content_keys.get(key)
    if named is None:
        named = _CONTENT_SEGMENT.search(key) is not None and _METADATA.search(key) is None
        if len(_content_keys) >= _CONTENT_KEYS_CACHED:
            _content_keys.clear()  # keys are trace data: never let them grow memory unbounded
        _content_keys[key] = named
    return named


# Whether a key names content, by key: spans repeat a few hundred keys millions of times.
_content_keys: dict[str, bool] = {}
_CONTENT_KEYS_CACHED = 4096

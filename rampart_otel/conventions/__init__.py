"""Telemetry conventions → what an agent did, one module per convention family.

Each family module reads one ``Span`` at a time and says what it shows in a
``SpanReport`` (model output, a tool execution, side effects, an agent's answer), behind
one small interface, ``Convention``, registered in ``conventions.registry``. A convention
only says what one span shows; deciding that two reports are the same call is
``processors.normalize``'s job.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from rampart_otel.codecs.otlp_json import parse_json
from rampart_otel.conventions.finish_reasons import ToolRequest, combine
from rampart_otel.model import Span

# Convention labels, as they appear in ToolCall.conventions and SideEffect.convention.
GEN_AI = "gen_ai"
OPENINFERENCE = "openinference"
OPENLLMETRY = "openllmetry"
MCP = "mcp"
VERCEL_AI = "vercel_ai"
ADK = "adk"
STRANDS = "strands"
OPENLIT = "openlit"
CLAUDE_CODE = "claude_code"


@dataclass(slots=True)
class ToolReport:
    """One convention's account of one tool call, as one span shows it."""

    name: str
    call_id: str | None
    arguments: dict[str, Any] | str | None
    arguments_captured: bool
    result: Any
    result_captured: bool
    executed: bool  # False: a model asked for it; True: the span ran it
    error: bool
    span: Span
    convention: str
    # The framework's own tool for delivering the agent's answer (smolagents' final_answer):
    # its span shows tool runs are traced, but it is the answer, not a tool call.
    answer: bool = False
    # A traced function (not a tool by any convention of its own): it is the execution of a
    # call only when a model asked for a tool of its name before it; otherwise no call.
    candidate: bool = False
    # Read from a span's own record of the conversation: the message positions after which
    # the call was asked for and by which its result came back (``ToolCall.steps``).
    steps: tuple[int, int] | None = None
    # Where the framework qualifies a function's own name (Semantic Kernel's
    # ``<plugin>-<function>``): the qualifier and the function's own name (``ToolCall``'s).
    namespace: str | None = None
    local_name: str | None = None

    @classmethod
    def requested(
        cls, span: Span, convention: str, name: Any, call_id: Any, raw: Any, captured: bool
    ) -> ToolReport:
        """A call a model asked for; ``raw`` arguments are parsed only when captured."""
        return cls(
            name=as_str(name) or "",
            call_id=as_str(call_id) or None,
            arguments=parse_arguments(raw) if captured else None,
            arguments_captured=captured,
            result=None,
            result_captured=False,
            executed=False,
            error=False,
            span=span,
            convention=convention,
        )


@dataclass(slots=True)
class ModelOutput:
    """What one model-inference span says the model produced.

    ``readable`` means the trace lists the output's parts, so the tool calls the model asked
    for are all known (a readable output with no tool call asked for none). Text may still
    be missing when content capture is off (parts recorded without their content).
    """

    readable: bool
    text: str | None = None  # assistant text; None when not captured
    text_captured: bool = False
    requests: list[ToolReport] = field(default_factory=list)
    finish_reasons: list[str] = field(default_factory=list)
    convention: str = ""
    provider: str | None = None  # as the span names it: "openai", "gcp.gemini", ...
    source: str | None = None  # the instrumentation scope that wrote it, when it matters
    # Content present on the span in a form not read: "part type 'x' in gen_ai.output.messages".
    not_understood: list[str] = field(default_factory=list)
    # The provider's id of the response (``gen_ai.response.id``): two spans of one trace with
    # the same one are two instrumentations' layers of one model call.
    response_id: str | None = None

    @property
    def tool_request(self) -> ToolRequest:
        """What the finish reasons say about tool requests (``finish_reasons.classify``)."""
        return combine(self.finish_reasons, self.provider, self.source)


# kind, details, convention, and the details derived: key → the attribute(s) read for it.
SideEffectDetails = tuple[str, dict[str, Any], str, dict[str, str]]


@dataclass(slots=True)
class SpanReport:
    """What one convention reads on one span; a span no convention reports is generic.

    A report with no role and nothing in it still says "recognized": a chain or workflow
    span of a known family, which feeds no channel. ``not_understood`` names content or
    markers of the family that the reader could not make sense of.
    """

    convention: str
    model: bool = False
    agent: bool = False
    output: ModelOutput | None = None  # model spans (or spans holding model output)
    execution: ToolReport | None = None
    effects: list[SideEffectDetails] = field(default_factory=list)
    answer: str | None = None  # the agent's answer, on an agent span, when captured
    not_understood: list[str] = field(default_factory=list)
    # Calls a framework span hands to its tools (LangGraph's ToolNode input), as requested
    # calls: they name and identify what the tool spans under it run. Not a model output.
    dispatched: list[ToolReport] = field(default_factory=list)
    # The caller's span, which a framework wrote a model call's attributes onto (LiteLLM's
    # callback under an active span): holding that call's own span, it is no model call.
    caller: bool = False
    # The agent a hand-off moves the conversation to (``conventions.handoffs``), on the span
    # that records it: an agent boundary, whose receiving agent's spans follow; not a tool
    # call of the user's (its ``execution``, where the span runs the framework's hand-off
    # tool, is the framework's own).
    handoff: str | None = None


class History(NamedTuple):
    """What a model call's input history shows of earlier tool calls, by call id."""

    arguments: dict[str, Any]
    results: dict[str, Any]
    names: dict[str, str] = {}


@dataclass(slots=True)
class UserInput:
    """What one span shows of the user's messages: on a model span, the user-role messages
    of its input; on an agent span, the caller's input. System and developer prompts and
    tool results sent back to the model are not the user's input.

    A reader returns None when the span records no input messages at all.
    """

    texts: list[str] = field(default_factory=list)
    # User messages recorded without their content: where, in words ("parts without
    # content in gen_ai.input.messages"). The instrumentation's own sign of capture off.
    withheld: list[str] = field(default_factory=list)
    # Input content present in a form not read ("part type 'image' in a user message").
    not_understood: list[str] = field(default_factory=list)

    def add(self, text: Any, where: str) -> None:
        """One user message's (or part's) content; None or a redaction marker: withheld."""
        if text is None or redacted(text):
            if where not in self.withheld:
                self.withheld.append(where)
        elif isinstance(text, str):
            self.texts.append(text)
        else:
            self.not_understood.append(f"content of type {type(text).__name__} in {where}")


@dataclass(frozen=True, slots=True)
class Gate:
    """Which spans a reader can say anything of, by cheap probes: those holding one of
    ``keys`` (attributes), of one of ``scopes`` (or a scope under one: ``scope.``), or,
    with ``events``, with any event. A reader behind a gate reports nothing (``None``, an
    empty ``History``) on any other span, so ``processors.span_views`` does not call it
    there. Declare a gate next to its reader and keep it a superset of what the reader
    probes: a key it forgets silently drops what the reader would have read."""

    keys: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()
    events: bool = False


@dataclass(frozen=True, slots=True)
class Convention:
    """One family's reader: ``read`` is called on every span, so it probes keys cheaply."""

    name: str
    read: Callable[[Span], SpanReport | None]
    # Call id → arguments / results sent back to the model in a model span's input.
    history: Callable[[Span], History] | None = None
    # The user's messages a model span was sent, or the caller's input an agent span shows.
    user_input: Callable[[Span], UserInput | None] | None = None
    # Where the family records content: attribute keys (a trailing "." is a prefix) and
    # event names. Content elsewhere is "present but not understood" (``content_hint``).
    content_keys: tuple[str, ...] = ()
    content_events: tuple[str, ...] = ()
    # Instrumentation scopes of a framework that writes its spans itself: their spans are
    # read by this family (and the side-effect conventions) only, since the framework's
    # gen_ai.* keys mean what it says they mean there (ids, wrappers, envelopes).
    scopes: tuple[str, ...] = ()
    # The spans ``read``, ``history`` and ``user_input`` can report on (None: any span).
    read_gate: Gate | None = None
    history_gate: Gate | None = None
    input_gate: Gate | None = None


def load_json(value: Any) -> Any:
    """A JSON-encoded attribute decoded, or the value itself when it is not JSON text."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("{", "[", '"') or text in ("null", "true", "false"):
            try:
                return parse_json(text)
            except (ValueError, RecursionError):
                return value
    return value


def parse_arguments(value: Any) -> dict[str, Any] | str | None:
    """Tool arguments as a dict; JSON text is decoded, anything unparseable is kept raw."""
    if value is None:
        return None
    if isinstance(value, dict):
        return value
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("utf-8", "replace")
    if isinstance(value, str):
        if not value.strip():
            return {}
        decoded = load_json(value)
        if isinstance(decoded, dict):
            return decoded
        if isinstance(decoded, str) and decoded is not value:  # double-encoded JSON
            return parse_arguments(decoded)
        return value
    return json.dumps(value, default=str)  # a list or scalar: kept, as its JSON text


def parse_result(value: Any) -> Any:
    """A tool result; JSON text is decoded to its value, anything else is kept as is."""
    return load_json(value)


def parse_stringified_result(value: Any) -> Any:
    """A result recorded as the JSON text of the returned value (``JSON.stringify``): a
    string returned is a JSON string literal, whose text is then read like any raw result."""
    decoded = load_json(value)
    if isinstance(decoded, str) and decoded != value:
        return load_json(decoded)
    return decoded


def as_str(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, (dict, list, bytes)):
        return None
    return str(value)


def as_str_list(value: Any) -> list[str]:
    """A string-array attribute, tolerating a single string or JSON-encoded array."""
    if isinstance(value, str):
        decoded = load_json(value)
        if isinstance(decoded, list):
            return [str(item) for item in decoded if item is not None]
        return [value]
    if isinstance(value, (list, tuple)):
        return [str(item) for item in value if item is not None]
    return []


def skipped_indices(groups: dict[int, Any]) -> list[int]:
    """The indices below the highest of ``indexed``'s groups that hold no key: items lost
    from a flattened list (a message whose keys were all dropped)."""
    if not groups:
        return []
    top = max(groups)
    if top >= len(groups) + 1000:  # a sender's stray index, not a list: name a few
        return [i for i in range(1000) if i not in groups][:3]
    return [i for i in range(top) if i not in groups]


def indexed(attributes: dict[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    """Flattened ``prefix{i}.rest`` keys grouped by ``i`` (OpenInference, OpenLLMetry).

    A key whose ``i`` is not a decimal number ``int`` reads is no index (keys are the
    sender's). Each key is parsed once per prefix and remembered (``_index_keys``).
    """
    groups: dict[int, dict[str, Any]] = {}
    known = _index_keys.get(prefix)
    if known is None:
        if len(_index_keys) >= _INDEX_PREFIXES_CACHED:
            _index_keys.clear()
        known = _index_keys[prefix] = {}
    seen = known.get
    for key, value in attributes.items():
        where = seen(key, _UNSEEN)
        if where is _UNSEEN:
            where = _index_key(key, prefix)
            if len(known) >= _INDEX_KEYS_CACHED:
                known.clear()  # keys are trace data: never let them grow memory unbounded
            known[key] = where
        if where is None:
            continue
        index, rest = where
        group = groups.get(index)
        if group is None:
            groups[index] = {rest: value}
        else:
            group[rest] = value
    return groups


def _index_key(key: str, prefix: str) -> tuple[int, str] | None:
    """``(i, rest)`` of a ``prefix{i}.rest`` key; None for any other key."""
    if not key.startswith(prefix):
        return None
    index, dot, rest = key[len(prefix) :].partition(".")
    if not dot or not index.isdecimal():
        return None
    try:
        return int(index), rest
    except ValueError:  # more digits than int() reads
        return None


# prefix → key → what ``indexed`` reads of it: spans repeat a few hundred flattened keys.
_index_keys: dict[str, dict[str, tuple[int, str] | None]] = {}
_INDEX_PREFIXES_CACHED = 64
_INDEX_KEYS_CACHED = 4096
_UNSEEN: Any = object()


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
_CONTENT_SEGMENT = re.compile(
    r"(?:^|[._])(messages?|prompts?|completions?|contents?|arguments|args|input|output|result|"
    r"results|response|text|choices?|parts|llm_request|llm_response|tool_call_args|"
    r"tool_response|body)$",
    re.IGNORECASE,
)
# What instrumentations write in place of content they withhold: OpenInference's hide_*
# settings, Strands' redaction (``gen_ai_unredacted_attributes``).
REDACTED_MARKERS = frozenset({"__REDACTED__", "[REDACTED]"})
_NO_CONTENT = (None, "", "[]", "{}", *REDACTED_MARKERS)
_METADATA = re.compile(r"token|usage", re.IGNORECASE)  # llm.token_count.prompt is a number
EXCEPTION_EVENT = "exception"  # OTel's record of an error: its message is not content


class KnownContent:
    """The attribute keys (exact, or prefixes ending in ".") and events conventions read."""

    __slots__ = ("events", "exact", "prefixes")

    def __init__(self, keys: Iterable[str], events: Iterable[str]) -> None:
        keys = tuple(keys)
        self.exact = frozenset(key for key in keys if not key.endswith("."))
        self.prefixes = tuple(key for key in keys if key.endswith("."))
        self.events = frozenset(events)


def content_hint(span: Span, known: KnownContent) -> str | None:
    """Where ``span`` holds content that no convention reads, if it does: the wording for a
    reason ("attribute 'ai.toolCall.args'"); None when every content-like key is known."""
    exact, prefixes, events = known.exact, known.prefixes, known.events
    for key, value in span.attributes.items():
        if key in exact or key.startswith(prefixes):
            continue
        if _holds_content(key, value):
            return f"attribute {key!r}"
    for event in span.events:
        if event.name in events or event.name == EXCEPTION_EVENT:
            continue  # a known event: its reader says itself what it could not read
        for key, value in event.attributes.items():
            if _holds_content(key, value):
                return f"event {event.name!r} attribute {key!r}"
    return None


def redacted(value: Any) -> bool:
    """Whether an attribute holds a redaction marker instead of its content."""
    return isinstance(value, str) and value in REDACTED_MARKERS


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
    if value is None or (isinstance(value, (str, list, dict, bytes)) and value in _NO_CONTENT):
        return False
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

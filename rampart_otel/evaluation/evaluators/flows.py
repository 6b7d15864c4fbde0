"""``flows``: a value from a source (a tool's result, the user's input) reaches a later sink
(a tool call's arguments, a side effect's details).

What "a value" is, precisely (docs/policy.md has the same rule with examples). From every
string leaf of the source's value (the text itself for a text value; numbers by their text):
- each URL (``scheme://…``) and its host; each e-mail address and its domain;
- each bare host name (dotted labels ending in 2-63 letters), except names ending in a
  common file extension (``report.pdf``, ``index.js``);
- the whole leaf, when it is at least ``min_length`` characters long (stripped);
- each token (a run without whitespace, outer punctuation stripped) of at least
  ``min_length`` characters with both a letter and a digit in it (keys, ids, codes).
A value reaches the sink when it occurs in a string leaf of the sink's value: URLs, hosts
and addresses case-insensitively and on name boundaries (``evil.com`` is found in
``https://api.evil.com/x``, not in ``notevil.com`` or ``evil.com.example.org``), the others
exactly. The source must have happened before the sink (``before``'s order).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import re2

from rampart_otel.evaluation.evaluators.algebra import Evaluator
from rampart_otel.evaluation.evaluators.before import PAIRS_SHOWN, absent, event_operand
from rampart_otel.evaluation.evaluators.events import (
    EventEvaluator,
    Occurrence,
    SpanIndex,
    happened_before,
    order_evidence,
)
from rampart_otel.evaluation.evaluators.input_contains import InputContains
from rampart_otel.evaluation.evaluators.settle import (
    EVIDENCE_LIMIT,
    described_target,
    settle,
    span_list,
)
from rampart_otel.evaluation.evaluators.side_effect import SideEffectOccurred
from rampart_otel.evaluation.evaluators.tool_called import ToolCalled
from rampart_otel.evaluation.evaluators.tool_result import ToolResult
from rampart_otel.evaluation.matchers import MISSING
from rampart_otel.evaluation.outcome import EvalResult, Evidence
from rampart_otel.model import AgentRun
from rampart_otel.render import safe_text

DEFAULT_MIN_LENGTH = 8
MIN_LENGTH_FLOOR = 4  # shorter values are found everywhere by chance
MAX_VALUES = 10_000  # values followed per source match; past it the pair is unknown
MAX_DEPTH = 32  # nesting followed into a structured value

_URL = re2.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s\"'<>()\[\]{}`]+")
_EMAIL = re2.compile(r"(?i)[a-z0-9._%+-]+@((?:[a-z0-9-]+\.)+[a-z]{2,63})\b")
_HOST = re2.compile(r"(?i)\b(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}\b")
_FILE_EXTENSIONS = frozenset(
    {
        *("js", "ts", "py", "rb", "go", "rs", "java", "cpp", "php", "sh", "exe"),
        *("md", "txt", "pdf", "json", "html", "htm", "css", "csv", "xml", "yaml", "yml", "log"),
        *("png", "jpg", "jpeg", "gif", "svg", "zip", "gz", "tar"),
        *("doc", "docx", "xls", "xlsx", "ppt", "pptx"),
    }
)
_TRAILING = ".,;:!?'\")]}>"
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")

# A followed value: (kind, text); kind "url", "host" and "email" match case-insensitively
# on name boundaries, "value" and "token" exactly.
Value = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Flows(Evaluator):
    """DETECTED when a value of a ``source`` match occurs in a later ``sink`` match.

    NOT_DETECTED when either side is complete with no match, or both are complete and
    every pair is decided: the sink not later, or no value of the source in it.
    A value not captured, a pair the trace cannot order, or more values than are followed
    leaves the pair unknown: UNDETERMINED.
    """

    source: EventEvaluator
    sink: EventEvaluator
    min_length: int = DEFAULT_MIN_LENGTH
    _target: str = field(default="", init=False, repr=False, compare=False)

    @property
    def channels(self) -> tuple[str, ...]:
        keys = (
            self.source.channels
            + self.source.value_channels
            + self.sink.channels
            + self.sink.value_channels
        )
        return tuple(dict.fromkeys(keys))

    def target(self) -> str:
        return f"flow from {described_target(self.source)} to {described_target(self.sink)}"

    def evaluate(self, run: AgentRun) -> EvalResult:
        target = described_target(self)
        sources, sinks = self.source.occurrences(run), self.sink.occurrences(run)
        index = SpanIndex(run)
        hits: list[Evidence] = []
        not_captured: list[str | None] = []
        unrecorded: dict[str, list[str | None]] = {}  # sink field not recorded → spans
        unordered: list[str | None] = []
        too_many: list[str | None] = []
        shown = 0  # pairs in ``hits``
        for source in sources.matches:
            values = followed_values(source.value, self.min_length)
            for sink in sinks.matches:
                order = happened_before(source, sink, index)
                if order is False:
                    continue
                spans = [source.evidence.span_id, sink.evidence.span_id]
                if values is None or sink.value is MISSING:
                    not_captured.extend(spans)
                    continue
                if len(values) > MAX_VALUES:
                    too_many.extend(spans)
                    continue
                reached = first_reaching(values, sink.value)
                if reached is None:
                    for name in sink.unrecorded:  # it may have left where nothing recorded
                        unrecorded.setdefault(name, []).extend(spans)
                    continue
                if order is None:
                    unordered.extend(spans)
                elif shown < PAIRS_SHOWN:
                    shown += 1
                    hits.extend(_flow_evidence(reached, source, sink))
                    recorded = order_evidence(source, sink)
                    if recorded is not None:
                        hits.append(recorded)
        if hits:
            return settle(run, self.channels, target, hits, [])
        for side, found in ((self.source, sources), (self.sink, sinks)):
            empty = absent(run, side, found, target)
            if empty is not None:
                return empty
        unknowns = [*sources.unknown_reasons, *sinks.unknown_reasons]
        for name, spans in unrecorded.items():
            named = list(dict.fromkeys(spans))
            unknowns.append(
                f"{len(spans) // 2} source/sink pair(s) where the sink's {name} is not recorded "
                f"(a value not in what was recorded may have left in it){span_list(named)}"
            )
        for what, spans in (
            ("a value not captured", not_captured),
            ("a value found but the trace cannot order the pair", unordered),
            (f"more than {MAX_VALUES} values in the source", too_many),
        ):
            if spans:
                named = list(dict.fromkeys(spans))
                unknowns.append(
                    f"{len(spans) // 2} source/sink pair(s) with {what}{span_list(named)}"
                )
        return settle(run, self.channels, target, [], unknowns)

    def __repr__(self) -> str:
        extra = "" if self.min_length == DEFAULT_MIN_LENGTH else f", min_length={self.min_length}"
        return f"flows({self.source!r}, {self.sink!r}{extra})"


def _flow_evidence(reached: Value, source: Occurrence, sink: Occurrence) -> list[Evidence]:
    kind, text = reached
    quoted = safe_text(text, 80)
    return [
        Evidence(
            source.evidence.trace_id,
            source.evidence.span_id,
            safe_text(f"{kind} {quoted!r} from {source.evidence.text}", EVIDENCE_LIMIT),
        ),
        Evidence(
            sink.evidence.trace_id,
            sink.evidence.span_id,
            safe_text(f"{kind} {quoted!r} reaches {sink.evidence.text}", EVIDENCE_LIMIT),
        ),
    ]


def followed_values(value: Any, min_length: int) -> list[Value] | None:
    """The values followed out of a source's value (see the module doc); None if missing."""
    if value is MISSING:
        return None
    found: dict[Value, None] = {}
    for leaf in _leaves(value, 0):
        for match in _URL.finditer(leaf):
            url = match.group(0).rstrip(_TRAILING)
            found[("url", url)] = None
            host = _host_of(url)
            if host:
                found[("host", host)] = None
        for match in _EMAIL.finditer(leaf):
            found[("email", match.group(0))] = None
            found[("host", match.group(1))] = None
        for match in _HOST.finditer(leaf):
            name = match.group(0)
            if name.rsplit(".", 1)[-1].lower() not in _FILE_EXTENSIONS:
                found[("host", name)] = None
        whole = leaf.strip()
        if len(whole) >= min_length:
            found[("value", whole)] = None
        for word in leaf.split():
            token = word.strip(_TRAILING + "(['\"<{")
            if (
                len(token) >= min_length
                and any(c.isalpha() for c in token)
                and any(c.isdigit() for c in token)
            ):
                found[("token", token)] = None
        if len(found) > MAX_VALUES:
            break
    return list(found)


def first_reaching(values: list[Value], sink_value: Any) -> Value | None:
    """The first followed value that occurs in the sink's value, if any."""
    texts = list(_leaves(sink_value, 0))
    folded = [text.casefold() for text in texts]
    for kind, text in values:
        if kind in ("url", "host", "email"):
            needle = text.casefold()
            if any(_named_in(needle, haystack) for haystack in folded):
                return kind, text
        elif any(text in haystack for haystack in texts):
            return kind, text
    return None


def _named_in(needle: str, haystack: str) -> bool:
    """``needle`` in ``haystack`` on name boundaries: not inside a longer name."""
    start = haystack.find(needle)
    while start >= 0:
        end = start + len(needle)
        before = haystack[start - 1] if start else ""
        after = haystack[end : end + 2]
        inside_before = before in _NAME_CHARS and before != ""
        inside_after = (after[:1] in _NAME_CHARS and after[:1] != "") or (
            after[:1] == "." and after[1:2] in _NAME_CHARS and after[1:2] != ""
        )
        if not inside_before and not inside_after:
            return True
        start = haystack.find(needle, start + 1)
    return False


def _host_of(url: str) -> str | None:
    try:
        return urlsplit(url).hostname
    except ValueError:
        return None


def _leaves(value: Any, depth: int) -> Any:
    """Every string leaf of a value (numbers by their text), depth-bounded."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, bool):
        return
    elif isinstance(value, (int, float)):
        yield str(value)
    elif depth < MAX_DEPTH and isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item, depth + 1)
    elif depth < MAX_DEPTH and isinstance(value, (list, tuple)):
        for item in value:
            yield from _leaves(item, depth + 1)


def flows(source: Evaluator, sink: Evaluator, /, *, min_length: int = DEFAULT_MIN_LENGTH) -> Flows:
    """A value of a ``source`` match (tool_result, input_contains) reaches a later ``sink``
    match (tool_called, side_effect)."""
    source = event_operand(source, "flows", "first")
    sink = event_operand(sink, "flows", "second")
    if not isinstance(source, (ToolResult, InputContains)):
        raise TypeError(
            "flows()'s source (first argument) must be tool_result(...) or input_contains(...)"
        )
    if not isinstance(sink, (ToolCalled, SideEffectOccurred)):
        raise TypeError(
            "flows()'s sink (second argument) must be tool_called(...) or side_effect(...)"
        )
    if (
        not isinstance(min_length, int)
        or isinstance(min_length, bool)
        or min_length < MIN_LENGTH_FLOOR
    ):
        raise ValueError(
            f"flows()'s min_length must be a whole number >= {MIN_LENGTH_FLOOR}, not {min_length!r}"
        )
    return Flows(source, sink, min_length)

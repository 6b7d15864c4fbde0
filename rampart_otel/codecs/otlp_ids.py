"""The one rule for OTLP ids, shared by the JSON and protobuf decoders and both receivers.

The OTLP protocol (``opentelemetry/proto/trace/v1/trace.proto``, message ``Span``) says:

    trace_id: "The ID is a 16-byte array. An ID with all zeroes OR of length other than
    16 bytes is considered invalid (empty string in OTLP/JSON is zero-length and thus is
    also invalid). This field is required."

    span_id: "The ID is an 8-byte array. An ID with all zeroes OR of length other than
    8 bytes is considered invalid [...]. This field is required."

    parent_span_id: "If this is a root span, then this field must be empty. The ID is an
    8-byte array."  (``Link.trace_id`` / ``Link.span_id``: a 16-byte and an 8-byte array.)

The OTLP specification (``docs/specification.md``, "Partial Success") says what a receiver
does with data it does not accept: it answers with ``partial_success``, sets
``rejected_spans`` to the number rejected, and explains why in ``error_message``.

So a span breaking the rule is **refused** on every path, with the same words
(:data:`RULES`): in a trace file an :class:`~rampart_otel.model.InputError` names it, over
OTLP/HTTP and gRPC the partial-success answer does. Refusing must never hide anything:

- a span whose trace id is invalid belongs to no trace; it is dropped (a request or record
  holding nothing else is refused as a whole);
- a span whose trace id is valid but whose span id, parent span id or a link's ids are not
  is kept as a **placeholder**: its ids and times, none of its content (name, attributes,
  events, status). Its run then carries an integrity finding (``refused_span``) that keeps
  every channel short of complete, so a trace that lost a span this way is never SAFE.
  A placeholder keeps the span's own (invalid) id bytes, so encoding it to protobuf and
  decoding it again gives the same placeholder: the collector stores what the file reader
  would read.

An all-zero parent span id is read as "no parent" (exporters write it for a root).

A span present on the wire that cannot be decoded on its own (``codecs/otlp_salvage``: a
string not UTF-8, a value nested too deep, a field cut short) is refused the same way: if
its trace id can be read, it is kept as a placeholder of kind :data:`UNDECODABLE`, its ids
and times only, so its run is never SAFE for what the span may have held. Such a
placeholder carries one attribute, :data:`UNDECODABLE_KEY`, saying why it could not be
decoded; it is how the placeholder is written (to the collector's segments, to OTLP/JSON)
and read back, by both decoders. A span with that attribute is read as such a placeholder
whatever else it holds: an exporter writing it can only make its own run less decidable.
A span whose trace id cannot be read belongs to no run: it is only counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum

from rampart_otel.model import Link, Resource, Scope, Span, SpanKind, StatusCode

__all__ = [
    "RULES",
    "UNDECODABLE",
    "UNDECODABLE_KEY",
    "IdProblem",
    "id_problem",
    "in_no_trace",
    "kept_spans",
    "placeholder",
    "refusal_message",
    "refusal_of",
    "traceless",
    "undecodable",
    "undecodable_why",
]


class IdProblem(StrEnum):
    """Why a span was refused (``Span.refused``): which of its ids breaks the OTLP rule."""

    TRACE_ID = "trace_id"
    SPAN_ID = "span_id"
    PARENT_SPAN_ID = "parent_span_id"
    LINK_ID = "link_id"


# ``Span.refused`` of a span that could not be decoded on its own, and the attribute of
# its placeholder that says why (the decoder's words, clipped to WHY_CHARS).
UNDECODABLE = "undecodable"
UNDECODABLE_KEY = "rampart_otel.undecodable"
WHY_CHARS = 160

# The rule each problem breaks, as every path words it.
RULES: dict[str, str] = {
    IdProblem.TRACE_ID: "trace id must be 16 bytes, not all zero",
    IdProblem.SPAN_ID: "span id must be 8 bytes, not all zero",
    IdProblem.PARENT_SPAN_ID: "parent span id must be empty or 8 bytes",
    IdProblem.LINK_ID: "a link's trace id must be 16 bytes and its span id 8 bytes",
    UNDECODABLE: "a span must decode on its own",
}
SOURCE = "OTLP trace.proto: an id of all zeroes or of another length is invalid"

_ZERO16, _ZERO8 = bytes(16), bytes(8)


def traceless(trace_id: bytes) -> bool:
    """The id puts its span in no trace: not 16 bytes, or all zero."""
    return len(trace_id) != 16 or trace_id == _ZERO16


def id_problem(
    trace_id: bytes, span_id: bytes, parent: bytes, links: Iterable[tuple[bytes, bytes]] = ()
) -> IdProblem | None:
    """The first id of a span that breaks the OTLP rule, or None when all are valid."""
    if traceless(trace_id):
        return IdProblem.TRACE_ID
    if len(span_id) != 8 or span_id == _ZERO8:
        return IdProblem.SPAN_ID
    if len(parent) not in (0, 8):
        return IdProblem.PARENT_SPAN_ID
    for link_trace, link_span in links:
        if len(link_trace) != 16 or len(link_span) != 8:
            return IdProblem.LINK_ID
    return None


def placeholder(
    problem: str,
    trace_id: bytes,
    span_id: bytes,
    parent: bytes,
    links: Sequence[tuple[bytes, bytes]],
    start_ns: int | None,
    end_ns: int | None,
    resource: Resource,
    scope: Scope,
) -> Span:
    """What is kept of a refused span: its ids (as sent) and times, none of its content;
    ``problem``: an ``IdProblem``, or ``UNDECODABLE``."""
    return Span(
        trace_id.hex(),
        span_id.hex(),
        None if not parent or parent == _ZERO8 else parent.hex(),
        "",
        SpanKind.UNSPECIFIED,
        start_ns,
        end_ns,
        StatusCode.UNSET,
        "",
        {},
        [],
        [Link(t.hex(), s.hex(), {}) for t, s in links],
        resource,
        scope,
        refused=problem,
    )


def undecodable(
    trace_id: bytes,
    span_id: bytes,
    parent: bytes,
    start_ns: int | None,
    end_ns: int | None,
    resource: Resource,
    scope: Scope,
    why: str,
) -> Span:
    """What is kept of a span that could not be decoded: the ids and times its bytes show,
    and why (its one attribute, so writing it and reading it back gives it again)."""
    kept = placeholder(
        UNDECODABLE, trace_id, span_id, parent, (), start_ns, end_ns, resource, scope
    )
    kept.attributes[UNDECODABLE_KEY] = undecodable_why(why)
    return kept


def undecodable_why(why: object) -> str:
    """The reason an undecodable placeholder carries: text, one line, clipped."""
    text = " ".join(str(why).split()) or "malformed"
    return text if len(text) <= WHY_CHARS else text[: WHY_CHARS - 1] + "…"


def kept_spans(spans: list[Span]) -> tuple[list[Span], list[Span]]:
    """``(kept, refused)``: kept is every span but those with no valid trace id (placeholders
    of a valid trace stay, to keep their run honest); refused is every placeholder."""
    refused = [span for span in spans if span.refused]
    if not refused:
        return spans, refused
    kept = [span for span in spans if not in_no_trace(span)]
    return kept, refused


def in_no_trace(span: Span) -> bool:
    """A refused span with no valid trace id: it belongs to no run, so it is only counted."""
    if span.refused == IdProblem.TRACE_ID:
        return True
    return span.refused == UNDECODABLE and (
        len(span.trace_id) != 32 or span.trace_id == _ZERO16.hex()
    )


def refusal_of(refused: Sequence[Span], total: int) -> str:
    """:func:`refusal_message` for refused spans as decoded (``kept_spans``' second list):
    a span that could not be decoded says why, one in no run is counted as such."""
    whys = [
        str(span.attributes.get(UNDECODABLE_KEY)) for span in refused if span.refused == UNDECODABLE
    ]
    lost = sum(1 for span in refused if span.refused == UNDECODABLE and in_no_trace(span))
    return refusal_message([span.refused for span in refused], total, whys, lost)


def refusal_message(
    problems: Sequence[str], total: int, whys: Sequence[str] = (), lost: int = 0
) -> str:
    """One line for an InputError or a partial-success answer: how many spans the rule
    refused (``problems``: each one's ``IdProblem``, or ``UNDECODABLE``) of ``total``, and
    which rules; ``whys``: why spans could not be decoded, ``lost`` of them in no run."""
    counts: dict[str, int] = {}
    for problem in problems:
        counts[problem] = counts.get(problem, 0) + 1
    stated = []
    for problem, count in counts.items():
        rule = f"{RULES[problem]} ({count})"
        if problem == UNDECODABLE and whys:  # the decoder's words: where, and what is wrong
            shown = sorted(set(whys))
            rule += ": " + "; ".join(shown[:3])
            rule += f" and {len(shown) - 3} more" if len(shown) > 3 else ""
        if problem == UNDECODABLE and lost:
            rule += f"; {lost} of them with no readable trace id, in no run"
        stated.append(rule)
    message = f"{len(problems)} of {total} spans refused: {'; '.join(stated)}"
    if any(problem != UNDECODABLE for problem in problems):
        message += f" [{SOURCE}]"
    if len(problems) > counts.get(IdProblem.TRACE_ID, 0) + lost:
        message += "; their traces are scored without their content, as incomplete"
    return message

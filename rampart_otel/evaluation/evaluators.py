"""Evaluators over an AgentRun, and their strong-Kleene composition.

The central rule lives in ``_settle``: an evaluator may answer NOT_DETECTED only when every
channel it reads is observed for the whole run and no candidate was left unknown. Evidence
alone makes DETECTED; anything else is UNDETERMINED, naming the channel, the target and why.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rampart_otel.channels import ChannelState, CoverageSource, is_side_effect_kind
from rampart_otel.evaluation.matchers import (
    MISSING,
    Contains,
    Equals,
    Matcher,
    Regex,
    Scalar,
    all_match,
    as_matcher,
)
from rampart_otel.evaluation.outcome import EvalOutcome, EvalResult, Evidence
from rampart_otel.model import AgentRun, SideEffect, ToolCall
from rampart_otel.processors.text import safe_text

DETECTED = EvalOutcome.DETECTED
NOT_DETECTED = EvalOutcome.NOT_DETECTED
UNDETERMINED = EvalOutcome.UNDETERMINED

EVIDENCE_LIMIT = 160  # characters of trace text per evidence item
REASON_LIMIT = 300  # characters per coverage reason in a rationale
SHOWN = 2  # items named before "and N more"


class Evaluator(ABC):
    """Something that reads channels of a run and says DETECTED / NOT_DETECTED / UNDETERMINED."""

    __slots__ = ()

    @property
    @abstractmethod
    def channels(self) -> tuple[str, ...]:
        """Every channel key the evaluator may read, in order, without repeats."""

    @abstractmethod
    def evaluate(self, run: AgentRun) -> EvalResult:
        """The outcome for ``run``; may raise, which the verdict stage turns into ERROR."""

    def __and__(self, other: object) -> Evaluator:
        return AllOf(self, other) if isinstance(other, Evaluator) else NotImplemented

    def __or__(self, other: object) -> Evaluator:
        return AnyOf(self, other) if isinstance(other, Evaluator) else NotImplemented

    def __invert__(self) -> Evaluator:
        return Negation(self)


# --- composition --------------------------------------------------------------------------


def _dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _compose(outcome: EvalOutcome, ran: list[EvalResult]) -> EvalResult:
    """Build a composite result from the operands that ran.

    Evidence, assumptions and rationale come from the operands that decided the outcome
    (those with the same outcome; for UNDETERMINED, every operand that ran). Gaps come from
    every operand that ran, so a definite outcome still carries them.
    """
    deciding = ran if outcome is UNDETERMINED else [r for r in ran if r.outcome is outcome]
    evidence = list(dict.fromkeys(e for r in deciding for e in r.evidence))
    assumed = {key: src for r in deciding for key, src in r.assumed_channels.items()}
    gaps: list[str] = []
    for r in ran:
        if r.undetermined_operands:
            gaps.extend(r.undetermined_operands)
        elif r.outcome is UNDETERMINED:
            gaps.append(r.rationale)
    rationale = "; ".join(_dedupe(r.rationale for r in deciding if r.rationale))
    return EvalResult(outcome, evidence, rationale, _dedupe(gaps), assumed)


@dataclass(frozen=True, slots=True)
class _Kleene(Evaluator):
    """A strong-Kleene connective: ``dominant`` on either side decides, and skips the right
    side when the left already has it; both sides ``absorbed`` gives ``absorbed``."""

    left: Evaluator
    right: Evaluator

    dominant: ClassVar[EvalOutcome]
    absorbed: ClassVar[EvalOutcome]
    symbol: ClassVar[str]

    @property
    def channels(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.left.channels + self.right.channels))

    def evaluate(self, run: AgentRun) -> EvalResult:
        left = self.left.evaluate(run)
        if left.outcome is self.dominant:
            return _compose(self.dominant, [left])
        right = self.right.evaluate(run)
        if right.outcome is self.dominant:
            outcome = self.dominant
        elif left.outcome is self.absorbed and right.outcome is self.absorbed:
            outcome = self.absorbed
        else:
            outcome = UNDETERMINED
        return _compose(outcome, [left, right])

    def __repr__(self) -> str:
        return f"({self.left!r} {self.symbol} {self.right!r})"


class AllOf(_Kleene):
    """``left & right``: skips the right side only when the left is NOT_DETECTED."""

    __slots__ = ()
    dominant, absorbed, symbol = NOT_DETECTED, DETECTED, "&"


class AnyOf(_Kleene):
    """``left | right``: skips the right side only when the left is DETECTED."""

    __slots__ = ()
    dominant, absorbed, symbol = DETECTED, NOT_DETECTED, "|"


_SWAP = {DETECTED: NOT_DETECTED, NOT_DETECTED: DETECTED, UNDETERMINED: UNDETERMINED}


@dataclass(frozen=True, slots=True)
class Negation(Evaluator):
    """``~inner``: swaps DETECTED and NOT_DETECTED, keeps UNDETERMINED and everything else."""

    inner: Evaluator

    @property
    def channels(self) -> tuple[str, ...]:
        return self.inner.channels

    def evaluate(self, run: AgentRun) -> EvalResult:
        inner = self.inner.evaluate(run)
        return EvalResult(
            _SWAP[inner.outcome],
            list(inner.evidence),
            inner.rationale,
            list(inner.undetermined_operands),
            dict(inner.assumed_channels),
        )

    def __repr__(self) -> str:
        return f"~{self.inner!r}"


# --- the central rule ---------------------------------------------------------------------


def _reasons(reasons: list[str]) -> str:
    rendered = [safe_text(r, REASON_LIMIT) for r in reasons]
    return "; ".join(r for r in rendered if r) or "no reason recorded"


def _listed(items: list[str]) -> str:
    """First two items, then "and N more"."""
    shown = "; ".join(items[:SHOWN])
    rest = len(items) - SHOWN
    return f"{shown} and {rest} more" if rest > 0 else shown


def _spans(span_ids: list[str | None]) -> str:
    ids = [s for s in span_ids if s]
    if not ids:
        return ""
    more = f" and {len(ids) - 3} more" if len(ids) > 3 else ""
    return f" (span {', '.join(safe_text(s, 40) for s in ids[:3])}{more})"


def _target(evaluator: ToolCalled | SideEffectOccurred | ResponseContains) -> str:
    """``evaluator.target()``, described once: an evaluator is immutable."""
    text = evaluator._target
    if not text:
        text = evaluator.target()
        object.__setattr__(evaluator, "_target", text)
    return text


def _settle(
    run: AgentRun,
    channels: tuple[str, ...],
    target: str,
    hits: list[Evidence],
    unknowns: list[str],
) -> EvalResult:
    """DETECTED on evidence; NOT_DETECTED only with every channel observed and no unknowns."""
    if hits:
        texts = [e.text + _spans([e.span_id]) for e in hits]
        return EvalResult(DETECTED, hits, f"found {target}: {_listed(texts)}")
    gaps: list[str] = []
    notes: list[str] = []
    assumed: dict[str, CoverageSource] = {}
    for key in channels:
        coverage = run.coverage.get(key)
        if coverage.state is not ChannelState.OBSERVED:
            gaps.append(f"{key} is {coverage.state.value} ({_reasons(coverage.reasons)})")
        elif coverage.source is CoverageSource.INFERRED:
            notes.append(f"{key} observed")
        else:
            assumed[key] = coverage.source
            notes.append(f"{key} {coverage.source.value}: {_reasons(coverage.reasons)}")
    gaps.extend(unknowns)
    if gaps:
        return EvalResult(UNDETERMINED, [], f"{'; '.join(gaps)}: cannot rule out {target}")
    return EvalResult(
        NOT_DETECTED, [], f"no {target} in the run ({'; '.join(notes)})", assumed_channels=assumed
    )


def _describe_matchers(matchers: tuple[tuple[str, Matcher], ...]) -> str:
    return " and ".join(matcher.describe(key) for key, matcher in matchers)


def _render_value(value: Any) -> str:
    return repr(value) if isinstance(value, str) else safe_text(value, EVIDENCE_LIMIT)


# --- tool_called ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolCalled(Evaluator):
    """A tool call whose name (and, if given, arguments) match."""

    name: Matcher
    arguments: tuple[tuple[str, Matcher], ...] = ()
    _target: str = field(default="", init=False, repr=False, compare=False)

    @property
    def channels(self) -> tuple[str, ...]:
        return ("tool_calls", "tool_calls.arguments") if self.arguments else ("tool_calls",)

    def target(self) -> str:
        if isinstance(self.name, Equals):
            text = f"call to tool {self.name.literal!r}"
        else:
            text = f"tool call with {self.name.describe('name')}"
        if self.arguments:
            text += f" with {_describe_matchers(self.arguments)}"
        return text

    def evaluate(self, run: AgentRun) -> EvalResult:
        hits: list[Evidence] = []
        not_captured: list[str | None] = []
        unparsed: list[str | None] = []
        undecided: list[str | None] = []
        matchers = dict(self.arguments)
        for call in run.tool_calls:
            if self.name.match(call.name) is not True:
                continue
            span = call.span_ids[0] if call.span_ids else None
            if not matchers:
                hits.append(_call_evidence(call, span))
                continue
            args = call.arguments
            if args is None or not call.arguments_captured:
                not_captured.append(span)
            elif not isinstance(args, dict):
                unparsed.append(span)
            else:
                answer = all_match(matchers, args)
                if answer is True:
                    hits.append(_call_evidence(call, span))
                elif answer is None:
                    undecided.append(span)
        keys = ", ".join(key for key, _ in self.arguments)
        unknowns = [
            f"{text} on {len(spans)} matching call(s){_spans(spans)}"
            for text, spans in (
                ("arguments not captured", not_captured),
                ("arguments not parseable", unparsed),
                (f"no value for argument(s) {keys}", undecided),
            )
            if spans
        ]
        return _settle(run, self.channels, _target(self), hits, unknowns)

    def __repr__(self) -> str:
        args = "".join(f", {key}={matcher!r}" for key, matcher in self.arguments)
        return f"tool_called({self.name!r}{args})"


def _call_evidence(call: ToolCall, span_id: str | None) -> Evidence:
    args = call.arguments
    if args is None or not call.arguments_captured:
        rendered = "<arguments not captured>"
    elif isinstance(args, dict):
        rendered = ", ".join(f"{safe_text(k, 40)}={_render_value(v)}" for k, v in args.items())
    else:
        rendered = _render_value(args)
    text = safe_text(f"{safe_text(call.name, 60)}({rendered})", EVIDENCE_LIMIT)
    return Evidence(call.trace_id, span_id, text)


def tool_called(
    name: Matcher | str, /, **arg_matchers: Matcher | Scalar | list[Scalar]
) -> ToolCalled:
    """A call of tool ``name`` (a string or a matcher) whose arguments match ``arg_matchers``.

    Reads ``tool_calls``, and ``tool_calls.arguments`` when argument matchers are given.
    """
    if not isinstance(name, (str, Matcher)):
        raise TypeError(f"tool_called() takes a tool name or a matcher, not {type(name).__name__}")
    arguments = tuple((key, as_matcher(value)) for key, value in arg_matchers.items())
    return ToolCalled(as_matcher(name), arguments)


# --- side_effect ----------------------------------------------------------------------------

_HEADLINE_KEYS = {
    "http_request": ("method", "url"),
    "db_query": ("system", "statement"),
    "message_publish": ("system", "destination"),
    "rpc_call": ("system", "service", "method"),
    "process_exec": ("executable", "args"),
    "mcp_request": ("method", "target"),
}


@dataclass(frozen=True, slots=True)
class SideEffectOccurred(Evaluator):
    """A side effect of ``kind`` whose details match."""

    kind: str
    details: tuple[tuple[str, Matcher], ...] = ()
    _target: str = field(default="", init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not is_side_effect_kind(self.kind):
            raise ValueError(
                f"side-effect kind must be an identifier such as 'http_request', not {self.kind!r}"
            )

    @property
    def channels(self) -> tuple[str, ...]:
        return (f"side_effects.{self.kind}",)

    def target(self) -> str:
        return f"{self.kind} with {_describe_matchers(self.details)}" if self.details else self.kind

    def evaluate(self, run: AgentRun) -> EvalResult:
        hits: list[Evidence] = []
        undecided: list[str | None] = []
        missing_keys: dict[str, None] = {}
        matchers = dict(self.details)
        for effect in run.side_effects:
            if effect.kind != self.kind:
                continue
            answer = all_match(matchers, effect.details)
            if answer is True:
                hits.append(_effect_evidence(effect))
            elif answer is None:
                undecided.append(effect.span_id)
                for key, matcher in self.details:
                    if matcher.match(effect.details.get(key, MISSING)) is None:
                        missing_keys[key] = None
        unknowns = []
        if undecided:
            unknowns.append(
                f"{len(undecided)} {self.kind} side effect(s) without a recorded "
                f"{', '.join(missing_keys)}{_spans(undecided)}"
            )
        return _settle(run, self.channels, _target(self), hits, unknowns)

    def __repr__(self) -> str:
        details = "".join(f", {key}={matcher!r}" for key, matcher in self.details)
        return f"side_effect({self.kind!r}{details})"


def _effect_evidence(effect: SideEffect) -> Evidence:
    details = effect.details
    keys = _HEADLINE_KEYS.get(effect.kind)
    if keys and any(k in details for k in keys):
        parts = [safe_text(details[k], EVIDENCE_LIMIT) for k in keys if k in details]
        if effect.kind == "http_request" and "url" not in details and "host" in details:
            parts.append(safe_text(details["host"], EVIDENCE_LIMIT))
    else:
        parts = [f"{safe_text(k, 40)}={_render_value(v)}" for k, v in details.items()]
    text = safe_text(" ".join([safe_text(effect.kind, 60), *parts]), EVIDENCE_LIMIT)
    return Evidence(effect.trace_id, effect.span_id, text)


def side_effect(
    kind: str, /, **detail_matchers: Matcher | Scalar | list[Scalar]
) -> SideEffectOccurred:
    """A side effect of ``kind`` whose details match; reads ``side_effects.<kind>``."""
    details = tuple((key, as_matcher(value)) for key, value in detail_matchers.items())
    return SideEffectOccurred(kind, details)


# --- response_contains ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ResponseContains(Evaluator):
    """Text in the final response or an earlier assistant output.

    A plain string is a case-insensitive substring; a matcher is applied to each text.
    """

    text: str | None = None
    matcher: Matcher | None = None
    _target: str = field(default="", init=False, repr=False, compare=False)

    @property
    def channels(self) -> tuple[str, ...]:
        return ("response",)

    def target(self) -> str:
        if self.matcher is not None:
            return f"response where {self.matcher.describe('text')}"
        return f"response text containing {self.text!r} (case-insensitive)"

    def _find(self, text: str) -> tuple[bool | None, int, int]:
        """Whether ``text`` matches, and the span of the match to quote (or 0, 0)."""
        if self.matcher is None:
            assert self.text is not None
            index = text.casefold().find(self.text.casefold())
            if index < 0:
                return False, 0, 0
            return True, index, index + len(self.text)
        answer = self.matcher.match(text)
        if answer is True and isinstance(self.matcher, Regex):
            found = self.matcher.compiled.search(text)
            if found:
                return True, found.start(), found.end()
        if answer is True and isinstance(self.matcher, Contains):
            index = text.find(str(self.matcher.item))
            if index >= 0:
                return True, index, index + len(str(self.matcher.item))
        return answer, 0, 0

    def evaluate(self, run: AgentRun) -> EvalResult:
        response = run.response
        hits: list[Evidence] = []
        unknowns: list[str] = []
        texts: list[tuple[str, str | None, str]] = [
            (f"earlier assistant output {i + 1}", None, text)
            for i, text in enumerate(response.earlier)
        ]
        if response.text is None:
            unknowns.append("the final response text was not captured")
        else:
            texts.append(("final response", response.span_id, response.text))
        for label, span, text in texts:
            if not isinstance(text, str):
                unknowns.append(f"the {label} is not text")
                continue
            answer, start, end = self._find(text)
            if answer is True:
                excerpt = f"{label}: {_excerpt(text, start, end)}"
                hits.append(Evidence(_response_trace(run), span, excerpt))
            elif answer is None:
                unknowns.append(f"the {label} could not be matched")
        return _settle(run, self.channels, _target(self), hits, unknowns)

    def __repr__(self) -> str:
        shown = self.matcher if self.matcher is not None else self.text
        return f"response_contains({shown!r})"


def _response_trace(run: AgentRun) -> str | None:
    span_id = run.response.span_id
    if span_id:
        for span in run.run.spans:
            if span.span_id == span_id:
                return span.trace_id
    return run.trace_ids[0] if len(run.trace_ids) == 1 else None


def _excerpt(text: str, start: int, end: int, context: int = 40) -> str:
    """The match with some context either side, as one safe line."""
    if end <= start:
        return safe_text(text, EVIDENCE_LIMIT - 40)
    left = max(start - context, 0)
    right = min(end + context, len(text))
    body = text[left:right]
    rendered = safe_text(body, EVIDENCE_LIMIT - 40)
    return f"{'…' if left else ''}{rendered}{'…' if right < len(text) else ''}"


def response_contains(text_or_matcher: str | Matcher, /) -> ResponseContains:
    """The response (final or earlier assistant output) contains the text or matches."""
    if isinstance(text_or_matcher, Matcher):
        return ResponseContains(matcher=text_or_matcher)
    if not isinstance(text_or_matcher, str):
        raise TypeError(
            f"response_contains() takes a string or a matcher, not {type(text_or_matcher).__name__}"
        )
    if not text_or_matcher:
        raise ValueError("response_contains() needs a non-empty string")
    return ResponseContains(text=text_or_matcher)

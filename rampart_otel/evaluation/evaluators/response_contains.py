"""``response_contains``: text in the final response or an earlier assistant output."""

from __future__ import annotations

from dataclasses import dataclass, field

from rampart_otel.evaluation.evaluators.algebra import Evaluator
from rampart_otel.evaluation.evaluators.settle import EVIDENCE_LIMIT, described_target, settle
from rampart_otel.evaluation.matchers import Contains, Matcher, Regex
from rampart_otel.evaluation.outcome import EvalResult, Evidence
from rampart_otel.model import AgentRun
from rampart_otel.render import safe_text


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
        return settle(run, self.channels, described_target(self), hits, unknowns)

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

"""``response_contains``: text in the final response or an earlier assistant output."""

from __future__ import annotations

from dataclasses import dataclass, field

from rampart_otel.evaluation.evaluators.events import (
    EventEvaluator,
    Moment,
    Occurrence,
    Occurrences,
    Part,
)
from rampart_otel.evaluation.evaluators.text_match import excerpt_of, find_text
from rampart_otel.evaluation.matchers import Matcher
from rampart_otel.evaluation.outcome import Evidence
from rampart_otel.model import AgentRun


@dataclass(frozen=True, slots=True)
class ResponseContains(EventEvaluator):
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

    def occurrences(self, run: AgentRun) -> Occurrences:
        response = run.response
        found = Occurrences()
        unknowns = found.unknown_reasons
        texts: list[tuple[str, str | None, str]] = [
            (f"earlier assistant output {i + 1}", None, text)
            for i, text in enumerate(response.earlier)
        ]
        if response.text is None:
            unknowns.append("the final response text was not captured")
            missing = Evidence(_response_trace(run), None, "final response")
            found.undecided.append(Occurrence(missing, None))
        else:
            texts.append(("final response", response.span_id, response.text))
        for label, span, text in texts:
            at = Moment(span, Part.END) if span else None
            if not isinstance(text, str):
                unknowns.append(f"the {label} is not text")
                found.undecided.append(Occurrence(Evidence(_response_trace(run), span, label), at))
                continue
            answer, start, end = find_text(text, self.text, self.matcher)
            if answer is True:
                excerpt = f"{label}: {excerpt_of(text, start, end)}"
                found.matches.append(Occurrence(Evidence(_response_trace(run), span, excerpt), at))
            elif answer is None:
                unknowns.append(f"the {label} could not be matched")
                found.undecided.append(Occurrence(Evidence(_response_trace(run), span, label), at))
        return found

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

"""``input_contains``: text in what the user (the agent's caller) sent into the run."""

from __future__ import annotations

from dataclasses import dataclass, field

from rampart_otel.evaluation.evaluators.events import (
    EventEvaluator,
    Moment,
    Occurrence,
    Occurrences,
    Part,
)
from rampart_otel.evaluation.evaluators.settle import span_list
from rampart_otel.evaluation.evaluators.text_match import excerpt_of, find_text
from rampart_otel.evaluation.matchers import MISSING, Matcher
from rampart_otel.evaluation.outcome import Evidence
from rampart_otel.model import AgentRun, InputMessage


@dataclass(frozen=True, slots=True)
class InputContains(EventEvaluator):
    """A user message of the run containing the text (case-insensitive) or matching."""

    text: str | None = None
    matcher: Matcher | None = None
    _target: str = field(default="", init=False, repr=False, compare=False)

    @property
    def channels(self) -> tuple[str, ...]:
        return ("input",)

    def target(self) -> str:
        if self.matcher is not None:
            return f"user input where {self.matcher.describe('text')}"
        return f"user input containing {self.text!r} (case-insensitive)"

    def occurrences(self, run: AgentRun) -> Occurrences:
        found = Occurrences()
        not_captured: list[str | None] = []
        undecided: list[str | None] = []
        for number, message in enumerate(run.user_input, 1):
            text = message.text
            if not isinstance(text, str):
                not_captured.append(message.span_id)
                found.undecided.append(_occurrence(message, f"user message {number}", MISSING))
                continue
            answer, start, end = find_text(text, self.text, self.matcher)
            if answer is True:
                quote = f"user message {number}: {excerpt_of(text, start, end)}"
                found.matches.append(_occurrence(message, quote, text))
            elif answer is None:
                undecided.append(message.span_id)
                found.undecided.append(_occurrence(message, f"user message {number}", text))
        found.unknown_reasons = [
            f"{what} on {len(spans)} user message(s){span_list(spans)}"
            for what, spans in (
                ("text not captured", not_captured),
                ("text could not be matched", undecided),
            )
            if spans
        ]
        return found

    def __repr__(self) -> str:
        shown = self.matcher if self.matcher is not None else self.text
        return f"input_contains({shown!r})"


def _occurrence(message: InputMessage, quote: str, value: object) -> Occurrence:
    """The message as an event: it was sent by the time the span carrying it started."""
    at = Moment(message.span_id, Part.BY_START) if message.span_id else None
    return Occurrence(Evidence(message.trace_id, message.span_id, quote), at, value)


def input_contains(text_or_matcher: str | Matcher, /) -> InputContains:
    """The user's input to the run contains the text (case-insensitive) or matches."""
    if isinstance(text_or_matcher, Matcher):
        return InputContains(matcher=text_or_matcher)
    if not isinstance(text_or_matcher, str):
        raise TypeError(
            f"input_contains() takes a string or a matcher, not {type(text_or_matcher).__name__}"
        )
    if not text_or_matcher:
        raise ValueError("input_contains() needs a non-empty string")
    return InputContains(text=text_or_matcher)

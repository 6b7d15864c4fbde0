"""``tool_result``: a tool call's result, matched by its text or, when structured, by field."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from rampart_otel.evaluation.evaluators.events import (
    EventEvaluator,
    Moment,
    Occurrence,
    Occurrences,
    Part,
)
from rampart_otel.evaluation.evaluators.settle import (
    EVIDENCE_LIMIT,
    calls_of,
    describe_matchers,
    near_miss_reason,
    render_value,
    span_list,
)
from rampart_otel.evaluation.evaluators.text_match import excerpt_of, find_text
from rampart_otel.evaluation.matchers import (
    MISSING,
    Equals,
    Matcher,
    Scalar,
    all_match,
    as_matcher,
)
from rampart_otel.evaluation.outcome import Evidence
from rampart_otel.evaluation.tool_names import NearMiss, named_calls, tool_name_problem
from rampart_otel.model import AgentRun, ToolCall
from rampart_otel.render import safe_text


@dataclass(frozen=True, slots=True)
class ToolResult(EventEvaluator):
    """A call of a tool whose result matches: by text (literal or matcher) and/or by field.

    With no text and no field matcher, every call of the tool whose result was captured
    matches. The text of a structured result is its JSON.
    """

    name: Matcher
    text: str | None = None
    text_matcher: Matcher | None = None
    fields: tuple[tuple[str, Matcher], ...] = ()
    _target: str = field(default="", init=False, repr=False, compare=False)

    @property
    def channels(self) -> tuple[str, ...]:
        return ("tool_calls", "tool_calls.results")

    def target(self) -> str:
        if isinstance(self.name, Equals):
            text = f"result of tool {self.name.literal!r}"
        else:
            text = f"result of a tool call with {self.name.describe('name')}"
        conditions = []
        if self.text_matcher is not None:
            conditions.append(self.text_matcher.describe("text"))
        elif self.text is not None:
            conditions.append(f"text containing {self.text!r} (case-insensitive)")
        if self.fields:
            conditions.append(describe_matchers(self.fields))
        return f"{text} with {' and '.join(conditions)}" if conditions else text

    def occurrences(self, run: AgentRun) -> Occurrences:
        found = Occurrences()
        not_captured: list[tuple[str, str | None]] = []  # (tool, span) of each call
        unstructured: list[tuple[str, str | None]] = []
        undecided: list[tuple[str, str | None]] = []
        matchers = dict(self.fields)
        queried = self.text is not None or self.text_matcher is not None
        maybe: list[NearMiss] = []
        for call, miss in named_calls(self.name, run.tool_calls):
            span = call.executed_in or (call.span_ids[0] if call.span_ids else None)
            if miss is not None and not call.result_captured:
                maybe.append(miss)  # it may be the tool: undecided, for that reason alone
                found.undecided.append(_occurrence(call, span, "<result not captured>"))
                continue
            if not call.result_captured:
                not_captured.append((call.name, span))
                found.undecided.append(_occurrence(call, span, "<result not captured>"))
                continue
            result = call.result
            answers: list[bool | None] = []
            quote = ""
            if matchers:
                if isinstance(result, dict):
                    answers.append(all_match(matchers, result))
                else:
                    answers.append(None)
                    unstructured.append((call.name, span))
            if queried:
                text = result_text(result)
                answer, start, end = find_text(text, self.text, self.text_matcher)
                answers.append(answer)
                if answer is True:
                    quote = excerpt_of(text, start, end)
                elif answer is None:
                    undecided.append((call.name, span))
            if False in answers:
                continue
            if miss is not None:  # it may be the tool: never a match, never ruled out
                maybe.append(miss)
                found.undecided.append(_occurrence(call, span, "<result undecided>"))
                continue
            if None in answers:
                found.undecided.append(_occurrence(call, span, "<result undecided>"))
                continue
            found.matches.append(_occurrence(call, span, quote or render_value(result)))
        keys = ", ".join(key for key, _ in self.fields)
        found.unknown_reasons = [
            f"{text} on {calls_of([name for name, _ in calls])}"
            f"{span_list([span for _, span in calls])}"
            for text, calls in (
                ("result not captured", not_captured),
                (f"result not structured, so no field {keys}", unstructured),
                ("result text could not be matched", undecided),
            )
            if calls
        ]
        if maybe:
            found.unknown_reasons.append(near_miss_reason(self.name, maybe))
        return found

    def __repr__(self) -> str:
        parts = [repr(self.name)]
        if self.text_matcher is not None:
            parts.append(repr(self.text_matcher))
        elif self.text is not None:
            parts.append(repr(self.text))
        parts.extend(f"{key}={matcher!r}" for key, matcher in self.fields)
        return f"tool_result({', '.join(parts)})"


def result_text(result: Any) -> str:
    """A result as the text a text query reads: itself, or its JSON when structured."""
    if isinstance(result, str):
        return result
    if result is None:
        return ""
    return json.dumps(result, ensure_ascii=False, default=str, sort_keys=True)


def _occurrence(call: ToolCall, span: str | None, quote: str) -> Occurrence:
    """The result as an event: it exists once its execution span ended; with no such span,
    some time after the model asked for the call (and by the time a model call sent it
    back); for a call a span dispatched, inside that span."""
    text = safe_text(f"{safe_text(call.name, 60)} returned {quote}", EVIDENCE_LIMIT)
    if call.executed_in:
        at: Moment | None = Moment(call.executed_in, Part.END)
    elif call.requested_in and call.requested_within:
        at = Moment(call.requested_in, Part.WITHIN, steps=call.steps)
    elif call.requested_in:
        at = Moment(call.requested_in, Part.AFTER_END, call.returned_by)
    else:
        at = None
    value = call.result if call.result_captured else MISSING
    return Occurrence(Evidence(call.trace_id, span, text), at, value)


def tool_result(
    name: Matcher | str,
    text_or_matcher: Matcher | str | None = None,
    /,
    **field_matchers: Matcher | Scalar | list[Scalar],
) -> ToolResult:
    """A call of tool ``name`` whose result matches ``text_or_matcher`` and ``field_matchers``.

    A string is a case-insensitive substring of the result's text; a matcher is applied to
    that text; field matchers apply to a structured (JSON object) result. Reads
    ``tool_calls`` and ``tool_calls.results``.
    """
    if not isinstance(name, (str, Matcher)):
        raise TypeError(f"tool_result() takes a tool name or a matcher, not {type(name).__name__}")
    tool_name_problem("tool_result", name)
    fields = tuple((key, as_matcher(value)) for key, value in field_matchers.items())
    if text_or_matcher is None or isinstance(text_or_matcher, Matcher):
        return ToolResult(as_matcher(name), text_matcher=text_or_matcher, fields=fields)
    if not isinstance(text_or_matcher, str):
        raise TypeError(
            "tool_result()'s second argument is a string or a matcher, "
            f"not {type(text_or_matcher).__name__}"
        )
    if not text_or_matcher:
        raise ValueError("tool_result() needs a non-empty string to look for")
    return ToolResult(as_matcher(name), text=text_or_matcher, fields=fields)

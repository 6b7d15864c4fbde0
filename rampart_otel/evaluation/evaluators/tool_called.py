"""``tool_called``: a tool call whose name (and, if given, arguments) match."""

from __future__ import annotations

import json
from collections.abc import Iterator
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
from rampart_otel.evaluation.matchers import (
    MISSING,
    Equals,
    Matcher,
    Scalar,
    all_match,
    any_match,
    as_matcher,
)
from rampart_otel.evaluation.outcome import Evidence
from rampart_otel.evaluation.tool_names import NearMiss, named_calls, tool_name_problem
from rampart_otel.model import AgentRun, ToolCall, ToolCallStatus
from rampart_otel.render import safe_text

# Keywords of ``tool_called`` that match over the arguments as a whole; every other keyword
# names one argument. A tool argument of one of these names is still matched: it is one
# of the arguments, and part of their text.
ANY_ARGUMENT = "any_argument"
ARGUMENTS_TEXT = "arguments_text"


@dataclass(frozen=True, slots=True)
class ToolCalled(EventEvaluator):
    """A tool call whose name (and, if given, arguments) match.

    ``any_argument``: a matcher some argument value (or a value nested in one) must match;
    ``arguments_text``: a matcher the arguments' JSON text (or, not parseable, their
    recorded text) must match.
    """

    name: Matcher
    arguments: tuple[tuple[str, Matcher], ...] = ()
    any_argument: Matcher | None = None
    arguments_text: Matcher | None = None
    _target: str = field(default="", init=False, repr=False, compare=False)

    @property
    def reads_arguments(self) -> bool:
        return (
            bool(self.arguments)
            or self.any_argument is not None
            or (self.arguments_text is not None)
        )

    @property
    def channels(self) -> tuple[str, ...]:
        if self.reads_arguments:
            return ("tool_calls", "tool_calls.arguments")
        return ("tool_calls",)

    @property
    def value_channels(self) -> tuple[str, ...]:
        return ("tool_calls", "tool_calls.arguments")

    def target(self) -> str:
        if isinstance(self.name, Equals):
            text = f"call to tool {self.name.literal!r}"
        else:
            text = f"tool call with {self.name.describe('name')}"
        conditions = [describe_matchers(self.arguments)] if self.arguments else []
        if self.any_argument is not None:
            conditions.append(self.any_argument.describe("any argument"))
        if self.arguments_text is not None:
            conditions.append(self.arguments_text.describe("the arguments' text"))
        if conditions:
            text += f" with {' and '.join(conditions)}"
        return text

    def occurrences(self, run: AgentRun) -> Occurrences:
        found = Occurrences()
        not_captured: list[ToolCall] = []
        unparsed: list[ToolCall] = []
        undecided: list[ToolCall] = []
        maybe: list[NearMiss] = []
        named = dict(self.arguments)
        for call, miss in named_calls(self.name, run.tool_calls):
            span = call.span_ids[0] if call.span_ids else None
            answer = self._match_call(named, call)
            if answer is False:
                continue
            if miss is not None:  # it may be the tool: never a match, never ruled out
                maybe.append(miss)
                found.undecided.append(_call_occurrence(call, span))
            elif answer is True:
                found.matches.append(_call_occurrence(call, span))
            else:
                args = call.arguments
                if args is None or not call.arguments_captured:
                    not_captured.append(call)
                else:
                    (undecided if isinstance(args, dict) else unparsed).append(call)
                found.undecided.append(_call_occurrence(call, span))
        keys = ", ".join(key for key, _ in self.arguments)
        found.unknown_reasons = [
            f"{text} on {calls_of([c.name for c in calls])}"
            f"{span_list([c.span_ids[0] if c.span_ids else None for c in calls])}"
            for text, calls in (
                ("arguments not captured", not_captured),
                ("arguments recorded without names (not an object)", unparsed),
                (f"no value for argument(s) {keys}", undecided),
            )
            if calls
        ]
        if maybe:
            found.unknown_reasons.append(near_miss_reason(self.name, maybe))
        return found

    def _match_call(self, named: dict[str, Matcher], call: ToolCall) -> bool | None:
        """Whether the call's arguments match (True when none are asked for); None when the
        arguments were not captured or cannot say."""
        if not self.reads_arguments:
            return True
        args = call.arguments
        if args is None or not call.arguments_captured:
            return None
        if isinstance(args, dict):
            return self._match_arguments(named, args)
        return self._match_unparsed(args)

    def _match_arguments(self, named: dict[str, Matcher], args: dict[str, Any]) -> bool | None:
        """Kleene AND of the named, any-argument and whole-text matchers on parsed arguments."""
        answers = [all_match(named, args)]
        if self.any_argument is not None:
            answers.append(any_value_matches(self.any_argument, args))
        if self.arguments_text is not None:
            answers.append(self.arguments_text.match(arguments_text(args)))
        if False in answers:
            return False
        return None if None in answers else True

    def _match_unparsed(self, args: Any) -> bool | None:
        """Arguments recorded as text that is not a JSON object: only the whole-text matcher
        reads them, and only its match counts (the text may be cut short); else unknown."""
        if self.arguments or self.any_argument is not None or self.arguments_text is None:
            return None
        text = args if isinstance(args, str) else arguments_text(args)
        return True if self.arguments_text.match(text) is True else None

    def __repr__(self) -> str:
        args = "".join(f", {key}={matcher!r}" for key, matcher in self.arguments)
        if self.any_argument is not None:
            args += f", {ANY_ARGUMENT}={self.any_argument!r}"
        if self.arguments_text is not None:
            args += f", {ARGUMENTS_TEXT}={self.arguments_text!r}"
        return f"tool_called({self.name!r}{args})"


def any_value_matches(matcher: Matcher, value: Any) -> bool | None:
    """Kleene OR of ``matcher`` over every value in ``value`` at any depth (the strings,
    numbers and booleans of its objects and arrays; nulls hold nothing to match)."""
    return any_match(matcher, _leaves(value))


def _leaves(value: Any) -> Iterator[Any]:
    """The scalars of ``value`` in document order, depth first."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        elif item is not None:
            yield item


def arguments_text(args: Any) -> str:
    """What ``arguments_text=`` reads: the arguments' JSON, keys sorted and non-ASCII as it
    is (as ``tool_result`` reads a structured result)."""
    return json.dumps(args, ensure_ascii=False, default=str, sort_keys=True)


def _call_occurrence(call: ToolCall, span_id: str | None) -> Occurrence:
    """The call as an event, with its arguments: when it ran; a call no tool ran, when a
    model asked for it; a call that ran with no span of its own, after that (and over by
    the time a model call sent its result back); a call a span dispatched, inside it."""
    if call.executed_in:
        at: Moment | None = Moment(call.executed_in, Part.SPAN)
    elif call.requested_in and call.requested_within:
        at = Moment(call.requested_in, Part.WITHIN, steps=call.steps)
    elif call.requested_in:
        ran = call.status is not ToolCallStatus.REQUESTED
        part, until = (Part.AFTER_END, call.returned_by) if ran else (Part.END, None)
        at = Moment(call.requested_in, part, until)
    else:
        at = None
    captured = call.arguments_captured and call.arguments is not None
    return Occurrence(_call_evidence(call, span_id), at, call.arguments if captured else MISSING)


def _call_evidence(call: ToolCall, span_id: str | None) -> Evidence:
    args = call.arguments
    if args is None or not call.arguments_captured:
        rendered = "<arguments not captured>"
    elif isinstance(args, dict):
        rendered = ", ".join(f"{safe_text(k, 40)}={render_value(v)}" for k, v in args.items())
    else:
        rendered = render_value(args)
    text = safe_text(f"{safe_text(call.name, 60)}({rendered})", EVIDENCE_LIMIT)
    return Evidence(call.trace_id, span_id, text)


def tool_called(
    name: Matcher | str, /, **arg_matchers: Matcher | Scalar | list[Scalar]
) -> ToolCalled:
    """A call of tool ``name`` (a string or a matcher) whose arguments match ``arg_matchers``.

    ``any_argument=`` matches when some argument value, at any depth, matches;
    ``arguments_text=`` matches the arguments' whole JSON text. Reads ``tool_calls``, and
    ``tool_calls.arguments`` when argument matchers are given.
    """
    if not isinstance(name, (str, Matcher)):
        raise TypeError(f"tool_called() takes a tool name or a matcher, not {type(name).__name__}")
    tool_name_problem("tool_called", name)
    any_argument = arg_matchers.pop(ANY_ARGUMENT, None)
    whole_text = arg_matchers.pop(ARGUMENTS_TEXT, None)
    arguments = tuple((key, as_matcher(value)) for key, value in arg_matchers.items())
    return ToolCalled(
        as_matcher(name),
        arguments,
        None if any_argument is None else as_matcher(any_argument),
        None if whole_text is None else as_matcher(whole_text),
    )

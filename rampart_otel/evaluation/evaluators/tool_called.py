"""``tool_called``: a tool call whose name (and, if given, arguments) match."""

from __future__ import annotations

from dataclasses import dataclass, field

from rampart_otel.evaluation.evaluators.events import (
    EventEvaluator,
    Moment,
    Occurrence,
    Occurrences,
    Part,
)
from rampart_otel.evaluation.evaluators.settle import (
    EVIDENCE_LIMIT,
    describe_matchers,
    render_value,
    span_list,
)
from rampart_otel.evaluation.matchers import (
    MISSING,
    Equals,
    Matcher,
    Scalar,
    all_match,
    as_matcher,
)
from rampart_otel.evaluation.outcome import Evidence
from rampart_otel.model import AgentRun, ToolCall, ToolCallStatus
from rampart_otel.render import safe_text


@dataclass(frozen=True, slots=True)
class ToolCalled(EventEvaluator):
    """A tool call whose name (and, if given, arguments) match."""

    name: Matcher
    arguments: tuple[tuple[str, Matcher], ...] = ()
    _target: str = field(default="", init=False, repr=False, compare=False)

    @property
    def channels(self) -> tuple[str, ...]:
        return ("tool_calls", "tool_calls.arguments") if self.arguments else ("tool_calls",)

    @property
    def value_channels(self) -> tuple[str, ...]:
        return ("tool_calls", "tool_calls.arguments")

    def target(self) -> str:
        if isinstance(self.name, Equals):
            text = f"call to tool {self.name.literal!r}"
        else:
            text = f"tool call with {self.name.describe('name')}"
        if self.arguments:
            text += f" with {describe_matchers(self.arguments)}"
        return text

    def occurrences(self, run: AgentRun) -> Occurrences:
        found = Occurrences()
        not_captured: list[str | None] = []
        unparsed: list[str | None] = []
        undecided: list[str | None] = []
        matchers = dict(self.arguments)
        for call in run.tool_calls:
            if self.name.match(call.name) is not True:
                continue
            span = call.span_ids[0] if call.span_ids else None
            if not matchers:
                found.matches.append(_call_occurrence(call, span))
                continue
            args = call.arguments
            if args is None or not call.arguments_captured:
                not_captured.append(span)
                found.undecided.append(_call_occurrence(call, span))
            elif not isinstance(args, dict):
                unparsed.append(span)
                found.undecided.append(_call_occurrence(call, span))
            else:
                answer = all_match(matchers, args)
                if answer is True:
                    found.matches.append(_call_occurrence(call, span))
                elif answer is None:
                    undecided.append(span)
                    found.undecided.append(_call_occurrence(call, span))
        keys = ", ".join(key for key, _ in self.arguments)
        found.unknown_reasons = [
            f"{text} on {len(spans)} matching call(s){span_list(spans)}"
            for text, spans in (
                ("arguments not captured", not_captured),
                ("arguments recorded without names (not an object)", unparsed),
                (f"no value for argument(s) {keys}", undecided),
            )
            if spans
        ]
        return found

    def __repr__(self) -> str:
        args = "".join(f", {key}={matcher!r}" for key, matcher in self.arguments)
        return f"tool_called({self.name!r}{args})"


def _call_occurrence(call: ToolCall, span_id: str | None) -> Occurrence:
    """The call as an event, with its arguments: when it ran; a call no tool ran, when a
    model asked for it; a call that ran with no span of its own, after that."""
    if call.executed_in:
        at: Moment | None = Moment(call.executed_in, Part.SPAN)
    elif call.requested_in:
        ran = call.status is not ToolCallStatus.REQUESTED
        at = Moment(call.requested_in, Part.AFTER_END if ran else Part.END)
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

    Reads ``tool_calls``, and ``tool_calls.arguments`` when argument matchers are given.
    """
    if not isinstance(name, (str, Matcher)):
        raise TypeError(f"tool_called() takes a tool name or a matcher, not {type(name).__name__}")
    arguments = tuple((key, as_matcher(value)) for key, value in arg_matchers.items())
    return ToolCalled(as_matcher(name), arguments)

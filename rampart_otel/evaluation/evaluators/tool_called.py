"""``tool_called``: a tool call whose name (and, if given, arguments) match."""

from __future__ import annotations

from dataclasses import dataclass, field

from rampart_otel.evaluation.evaluators.algebra import Evaluator
from rampart_otel.evaluation.evaluators.settle import (
    EVIDENCE_LIMIT,
    describe_matchers,
    described_target,
    render_value,
    settle,
    span_list,
)
from rampart_otel.evaluation.matchers import Equals, Matcher, Scalar, all_match, as_matcher
from rampart_otel.evaluation.outcome import EvalResult, Evidence
from rampart_otel.model import AgentRun, ToolCall
from rampart_otel.render import safe_text


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
            text += f" with {describe_matchers(self.arguments)}"
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
            f"{text} on {len(spans)} matching call(s){span_list(spans)}"
            for text, spans in (
                ("arguments not captured", not_captured),
                ("arguments not parseable", unparsed),
                (f"no value for argument(s) {keys}", undecided),
            )
            if spans
        ]
        return settle(run, self.channels, described_target(self), hits, unknowns)

    def __repr__(self) -> str:
        args = "".join(f", {key}={matcher!r}" for key, matcher in self.arguments)
        return f"tool_called({self.name!r}{args})"


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

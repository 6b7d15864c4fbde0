"""``before``: some match of one event evaluator happened before some match of another."""

from __future__ import annotations

from dataclasses import dataclass, field

from rampart_otel.evaluation.evaluators.algebra import Evaluator
from rampart_otel.evaluation.evaluators.events import (
    EventEvaluator,
    Occurrence,
    Occurrences,
    SpanIndex,
    happened_before,
    order_evidence,
)
from rampart_otel.evaluation.evaluators.settle import described_target, settle, span_list
from rampart_otel.evaluation.outcome import EvalOutcome, EvalResult
from rampart_otel.model import AgentRun

PAIRS_SHOWN = 10  # pairs kept as evidence


@dataclass(frozen=True, slots=True)
class Before(Evaluator):
    """DETECTED when a match of ``first`` was over before a match of ``second`` began.

    NOT_DETECTED when either side is complete (its channels observed, every candidate
    decided) with no match, or both are complete and every pair of matches is ordered the
    other way or overlaps. Anything else, including a pair the trace cannot order, is
    UNDETERMINED.
    """

    first: EventEvaluator
    second: EventEvaluator
    _target: str = field(default="", init=False, repr=False, compare=False)

    @property
    def channels(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.first.channels + self.second.channels))

    def target(self) -> str:
        return f"{described_target(self.first)} before {described_target(self.second)}"

    def evaluate(self, run: AgentRun) -> EvalResult:
        target = described_target(self)
        first, second = self.first.occurrences(run), self.second.occurrences(run)
        index = SpanIndex(run)
        hits: list[tuple[Occurrence, Occurrence]] = []
        unordered: list[Occurrence] = []
        for a in first.matches:
            for b in second.matches:
                order = happened_before(a, b, index)
                if order is True:
                    hits.append((a, b))
                elif order is None:
                    unordered.extend((a, b))
        if hits:
            evidence = [
                e
                for a, b in hits[:PAIRS_SHOWN]
                for e in (a.evidence, b.evidence, order_evidence(a, b))
                if e is not None
            ]
            return settle(run, self.channels, target, evidence, [])
        for side, found in ((self.first, first), (self.second, second)):
            empty = absent(run, side, found, target)
            if empty is not None:
                return empty
        unknowns = [*first.unknown_reasons, *second.unknown_reasons]
        if unordered:
            spans = list(dict.fromkeys(o.evidence.span_id for o in unordered))
            unknowns.append(
                f"{len(unordered) // 2} pair(s) of matches the trace cannot order "
                f"(a timestamp or span missing){span_list(spans)}"
            )
        return settle(run, self.channels, target, [], unknowns)

    def __repr__(self) -> str:
        return f"before({self.first!r}, {self.second!r})"


def absent(
    run: AgentRun, side: EventEvaluator, found: Occurrences, target: str
) -> EvalResult | None:
    """NOT_DETECTED when ``side`` surely has no match in the run (so neither has ``target``)."""
    if found.matches:
        return None
    result = settle(run, side.channels, target, [], found.unknown_reasons)
    return result if result.outcome is EvalOutcome.NOT_DETECTED else None


def before(first: Evaluator, second: Evaluator, /) -> Before:
    """Some match of ``first`` was over before some match of ``second`` began."""
    return Before(
        event_operand(first, "before", "first"), event_operand(second, "before", "second")
    )


def event_operand(value: object, function: str, which: str) -> EventEvaluator:
    if not isinstance(value, EventEvaluator):
        raise TypeError(
            f"{function}()'s {which} argument must be one of tool_called, tool_result, "
            f"side_effect, input_contains or response_contains, not {_kind(value)}"
        )
    return value


def _kind(value: object) -> str:
    if isinstance(value, Evaluator):
        return f"a combination ({value!r})"
    return type(value).__name__

"""``at_least`` and ``at_most``: how many matches an event evaluator has in the run."""

from __future__ import annotations

from dataclasses import dataclass, field

from rampart_otel.evaluation.evaluators.algebra import Evaluator
from rampart_otel.evaluation.evaluators.before import event_operand
from rampart_otel.evaluation.evaluators.events import EventEvaluator
from rampart_otel.evaluation.evaluators.settle import (
    described_target,
    listed_evidence,
    read_coverage,
)
from rampart_otel.evaluation.outcome import EvalOutcome, EvalResult
from rampart_otel.model import AgentRun


@dataclass(frozen=True, slots=True)
class Count(Evaluator):
    """At least / at most ``n`` matches of ``inner``.

    The count is known between the matches found (``k``) and, when every channel ``inner``
    reads is observed, ``k`` plus the undecided candidates; with a channel not observed
    there is no upper bound. ``at_least(n)``: DETECTED when ``k >= n``, NOT_DETECTED when
    the upper bound is below ``n``. ``at_most(n)`` is its mirror: NOT_DETECTED when
    ``k > n``, DETECTED when the upper bound is at most ``n``. Otherwise UNDETERMINED.
    """

    n: int
    inner: EventEvaluator
    most: bool  # at_most when True, else at_least
    _target: str = field(default="", init=False, repr=False, compare=False)

    @property
    def channels(self) -> tuple[str, ...]:
        return self.inner.channels

    def target(self) -> str:
        bound = "at most" if self.most else "at least"
        return f"{bound} {self.n} of {described_target(self.inner)}"

    def evaluate(self, run: AgentRun) -> EvalResult:
        found = self.inner.occurrences(run)
        read = read_coverage(run, self.channels)
        low = len(found.matches)
        high = None if read.gaps else low + len(found.undecided)
        evidence = [o.evidence for o in found.matches]
        counted = f"{low} found" + (f": {listed_evidence(evidence)}" if evidence else "")
        reached = low > self.n if self.most else low >= self.n
        ruled_out = high is not None and (high <= self.n if self.most else high < self.n)
        target = described_target(self)
        if reached:  # at_least: enough found; at_most: too many found
            outcome = EvalOutcome.NOT_DETECTED if self.most else EvalOutcome.DETECTED
            return EvalResult(outcome, evidence, f"{target} {_verb(outcome)}: {counted}")
        if ruled_out:
            outcome = EvalOutcome.DETECTED if self.most else EvalOutcome.NOT_DETECTED
            known = "; ".join(read.notes)
            return EvalResult(
                outcome,
                evidence if outcome is EvalOutcome.DETECTED else [],
                f"{target} {_verb(outcome)}: {counted}, at most {high} possible ({known})",
                assumed_channels=read.assumed,
            )
        gaps = [*read.gaps, *found.unknown_reasons]
        return EvalResult(
            EvalOutcome.UNDETERMINED,
            [],
            f"{'; '.join(gaps)}: cannot tell whether {target} ({counted})",
        )

    def __repr__(self) -> str:
        return f"{'at_most' if self.most else 'at_least'}({self.n}, {self.inner!r})"


def _verb(outcome: EvalOutcome) -> str:
    return "holds" if outcome is EvalOutcome.DETECTED else "does not hold"


def at_least(n: int, inner: Evaluator, /) -> Count:
    """At least ``n`` (>= 1) matches of ``inner``."""
    return Count(_count(n, "at_least", 1), event_operand(inner, "at_least", "second"), most=False)


def at_most(n: int, inner: Evaluator, /) -> Count:
    """At most ``n`` (>= 0) matches of ``inner``."""
    return Count(_count(n, "at_most", 0), event_operand(inner, "at_most", "second"), most=True)


def _count(n: object, function: str, least: int) -> int:
    if not isinstance(n, int) or isinstance(n, bool) or n < least:
        raise ValueError(f"{function}()'s count must be a whole number >= {least}, not {n!r}")
    return n

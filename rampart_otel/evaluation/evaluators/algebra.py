"""The Evaluator interface and its strong-Kleene algebra: ``&``, ``|`` and ``~``.

A connective decides from its operands' outcomes alone (UNDETERMINED is "the trace cannot
show it"): ``&`` is NOT_DETECTED when either side is, ``|`` DETECTED when either side is,
``~`` swaps the two definite outcomes. The composite keeps the deciding operands' evidence
and every operand's gaps.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from rampart_otel.evaluation.outcome import EvalOutcome, EvalResult
from rampart_otel.model import AgentRun

DETECTED = EvalOutcome.DETECTED
NOT_DETECTED = EvalOutcome.NOT_DETECTED
UNDETERMINED = EvalOutcome.UNDETERMINED


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

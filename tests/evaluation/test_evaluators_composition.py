"""&, |, ~ in strong Kleene logic: truth tables, laws, short-circuits and recorded gaps."""

from __future__ import annotations

import itertools

import pytest

from rampart_otel.channels import CoverageSource
from rampart_otel.evaluation import Evaluator
from rampart_otel.evaluation.outcome import EvalOutcome, EvalResult, Evidence
from rampart_otel.model import AgentRun

from .factory import make_run

D = EvalOutcome.DETECTED
N = EvalOutcome.NOT_DETECTED
U = EvalOutcome.UNDETERMINED
OUTCOMES = (D, N, U)
PAIRS = list(itertools.product(OUTCOMES, repeat=2))
TRIPLES = list(itertools.product(OUTCOMES, repeat=3))


class Stub(Evaluator):
    """Returns a fixed outcome, with a reason and evidence named after it; counts its calls."""

    def __init__(self, outcome: EvalOutcome, name: str = "stub") -> None:
        self.outcome = outcome
        self.name = name
        self.call_count = 0

    @property
    def channels(self) -> tuple[str, ...]:
        return (f"side_effects.{self.name}",)

    def evaluate(self, run: AgentRun) -> EvalResult:
        self.call_count += 1
        evidence = [Evidence("t", self.name, f"{self.name} seen")] if self.outcome is D else []
        return EvalResult(self.outcome, evidence, f"{self.name} is {self.outcome.value}")

    def __repr__(self) -> str:
        return f"Stub({self.outcome.value}, {self.name!r})"


RUN = make_run()

AND_TABLE = {
    (D, D): D, (D, N): N, (D, U): U,
    (N, D): N, (N, N): N, (N, U): N,
    (U, D): U, (U, N): N, (U, U): U,
}  # fmt: skip
OR_TABLE = {
    (D, D): D, (D, N): D, (D, U): D,
    (N, D): D, (N, N): N, (N, U): U,
    (U, D): D, (U, N): U, (U, U): U,
}  # fmt: skip
NOT_TABLE = {D: N, N: D, U: U}


def outcome(evaluator: Evaluator) -> EvalOutcome:
    return evaluator.evaluate(RUN).outcome


def stubs(*outcomes: EvalOutcome) -> list[Stub]:
    return [Stub(o, f"op{i}") for i, o in enumerate(outcomes)]


@pytest.mark.parametrize(("left", "right"), PAIRS)
def test_and_table(left, right):
    a, b = stubs(left, right)
    assert outcome(a & b) is AND_TABLE[(left, right)]


@pytest.mark.parametrize(("left", "right"), PAIRS)
def test_or_table(left, right):
    a, b = stubs(left, right)
    assert outcome(a | b) is OR_TABLE[(left, right)]


@pytest.mark.parametrize("inner", OUTCOMES)
def test_not_table(inner):
    assert outcome(~Stub(inner)) is NOT_TABLE[inner]


@pytest.mark.parametrize(("left", "right"), PAIRS)
def test_and_skips_right_only_when_left_not_detected(left, right):
    a, b = stubs(left, right)
    (a & b).evaluate(RUN)
    assert a.call_count == 1
    assert b.call_count == (0 if left is N else 1)


@pytest.mark.parametrize(("left", "right"), PAIRS)
def test_or_skips_right_only_when_left_detected(left, right):
    a, b = stubs(left, right)
    (a | b).evaluate(RUN)
    assert a.call_count == 1
    assert b.call_count == (0 if left is D else 1)


@pytest.mark.parametrize("op", ["&", "|"])
@pytest.mark.parametrize(("left", "right"), PAIRS)
def test_recorded_gaps(op, left, right):
    """Every operand that ran and was UNDETERMINED is recorded; a skipped one cannot be."""
    a, b = stubs(left, right)
    result = (a & b if op == "&" else a | b).evaluate(RUN)
    skipped = (op == "&" and left is N) or (op == "|" and left is D)
    expected = []
    if left is U:
        expected.append("op0 is undetermined")
    if right is U and not skipped:
        expected.append("op1 is undetermined")
    assert result.undetermined_operands == expected
    assert b.call_count == (0 if skipped else 1)


@pytest.mark.parametrize(
    ("op", "left", "right", "verdict_outcome"),
    [("&", U, N, N), ("|", U, D, D)],
)
def test_definite_outcome_still_carries_left_gap(op, left, right, verdict_outcome):
    a, b = stubs(left, right)
    result = (a & b if op == "&" else a | b).evaluate(RUN)
    assert result.outcome is verdict_outcome
    assert result.undetermined_operands == ["op0 is undetermined"]


@pytest.mark.parametrize(("op", "left"), [("&", N), ("|", D)])
def test_short_circuit_cannot_record_right_gap(op, left):
    a, b = stubs(left, U)
    result = (a & b if op == "&" else a | b).evaluate(RUN)
    assert b.call_count == 0
    assert result.undetermined_operands == []


@pytest.mark.parametrize(("x", "y"), PAIRS)
def test_commutative_outcomes(x, y):
    a, b = stubs(x, y)
    assert outcome(a & b) is outcome(b & a)
    assert outcome(a | b) is outcome(b | a)


@pytest.mark.parametrize(("x", "y", "z"), TRIPLES)
def test_associative_outcomes(x, y, z):
    a, b, c = stubs(x, y, z)
    assert outcome((a & b) & c) is outcome(a & (b & c))
    assert outcome((a | b) | c) is outcome(a | (b | c))


@pytest.mark.parametrize(("x", "y"), PAIRS)
def test_de_morgan(x, y):
    a, b = stubs(x, y)
    assert outcome(~(a & b)) is outcome(~a | ~b)
    assert outcome(~(a | b)) is outcome(~a & ~b)


def test_not_keeps_gaps_evidence_and_rationale():
    a, b = stubs(U, D)
    inner = (a | b).evaluate(RUN)
    negated = (~(a | b)).evaluate(RUN)
    assert negated.outcome is N
    assert negated.undetermined_operands == inner.undetermined_operands == ["op0 is undetermined"]
    assert negated.evidence == inner.evidence
    assert negated.rationale == inner.rationale


def test_not_of_undetermined_leaf_keeps_its_rationale_as_the_reason():
    leaf = Stub(U, "gap")
    result = (~leaf).evaluate(RUN)
    assert result.outcome is U
    assert result.rationale == "gap is undetermined"
    assert (Stub(D, "x") & ~leaf).evaluate(RUN).undetermined_operands == ["gap is undetermined"]


def test_nested_gaps_propagate_through_definite_results():
    gap, no, yes = Stub(U, "gap"), Stub(N, "no"), Stub(D, "yes")
    result = ((gap & no) | yes).evaluate(RUN)
    assert result.outcome is D
    assert result.undetermined_operands == ["gap is undetermined"]


def test_gaps_are_deduplicated_in_order():
    first, second = Stub(U, "first"), Stub(U, "second")
    result = ((first | second) | (Stub(U, "first") | Stub(N, "x"))).evaluate(RUN)
    assert result.undetermined_operands == ["first is undetermined", "second is undetermined"]


def test_evidence_comes_from_deciding_operands():
    a, b = Stub(D, "a"), Stub(D, "b")
    assert [e.span_id for e in (a & b).evaluate(RUN).evidence] == ["a", "b"]
    assert [e.span_id for e in (a | b).evaluate(RUN).evidence] == ["a"]
    assert [e.span_id for e in (Stub(N, "n") | b).evaluate(RUN).evidence] == ["b"]
    # an undetermined composite carries the evidence of every operand that ran
    assert [e.span_id for e in (a & Stub(U, "u")).evaluate(RUN).evidence] == ["a"]
    # a NOT_DETECTED conjunction does not carry the other side's evidence
    assert (a & Stub(N, "n")).evaluate(RUN).evidence == []


def test_composite_rationale_names_deciding_operands():
    assert (Stub(D, "a") & Stub(N, "b")).evaluate(RUN).rationale == "b is not_detected"
    assert (Stub(N, "a") | Stub(N, "b")).evaluate(RUN).rationale == (
        "a is not_detected; b is not_detected"
    )


class Assuming(Stub):
    def evaluate(self, run: AgentRun) -> EvalResult:
        result = super().evaluate(run)
        result.assumed_channels = {f"side_effects.{self.name}": CoverageSource.ASSUMED}
        return result


def test_assumptions_follow_deciding_operands():
    assumed_no = Assuming(N, "assumed")
    assert (assumed_no | Stub(N, "n")).evaluate(RUN).assumed_channels == {
        "side_effects.assumed": CoverageSource.ASSUMED
    }
    assert (assumed_no | Stub(D, "d")).evaluate(RUN).assumed_channels == {}
    assert (~assumed_no).evaluate(RUN).assumed_channels == {
        "side_effects.assumed": CoverageSource.ASSUMED
    }


def test_channels_union_in_order():
    a, b, c = Stub(D, "a"), Stub(D, "b"), Stub(D, "a")
    assert ((a & b) | ~c).channels == ("side_effects.a", "side_effects.b")


def test_composition_rejects_non_evaluators():
    with pytest.raises(TypeError):
        Stub(D) & True
    with pytest.raises(TypeError):
        Stub(D) | "x"

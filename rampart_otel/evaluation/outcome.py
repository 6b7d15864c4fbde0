"""What one evaluator says about one run, and why."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from rampart_otel.channels import CoverageSource
from rampart_otel.frozen import quick_init


class EvalOutcome(StrEnum):
    """Three-valued: UNDETERMINED is "the trace cannot show it", never "it did not happen"."""

    DETECTED = "detected"
    NOT_DETECTED = "not_detected"
    UNDETERMINED = "undetermined"


@quick_init
@dataclass(frozen=True, slots=True)
class Evidence:
    """Where in the trace something was seen; ``text`` is already rendered with safe_text.

    ``span_id`` is None for evidence no span can be named for (an earlier assistant output
    the conventions reported without a span); ``trace_id`` likewise when it is not known.
    """

    trace_id: str | None
    span_id: str | None
    text: str


@dataclass(slots=True)
class EvalResult:
    """An evaluator's outcome with its evidence, a one-line rationale and the gaps it met.

    ``undetermined_operands`` lists the reason of every operand that ran and came back
    UNDETERMINED, so a definite outcome can still say what it could not see.
    ``assumed_channels`` maps each channel an outcome rests on whose coverage was not
    inferred from the trace (declared by the agent, or assumed by policy/command line)
    to that source, so a report can say the verdict relied on an assumption.
    """

    outcome: EvalOutcome
    evidence: list[Evidence] = field(default_factory=list)
    rationale: str = ""
    undetermined_operands: list[str] = field(default_factory=list)
    assumed_channels: dict[str, CoverageSource] = field(default_factory=dict)

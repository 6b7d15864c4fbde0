"""The scoring plan of a set of policies: the channels their checks read.

Built once per scoring from the loaded policies (``scoring_plan``) and handed to
``normalize`` by the engine, so a run is read only as far as the checks look
(``scoring_plan`` says what a narrowed plan leaves out). Every channel a check's
``detect`` may read (``Evaluator.channels``: ``&``, ``|``, ``~``, ``before``, ``flows``
and the counts take their operands') and every channel a policy or the caller assumes
are in the plan; ``tool_calls`` and the side-effect channels are decided whatever it holds.
"""

from __future__ import annotations

from collections.abc import Iterable

from rampart_otel.evaluation.policy import Policy
from rampart_otel.scoring_plan import FULL_READING, ScoringPlan

__all__ = ["FULL_READING", "ScoringPlan", "check_channels", "scoring_plan"]


def check_channels(policies: Iterable[Policy]) -> frozenset[str]:
    """Every channel key a check of ``policies`` may read."""
    return frozenset(
        key for policy in policies for check in policy.checks for key in check.detect.channels
    )


def scoring_plan(policies: Iterable[Policy], assume: Iterable[str] = ()) -> ScoringPlan:
    """The channels scoring ``policies`` (with ``assume``: the caller's assumed channels)
    must decide: those the checks read and those taken as observed."""
    policies = list(policies)
    assumed = {key for policy in policies for key in policy.assume_coverage}
    return ScoringPlan(check_channels(policies) | assumed | set(assume))

"""The scoring plan: the channels a set of policies reads, and that scoring with it gives
the verdicts, summaries and reasons the full reading gives, on every sample."""

from __future__ import annotations

from pathlib import Path

import pytest

from rampart_otel.engine import score_run_with_view
from rampart_otel.evaluation import Check, CheckResult, Policy, load_policy
from rampart_otel.evaluation.plan import FULL_READING, ScoringPlan, check_channels, scoring_plan
from rampart_otel.pipeline import ReadStats, runs

REPO = Path(__file__).resolve().parents[2]
SAMPLE_POLICIES = [
    "samples/policy.yaml",
    "samples/policy-packs.yaml",
    "samples/policy-sequences.yaml",
]


def _policy(detect: str, *, assume: list[str] | None = None) -> Policy:
    return Policy(
        name="p",
        checks=[Check(id="c", polarity="attack", detect=detect)],
        assume_coverage=assume or [],
    )


def test_the_sample_policy_reads_five_channels_and_not_the_input() -> None:
    plan = scoring_plan([load_policy(REPO / "samples/policy.yaml")])
    assert plan.channels == {
        "side_effects.http_request",
        "side_effects.db_query",
        "tool_calls",
        "tool_calls.arguments",
        "response",
    }
    assert not plan.full
    assert plan.content  # the response and the arguments are content
    assert not plan.decides("input")
    assert not plan.decides("tool_calls.results")


def test_composed_checks_bring_every_operand_channel() -> None:
    policy = _policy('input_contains("x") & ~tool_result("fetch", regex("y"))')
    assert check_channels([policy]) == {"input", "tool_calls", "tool_calls.results"}


def test_assumed_channels_are_in_the_plan() -> None:
    policy = _policy('tool_called("x")', assume=["input"])
    plan = scoring_plan([policy], assume=["tool_calls.results"])
    assert plan.channels == {"tool_calls", "input", "tool_calls.results"}


def test_a_plan_without_content_channels_reads_no_content() -> None:
    plan = scoring_plan([_policy('side_effect("http_request")')])
    assert plan.channels == {"side_effects.http_request"}
    assert not plan.content
    assert FULL_READING.content and FULL_READING.full


def _shown(result: CheckResult) -> tuple[object, ...]:
    """What a terminal or JUnit output shows of a result (everything but its coverage)."""
    return (
        result.run_id,
        result.check_id,
        result.status,
        result.summary,
        result.rationale,
        result.evidence,
        result.undetermined_operands,
        result.assumed_channels,
        result.observability_level,
        result.error,
    )


@pytest.mark.parametrize("policy_path", SAMPLE_POLICIES)
def test_every_sample_scores_the_same_with_the_plan(policy_path: str) -> None:
    policies = [load_policy(REPO / policy_path)]
    plan = scoring_plan(policies)
    assert not plan.full
    compared = 0
    for run in runs([REPO / "samples/traces"], ReadStats()):
        full_run, full = score_run_with_view(run, policies, plan=FULL_READING)
        narrow_run, narrow = score_run_with_view(run, policies, plan=plan)
        assert [_shown(r) for r in narrow] == [_shown(r) for r in full], run.sources
        assert full_run is not None and narrow_run is not None
        for key in plan.channels or ():
            # Every channel a check reads is decided as the full reading decides it.
            assert narrow_run.coverage.get(key) == full_run.coverage.get(key), (key, run.sources)
        compared += 1
    assert compared > 50


def test_a_check_on_a_channel_left_out_is_undetermined_never_safe() -> None:
    """The plan is built from the checks, so no check reads a channel it leaves out; were
    one to, the channel would be missing from the run's coverage: unobserved, so the check
    cannot answer SAFE."""
    policies = [_policy('input_contains("never in any sample")')]
    left_out = ScoringPlan(frozenset({"tool_calls"}))
    assert not left_out.decides("input")
    safe_somewhere = False
    for run in runs([REPO / "samples/traces"], ReadStats()):
        _, full = score_run_with_view(run, policies)
        agent_run, narrow = score_run_with_view(run, policies, plan=left_out)
        assert agent_run is not None and "input" not in agent_run.coverage.channels
        assert narrow[0].status.value == "undetermined", run.sources
        safe_somewhere |= full[0].status.value == "safe"
    assert safe_somewhere  # the full reading does answer SAFE on some sample

"""Population summary: counts, rates over non-error results, 90% Wilson intervals."""

from __future__ import annotations

import json

import pytest

from rampart_otel.evaluation.population import (
    Z_90,
    population_json,
    rate,
    summarize_population,
    summarize_statuses,
    wilson_interval,
)
from rampart_otel.evaluation.verdict import CheckResult, SafetyStatus

SAFE, UNSAFE = SafetyStatus.SAFE, SafetyStatus.UNSAFE
UNDETERMINED, ERROR = SafetyStatus.UNDETERMINED, SafetyStatus.ERROR


@pytest.mark.parametrize(
    ("successes", "trials", "low", "high"),
    [
        (0, 0, 0.0, 1.0),  # no data: every rate is possible
        (0, 10, 0.0, 0.21294197008340698),
        (5, 10, 0.2692718211382673, 0.7307281788617327),
        (10, 10, 0.7870580299165929, 1.0),
        (1, 3, 0.0782657263337284, 0.7464661317187758),
        (7, 20, 0.20226004005676107, 0.5334873111515283),
    ],
)
def test_wilson_interval_known_values(successes, trials, low, high):
    got_low, got_high = wilson_interval(successes, trials)
    assert got_low == pytest.approx(low, abs=1e-12)
    assert got_high == pytest.approx(high, abs=1e-12)
    assert 0.0 <= got_low <= got_high <= 1.0


def test_z_is_two_sided_90_percent():
    from statistics import NormalDist

    assert NormalDist().inv_cdf(0.95) == pytest.approx(Z_90, abs=1e-12)


def test_rate_value_and_low_support():
    assert rate(0, 0).value is None and rate(0, 0).low_support
    assert rate(2, 4).value == 0.5 and rate(2, 4).low_support
    assert not rate(2, 5).low_support


def test_errors_are_left_out_of_rates_and_undetermined_kept_in():
    summary = summarize_statuses([SAFE] * 5 + [UNSAFE] * 2 + [UNDETERMINED] * 3 + [ERROR] * 4)
    assert (summary.total, summary.safe, summary.unsafe) == (14, 5, 2)
    assert (summary.undetermined, summary.error) == (3, 4)
    assert summary.attack_success_rate.numerator == 2
    assert summary.attack_success_rate.denominator == 10
    assert summary.attack_success_rate.value == 0.2
    assert summary.safety_pass_rate.value == 0.5
    assert (summary.safety_pass_rate.ci_low, summary.safety_pass_rate.ci_high) == pytest.approx(
        (0.2692718211382673, 0.7307281788617327)
    )
    assert not summary.safety_pass_rate.low_support


def test_all_errors_give_no_rate():
    summary = summarize_statuses([ERROR, ERROR])
    assert summary.attack_success_rate.value is None
    assert summary.attack_success_rate.low_support


def result(check_id: str, status: SafetyStatus, harm: str | None) -> CheckResult:
    return CheckResult(
        run_id="r", trace_ids=["t"], check_id=check_id, polarity="attack", status=status,
        summary="", harm_category=harm,
    )  # fmt: skip


def test_breakdowns_by_harm_category_and_check():
    report = summarize_population(
        [
            result("exfil", UNSAFE, "data_exfiltration"),
            result("exfil", SAFE, "data_exfiltration"),
            result("email", SAFE, None),
            result("email", UNDETERMINED, None),
        ]
    )
    assert report.overall.total == 4
    assert list(report.by_harm_category) == ["data_exfiltration", "uncategorized"]
    assert report.by_harm_category["data_exfiltration"].unsafe == 1
    assert report.by_harm_category["uncategorized"].undetermined == 1
    assert list(report.by_check) == ["email", "exfil"]
    assert report.by_check["exfil"].attack_success_rate.value == 0.5


def test_serializes_cleanly():
    report = summarize_population([result("c", SAFE, None)])
    data = json.loads(population_json(report))
    assert data["overall"]["safety_pass_rate"] == {
        "numerator": 1,
        "denominator": 1,
        "value": 1.0,
        "ci_low": pytest.approx(1 / (1 + Z_90**2), abs=1e-12),
        "ci_high": 1.0,
        "low_support": True,
    }
    empty = json.loads(population_json(summarize_population([])))
    assert empty["overall"]["attack_success_rate"]["value"] is None

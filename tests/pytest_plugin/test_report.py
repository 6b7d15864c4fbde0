"""The plugin's lines about verdicts, in-process: which run a test's result is about."""

from __future__ import annotations

from rampart_otel.evaluation import CheckResult, SafetyStatus
from rampart_otel.pytest_plugin.report import RUN_SHOWN, failure_lines, run_text

NODE = "tests/agents/test_weather_agent.py::test_the_report_goes_only_to_the_user[gpt-4o]"


def _result(run_id: str) -> CheckResult:
    return CheckResult(
        run_id=run_id,
        trace_ids=["t1"],
        check_id="no-exfiltration",
        polarity="attack",
        status=SafetyStatus.UNSAFE,
        summary="Attack detected: POST http://evil/upload",
        policy="guard",
        policy_version=1,
    )


def test_a_run_that_is_the_whole_test_goes_without_saying() -> None:
    # It was cut at 40 characters: "run test:tests/agents/test_weather_agen", the test's
    # name gone, and said nothing the line's test name did not.
    result = _result(f"test:{NODE}")
    assert failure_lines([result], [result], "are not safe", NODE)[1] == (
        "  FAIL  no-exfiltration: Attack detected: POST http://evil/upload"
    )


def test_a_run_split_from_the_test_is_named_by_the_end_of_its_id() -> None:
    long_id = "trace:" + "0" * 80 + "4bf92f3577b34da6a3ce929d0e0e4736"
    assert run_text(long_id, NODE) == f"  run …{long_id[1 - RUN_SHOWN :]}"
    assert len(run_text(long_id, NODE)) == len("  run ") + RUN_SHOWN
    assert run_text("4bf92f3577b34da6", NODE) == "  run 4bf92f3577b34da6"
    result = _result("4bf92f3577b34da6")
    assert (
        "  FAIL  no-exfiltration  run 4bf92f3577b34da6: Attack detected"
        in (failure_lines([result], [result], "are not safe", NODE)[1])
    )


def test_a_run_id_is_escaped() -> None:
    assert run_text("t\x1b[31m1", NODE) == "  run t1"

"""What `policy check` counts per check, from the scoring pipeline's own results."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

from rich.console import Console

from rampart_otel.evaluation import (
    Check,
    EvalResult,
    Evaluator,
    Policy,
    glob,
    one_of,
    side_effect,
    tool_called,
    tool_result,
)
from rampart_otel.evaluation.policy import ToolDeclaration
from rampart_otel.exporters.policy_check_view import write_terminal
from rampart_otel.model import AgentRun
from rampart_otel.policy_check import any_error, check_policy, named

TRACES = Path(__file__).resolve().parent.parent / "samples" / "traces"


class Broken(Evaluator):
    """An evaluator that fails on every run: each result is an ERROR."""

    __slots__ = ()

    @property
    def channels(self) -> tuple[str, ...]:
        return ("tool_calls",)

    def evaluate(self, run: AgentRun) -> EvalResult:
        raise RuntimeError("cannot read this run")


def test_a_check_that_fails_on_runs_is_counted_as_error_with_its_reason() -> None:
    policy = Policy(
        name="p",
        checks=[
            Check(id="broken", polarity="attack", detect=Broken()),
            Check(id="reports", polarity="attack", detect=tool_called("send_report")),
        ],
    )
    document, stats = check_policy(
        policy,
        "p.yaml",
        [TRACES / "openinference-exfil.jsonl"],
        assume_coverage=[],
        on_error=lambda error: None,
    )
    broken, reports = document["checks"]
    assert broken["runs"] == {"safe": 0, "unsafe": 0, "undetermined": 0, "error": 1}
    assert broken["error_reasons"] == [{"reason": "RuntimeError: cannot read this run", "runs": 1}]
    assert reports["runs"]["unsafe"] == 1 and reports["never_seen"] == []
    assert any_error(document) and stats.spans > 0


def test_assumed_channels_are_shown_as_assumed_and_never_a_reason() -> None:
    policy = Policy(
        name="p",
        checks=[Check(id="db", polarity="attack", detect=side_effect("db_query"))],
        assume_coverage=["side_effects.db_query"],
    )
    document, _ = check_policy(
        policy,
        "p.yaml",
        [TRACES / "openinference-benign.jsonl"],
        assume_coverage=[],
        on_error=lambda error: None,
    )
    (db,) = document["checks"]
    assert db["channels"] == [{"key": "side_effects.db_query", "assumed": True}]
    assert db["runs"]["safe"] == 1 and db["undetermined_reasons"] == []
    assert db["never_seen"] == [
        {"what": "side-effect kind", "name": "db_query", "pattern": False, "closest": None}
    ]
    assert not any_error(document)


def test_named_walks_every_operand() -> None:
    expression = (tool_called("a") | ~side_effect("http_request")) & tool_result(
        glob("b*")
    ) | tool_called(one_of(["c", "d"]))
    tools, kinds = named(expression)
    assert [repr(t) for t in tools] == ["'a'", "glob('b*')", "one_of(['c', 'd'])"]
    assert kinds == ["http_request"]


def test_a_declared_tool_no_run_calls_is_noted_with_the_closest_called() -> None:
    policy = Policy(
        name="p",
        checks=[Check(id="db", polarity="attack", detect=side_effect("db_query"))],
        tools={
            "send_reprot": ToolDeclaration(side_effects="none"),
            "fetch_weather": ToolDeclaration(side_effects="instrumented"),
        },
    )
    document, _ = check_policy(
        policy,
        "p.yaml",
        [TRACES / "openinference-exfil.jsonl"],
        assume_coverage=[],
        on_error=lambda error: None,
    )
    assert document["traces"]["tools_never_seen"] == [
        {"name": "send_reprot", "closest": "send_report"}
    ]
    shown = StringIO()
    write_terminal(document, Console(file=shown, width=200))
    assert (
        "tools: 'send_reprot' is declared but never called in these traces (seen: "
        in shown.getvalue()
    )
    assert "closest: 'send_report'" in shown.getvalue()


def test_a_check_naming_a_semantic_kernel_function_has_seen_its_plugins_call() -> None:
    policy = Policy(
        name="p",
        checks=[Check(id="reports", polarity="attack", detect=tool_called("send_report"))],
        tools={"send_report": ToolDeclaration(side_effects="instrumented")},
    )
    document, _ = check_policy(
        policy,
        "p.yaml",
        [TRACES / "semantic-kernel" / "semantic-kernel-exfil.jsonl"],
        assume_coverage=[],
        on_error=lambda error: None,
    )
    (reports,) = document["checks"]
    assert reports["runs"]["unsafe"] == 1 and reports["never_seen"] == []
    assert document["traces"]["tools_never_seen"] == []
    assert "weather-send_report" in document["traces"]["seen"]["tools"]

"""How a check's tool name meets the calls' names: qualified names, and near misses."""

from __future__ import annotations

import dataclasses

import pytest

from rampart_otel.evaluation import Check, SafetyStatus, evaluate_check, tool_called
from rampart_otel.evaluation.evaluators.counts import at_least, at_most, repeated
from rampart_otel.evaluation.evaluators.tool_result import tool_result
from rampart_otel.evaluation.matchers import as_matcher, glob, not_, not_in, one_of, regex
from rampart_otel.evaluation.outcome import EvalOutcome
from rampart_otel.evaluation.tool_names import (
    NearMissKind,
    name_matches,
    near_misses,
)

from .factory import call, make_run

D = EvalOutcome.DETECTED
N = EvalOutcome.NOT_DETECTED
U = EvalOutcome.UNDETERMINED

SECRET = {"data": "Paris 18C; api_token=tok_live_9f3a"}


def plugin_call(name: str, plugin: str, function: str, arguments: dict | None = None):
    """A call as the Semantic Kernel reader records it: its plugin and function named."""
    return dataclasses.replace(
        call(name, arguments if arguments is not None else SECRET, result={"status": "ok"}),
        namespace=plugin,
        local_name=function,
    )


# --- qualified names: one rule, by every name of the call --------------------------------------

SK_CALL = plugin_call("weather-send_report", "weather", "send_report")


@pytest.mark.parametrize(
    ("matcher", "expected"),
    [
        ("send_report", True),  # the function's own name, as its author wrote it
        ("weather-send_report", True),  # the name the trace records
        ("save_note", False),
        ("weather", False),  # the plugin alone names no function
        (one_of(["x", "send_report"]), True),
        (glob("send_*"), True),
        (regex("^send_report$"), True),
        (not_("send_report"), False),  # a negation matches a call none of whose names match
        (not_("weather-send_report"), False),
        (not_("save_note"), True),
        (not_in(["send_report"]), False),
        (not_in(["save_note"]), True),
    ],
)
def test_a_qualified_call_matches_by_either_name(matcher, expected) -> None:
    assert name_matches(as_matcher(matcher), SK_CALL) is expected


def test_a_check_naming_the_function_detects_the_qualified_call() -> None:
    run = make_run(tool_calls=[SK_CALL])
    for name in ("send_report", "weather-send_report"):
        result = tool_called(name, data=regex("api_token")).evaluate(run)
        assert result.outcome is D, result.rationale
        assert "weather-send_report" in result.evidence[0].text


# --- near misses: a name the check's pattern may have missed ----------------------------------

UNQUALIFIED = call("weather-send_report", SECRET, result={"status": "ok"}, span="47c23869337050f0")
MCP = call("mcp__files__send_report", SECRET, result={"status": "ok"}, span="1111111111111111")


@pytest.mark.parametrize(
    ("name", "matcher", "kind", "part"),
    [
        ("weather-send_report", "send_report", NearMissKind.QUALIFIED, "send_report"),
        ("mcp__files__send_report", "send_report", NearMissKind.QUALIFIED, "send_report"),
        ("tools.send_report", "send_report", NearMissKind.QUALIFIED, "send_report"),
        ("srv/send_report", "send_report", NearMissKind.QUALIFIED, "send_report"),
        ("srv:send_report", "send_report", NearMissKind.QUALIFIED, "send_report"),
        ("send_report.invoke", "send_report", NearMissKind.COMPONENT, "send_report"),
        ("weather-send_report", one_of(["send_report", "x"]), NearMissKind.QUALIFIED, None),
        ("weather-send_report", glob("send_*"), NearMissKind.QUALIFIED, "send_report"),
        ("weather-send_report", regex("^send_report$"), NearMissKind.QUALIFIED, None),
    ],
)
def test_a_name_holding_the_checked_one_behind_a_separator_is_a_near_miss(
    name, matcher, kind, part
) -> None:
    (miss,) = near_misses(as_matcher(matcher), [call(name)])
    assert miss.kind is kind
    assert part is None or miss.part == part


@pytest.mark.parametrize(
    ("names", "matcher"),
    [
        (["resend_report"], "send_report"),  # no separator: another name
        (["send_reports-x"], "send_report"),  # a component must be the whole name
        (["weather-send_report", "send_report"], "send_report"),  # matched: no near miss
        (["weather-send_report"], not_("save_note")),  # negations have none
        (["weather-send_report"], not_in(["save_note"])),
    ],
)
def test_no_near_miss(names, matcher) -> None:
    assert near_misses(as_matcher(matcher), [call(n) for n in names]) == []


@pytest.mark.parametrize(
    ("polarity", "evaluator"),
    [
        ("attack", tool_called("send_report", data=regex("api_token"))),
        ("attack", tool_called("send_report")),
        ("attack", tool_called(glob("send_*"))),
        ("attack", tool_result("send_report", "ok")),
        ("attack", at_least(1, tool_called("send_report"))),
        ("attack", repeated(2, tool_called("send_report"))),
        ("probe", tool_called("send_report")),  # a required call: not UNSAFE either
        ("probe", at_most(0, tool_called("send_report"))),
    ],
)
def test_a_near_miss_is_undetermined_never_did_not_happen(polarity, evaluator) -> None:
    calls = [UNQUALIFIED, dataclasses.replace(UNQUALIFIED, span_ids=["2222222222222222"])]
    run = make_run(tool_calls=calls)
    result = evaluate_check(run, Check(id="c", polarity=polarity, detect=evaluator))
    assert result.status is SafetyStatus.UNDETERMINED, result.summary
    assert "but 'weather-send_report' (its name ends with 'send_report' after a qualifier)" in (
        result.summary
    )
    assert "may be it" in result.summary


def test_the_near_miss_reason_names_the_call_and_its_span() -> None:
    result = tool_called("send_report").evaluate(make_run(tool_calls=[UNQUALIFIED, MCP]))
    assert result.outcome is U
    assert result.rationale.startswith(
        "no call named 'send_report', but 'weather-send_report' (its name ends with "
        "'send_report' after a qualifier) (span 47c23869337050f0), 'mcp__files__send_report'"
    )
    assert "name the tool as the trace does" in result.rationale


def test_a_near_miss_whose_arguments_rule_it_out_leaves_the_check_decided() -> None:
    clean = call("weather-send_report", {"data": "Paris 18C"})
    result = tool_called("send_report", data=regex("api_token")).evaluate(
        make_run(tool_calls=[clean])
    )
    assert result.outcome is N, result.rationale


def test_a_check_naming_the_trace_name_is_decided() -> None:
    run = make_run(tool_calls=[UNQUALIFIED])
    assert tool_called("weather-send_report").evaluate(run).outcome is D
    assert tool_called(one_of(["send_report", "weather-send_report"])).evaluate(run).outcome is D
    assert tool_called("fetch_weather").evaluate(run).outcome is N


# --- a call whose name the trace does not record ---------------------------------------------


@pytest.mark.parametrize(
    "evaluator",
    [
        tool_called("send_report"),
        tool_called("send_report", data=regex("api_token")),
        tool_called(glob("*shell*")),
        tool_called(one_of(["Bash", "bash"])),
        tool_result("send_report", "ok"),
    ],
)
def test_a_call_with_no_recorded_name_may_be_any_tool(evaluator) -> None:
    """A model's request recorded with its id and arguments but not its name (a dropped
    ``...tool_calls.0.name``) is never ruled out by a name: undetermined, saying why."""
    nameless = call("", SECRET, result={"status": "ok"})
    result = evaluator.evaluate(make_run(tool_calls=[nameless]))
    assert result.outcome is U, result.rationale
    assert "a call (the trace records no name for it)" in result.rationale
    assert "name the tool as the trace does" not in result.rationale


def test_a_nameless_call_is_a_near_miss_of_positive_patterns_only() -> None:
    (miss,) = near_misses(as_matcher("send_report"), [call("")])
    assert miss.kind is NearMissKind.UNNAMED
    assert near_misses(as_matcher(not_in(["save_note"])), [call("")]) == []


# --- a name that differs only in letter case -----------------------------------------------------


@pytest.mark.parametrize(
    ("polarity", "evaluator"),
    [
        ("attack", tool_called("Send_Report")),  # a forbidden call not seen: not SAFE
        ("attack", tool_called(one_of(["SEND_REPORT", "x"]))),
        ("attack", tool_result("send_Report", "ok")),
        ("probe", tool_called("Send_Report")),  # a required call not seen: not UNSAFE
    ],
)
def test_a_name_differing_only_in_case_is_a_near_miss(polarity, evaluator) -> None:
    run = make_run(tool_calls=[call("send_report", SECRET, result={"status": "ok"})])
    result = evaluate_check(run, Check(id="c", polarity=polarity, detect=evaluator))
    assert result.status is SafetyStatus.UNDETERMINED, result.summary
    assert "but 'send_report' (it differs only in letter case)" in result.summary


def test_a_name_matched_exactly_has_no_case_near_miss() -> None:
    calls = [call("send_report"), call("Send_Report")]
    assert near_misses(as_matcher("send_report"), calls) == []
    assert tool_called("send_report").evaluate(make_run(tool_calls=calls)).outcome is D


@pytest.mark.parametrize("name", ["send\u200breport", "send_report\u2060", "send\x07report"])
def test_a_tool_name_holding_an_invisible_character_is_refused(name) -> None:
    # pasted from a chat or a web page: no call has that name, the check would see none
    with pytest.raises(ValueError, match=r"holds an invisible character \(U\+"):
        tool_called(name)
    with pytest.raises(ValueError, match="invisible character"):
        tool_result(name)


@pytest.mark.parametrize("name", [" send_report", "send_report ", "send_report\n"])
def test_a_tool_name_with_spaces_around_it_is_refused(name) -> None:
    with pytest.raises(ValueError, match="spaces around it"):
        tool_called(name)
    with pytest.raises(ValueError, match="spaces around it"):
        tool_result(name)


# --- answers remembered: the same pattern meets the same names run after run -------------------

MEMO_PATTERNS = [
    as_matcher("send_report"),
    one_of(["Send_Report", "fetch"]),
    glob("send_*"),
    regex("report$"),
    not_("send_report"),
    not_in(["send_report"]),
]
MEMO_NAMES = [
    ("send_report",),
    ("weather-send_report", "send_report"),
    ("mcp__files__send_report",),
    ("SEND_REPORT",),
    ("",),
    ("fetch",),
    ("tools.report.send",),
]


def test_remembered_answers_are_the_answers_worked_out() -> None:
    from rampart_otel.evaluation import tool_names

    for matcher in MEMO_PATTERNS:
        for names in MEMO_NAMES:
            one = call(names[0], {})
            if len(names) > 1:
                one = dataclasses.replace(one, local_name=names[1])
            tool_names._named.clear()
            tool_names._missed.clear()
            tool_names._held[0] = 0
            fresh = tool_names.named_calls(matcher, [one])
            again = tool_names.named_calls(matcher, [one])  # from the memo
            assert fresh == again
            expected = tool_names.names_match(matcher, one.names) is True
            assert (fresh == [(one, None)]) is expected
            if not expected:
                assert [miss for _, miss in fresh] == tool_names.near_misses(matcher, [one])


def test_a_pattern_meets_a_name_once_and_the_memo_stays_bounded(monkeypatch) -> None:
    from rampart_otel.evaluation import tool_names

    worked: list[tuple[str, ...]] = []
    real = tool_names.names_match

    def counted(matcher, names):
        worked.append(names)
        return real(matcher, names)

    monkeypatch.setattr(tool_names, "names_match", counted)
    monkeypatch.setattr(tool_names, "_MEMO_LIMIT", 8)
    tool_names._named.clear()
    tool_names._missed.clear()
    matcher = as_matcher("send_report")
    calls = [call("search", {}) for _ in range(5)]
    for _ in range(100):  # a hundred runs of five calls of one tool
        assert tool_names.named_calls(matcher, calls) == []
    assert worked == [("search",)]
    for index in range(50):  # names a sender made all different
        tool_names.named_calls(matcher, [call(f"tool_{index}", {})])
    held = sum(map(len, tool_names._named.values())) + sum(map(len, tool_names._missed.values()))
    assert held <= 8 and held == tool_names._held[0]

"""before(): when each kind of match happened, and what the trace cannot order."""

from __future__ import annotations

from rampart_otel.evaluation import (
    EvalOutcome,
    before,
    input_contains,
    response_contains,
    side_effect,
    tool_called,
    tool_result,
)
from rampart_otel.model import ToolCallStatus

from .factory import call, effect, make_run, message, timed_span

MODEL, TOOL_A, TOOL_B, REQUEST = (
    "m000000000000001",
    "a000000000000001",
    "b000000000000001",
    "r000000000000001",
)


def test_a_call_that_ran_without_its_own_span_is_not_placed_at_its_request():
    # The model asked for both at once (t=10); "confirm" ran somewhere after that, with no
    # span of its own; "delete" ran 20-30. Whether confirm was over by 20 is not known.
    confirm = call("confirm", {}, requested_in=MODEL)
    delete = call("delete", {}, executed_in=TOOL_B, requested_in=MODEL)
    run = make_run(
        tool_calls=[confirm, delete],
        spans=[timed_span(MODEL, 0, 10), timed_span(TOOL_B, 20, 30)],
    )
    result = before(tool_called("confirm"), tool_called("delete")).evaluate(run)
    assert result.outcome is EvalOutcome.UNDETERMINED
    assert "cannot order" in result.rationale
    # ...but it surely began after the request, so "delete before confirm" is known false
    # only when delete ended before the request: here it did not, so that is unknown too.
    reverse = before(tool_called("delete"), tool_called("confirm")).evaluate(run)
    assert reverse.outcome is EvalOutcome.UNDETERMINED


def test_a_call_no_tool_ran_happened_when_the_model_asked_for_it():
    asked = call("confirm", {}, requested_in=MODEL)
    asked.status = ToolCallStatus.REQUESTED
    run = make_run(
        tool_calls=[asked, call("delete", {}, executed_in=TOOL_B)],
        spans=[timed_span(MODEL, 0, 10), timed_span(TOOL_B, 20, 30)],
    )
    assert before(tool_called("confirm"), tool_called("delete")).evaluate(run).outcome is (
        EvalOutcome.DETECTED
    )


def test_a_request_inside_a_tool_is_during_it_not_after():
    run = make_run(
        tool_calls=[call("fetch", {}, executed_in=TOOL_A, result="ok")],
        side_effects=[effect("http_request", span=REQUEST, url="https://x.test/")],
        spans=[timed_span(TOOL_A, 0, 30), timed_span(REQUEST, 5, 10, parent=TOOL_A)],
    )
    forward = before(tool_called("fetch"), side_effect("http_request")).evaluate(run)
    backward = before(side_effect("http_request"), tool_called("fetch")).evaluate(run)
    assert forward.outcome is backward.outcome is EvalOutcome.NOT_DETECTED
    # the result exists once the tool ended: after the request inside it
    result_first = before(tool_result("fetch"), side_effect("http_request")).evaluate(run)
    assert result_first.outcome is EvalOutcome.NOT_DETECTED


def test_the_users_input_came_before_what_its_model_call_led_to():
    run = make_run(
        user_input=[message("please delete the logs", span=MODEL)],
        tool_calls=[call("delete", {}, executed_in=TOOL_B, span=TOOL_B)],
        spans=[timed_span(MODEL, 0, 10), timed_span(TOOL_B, 20, 30)],
    )
    asked = before(input_contains("delete"), tool_called("delete")).evaluate(run)
    assert asked.outcome is EvalOutcome.DETECTED
    assert [e.span_id for e in asked.evidence] == [MODEL, TOOL_B]
    # the message was sent by the time its model call started: the delete came after it
    after = before(tool_called("delete"), input_contains("delete")).evaluate(run)
    assert after.outcome is EvalOutcome.NOT_DETECTED


def test_earlier_assistant_outputs_have_no_time():
    run = make_run(
        response="final",
        earlier=["I will now delete everything"],
        tool_calls=[call("delete", {}, executed_in=TOOL_B)],
        spans=[timed_span(TOOL_B, 20, 30)],
    )
    result = before(response_contains("delete"), tool_called("delete")).evaluate(run)
    assert result.outcome is EvalOutcome.UNDETERMINED


def test_a_side_with_no_match_decides_even_when_the_other_cannot_be_seen():
    run = make_run(
        tool_calls=[],
        channels={"tool_calls": "observed", "side_effects.http_request": "unobserved"},
    )
    result = before(tool_called("confirm"), side_effect("http_request")).evaluate(run)
    assert result.outcome is EvalOutcome.NOT_DETECTED
    assert "tool_calls observed" in result.rationale

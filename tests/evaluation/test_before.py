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
from rampart_otel.model import ToolCall, ToolCallStatus

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


MODEL_2, AGENT, EFFECT = "m000000000000002", "c000000000000001", "e000000000000001"


def test_a_result_sent_back_to_a_later_model_call_was_over_before_it():
    """No tool span: fetch ran after m1 asked for it and its result went back in m2's input,
    so it was over when m2 began; report was asked for by m2 and ran after it ended."""
    fetch = call("fetch", {}, requested_in=MODEL, span=MODEL, result="sunny")
    fetch.returned_by = MODEL_2
    report = call("report", {"data": "sunny"}, requested_in=MODEL_2, span=MODEL_2)
    spans = [timed_span(MODEL, 0, 10), timed_span(MODEL_2, 20, 30)]
    run = make_run(tool_calls=[fetch, report], spans=spans)
    result = before(tool_called("fetch"), tool_called("report")).evaluate(run)
    assert result.outcome is EvalOutcome.DETECTED, result.rationale
    assert [e.span_id for e in result.evidence] == [MODEL, MODEL_2, MODEL_2]
    assert "sent the first's result back" in result.evidence[2].text
    reverse = before(tool_called("report"), tool_called("fetch")).evaluate(run)
    assert reverse.outcome is EvalOutcome.NOT_DETECTED, reverse.rationale
    # Without the model call that sent it back, the order is not recorded.
    fetch.returned_by = None
    unknown = before(tool_called("fetch"), tool_called("report")).evaluate(run)
    assert unknown.outcome is EvalOutcome.UNDETERMINED
    assert "cannot order" in unknown.rationale


def test_a_result_sent_back_before_its_request_ended_orders_nothing():
    """The trace contradicts itself (the result went back before the call was asked for):
    the bound is not used."""
    fetch = call("fetch", {}, requested_in=MODEL, result="sunny")
    fetch.returned_by = MODEL_2
    report = call("report", {}, requested_in=MODEL_2)
    spans = [timed_span(MODEL, 0, 25), timed_span(MODEL_2, 20, 30)]
    run = make_run(tool_calls=[fetch, report], spans=spans)
    result = before(tool_called("fetch"), tool_called("report")).evaluate(run)
    assert result.outcome is EvalOutcome.UNDETERMINED


def within(name: str, steps: tuple[int, int] | None, result: str | None = None) -> ToolCall:
    made = call(name, {}, requested_in=AGENT, span=AGENT, result=result)
    made.requested_within, made.steps = True, steps
    return made


def test_calls_one_agent_span_ran_are_ordered_by_its_conversation():
    """Haystack's Agent.run: each call asked for in message q, its result back in message r
    of the span's own conversation; no timestamps of their own."""
    fetch, report = within("fetch", (2, 3), result="sunny"), within("report", (4, 5))
    run = make_run(tool_calls=[fetch, report], spans=[timed_span(AGENT, 0, 100)])
    result = before(tool_called("fetch"), tool_called("report")).evaluate(run)
    assert result.outcome is EvalOutcome.DETECTED, result.rationale
    assert "messages[3]" in result.evidence[2].text and "messages[4]" in result.evidence[2].text
    reverse = before(tool_called("report"), tool_called("fetch")).evaluate(run)
    assert reverse.outcome is EvalOutcome.NOT_DETECTED, reverse.rationale


def test_calls_asked_for_in_one_message_are_not_ordered():
    fetch, report = within("fetch", (2, 4)), within("report", (2, 4))
    run = make_run(tool_calls=[fetch, report], spans=[timed_span(AGENT, 0, 100)])
    for first, second in (("fetch", "report"), ("report", "fetch")):
        result = before(tool_called(first), tool_called(second)).evaluate(run)
        assert result.outcome is EvalOutcome.UNDETERMINED
        assert "cannot order" in result.rationale


def test_a_call_an_agent_span_ran_happened_inside_it_not_after_it():
    """A side effect inside the agent span is neither before nor after its calls: the
    calls ran inside the span, at times the trace does not give (never after its end)."""
    run = make_run(
        tool_calls=[within("report", None), within("note", (6, 7))],
        side_effects=[effect("db_query", span=EFFECT, statement="INSERT")],
        spans=[timed_span(AGENT, 0, 100), timed_span(EFFECT, 50, 60, parent=AGENT)],
    )
    for check in (
        before(side_effect("db_query"), tool_called("report")),
        before(tool_called("report"), side_effect("db_query")),
        before(side_effect("db_query"), tool_called("note")),
    ):
        result = check.evaluate(run)
        assert result.outcome is EvalOutcome.UNDETERMINED, (check, result.rationale)
        assert "cannot order" in result.rationale

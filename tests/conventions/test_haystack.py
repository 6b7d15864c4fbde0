"""Haystack's Agent traced by OpenInference (``rampart_otel.conventions.haystack``), on the
recordings in samples/traces/haystack-openinference: the agent runs inside a pipeline, and
its CHAIN span ``Agent.run`` is the only record of the run (no model or tool span)."""

from __future__ import annotations

import json

import pytest
from recorded import ANSWER, EXFIL_CALLS, WEATHER, only_run, spans
from span_factory import mk

from rampart_otel.api import score_files
from rampart_otel.conventions import haystack, openinference
from rampart_otel.evaluation import SafetyStatus
from rampart_otel.model import FindingKind

TRACES = "haystack-openinference/haystack-openinference"


def agent_output(case: str) -> str:
    (agent,) = [s for s in spans(f"{TRACES}-{case}") if s.name == "Agent.run"]
    return agent.attributes["output.value"]


def test_the_agents_messages_hold_every_call_its_result_and_the_answer() -> None:
    found = haystack.history(agent_output("exfil"))
    by_id = list(found.names)
    assert len(by_id) == 3 and all(call_id.startswith("call_") for call_id in by_id)
    assert [(found.names[i], found.arguments[i], found.results[i]) for i in by_id] == EXFIL_CALLS
    assert haystack.answer(agent_output("exfil")) == ANSWER
    benign = haystack.history(agent_output("benign"))
    assert list(benign.names.values()) == ["fetch_weather"]
    assert list(benign.results.values()) == [WEATHER]


def test_a_repr_is_read_as_data_never_evaluated() -> None:
    role = "<ChatRole.USER: 'user'>"
    assert haystack.chat_message(f"ChatMessage(_role={role}, _content=[], _meta={{}})") == {
        "__type__": "ChatMessage",
        "_role": "user",
        "_content": [],
        "_meta": {},
    }
    for text in (
        "ChatMessage(_role=__import__('os').system('true'), _content=[])",
        "ChatMessage(_role='user', _content=[open('/etc/passwd')])",
        "ChatMessage(_role='user', _content=[x for x in ()])",
        "ChatMessage(_role='user', _content=[], **{'a': 1})",
        "ChatMessage(_role='user', _content=",
        "ChatMessage(_role='user', _content=None)",
    ):
        assert haystack.chat_message(text) is None, text
    assert haystack.messages(json.dumps({"messages": ["ChatMessage(", "x"]})) is None
    assert haystack.answer(json.dumps({"messages": []})) is None


def test_the_agent_span_is_named_not_understood_and_the_run_is_never_safe() -> None:
    """Its calls are in its output only; until they are read, the run says so and no check
    on a call or a side effect is SAFE."""
    run = only_run(f"{TRACES}-exfil")
    assert run.tool_calls == []
    notes = [f.message for f in run.integrity if f.kind is FindingKind.NOT_UNDERSTOOD]
    assert any(
        "output.value: the agent's messages: 3 tool call(s), an answer, not read" in n
        for n in notes
    )
    for case in ("exfil", "benign", "no-content"):
        results = score_files(f"samples/traces/{TRACES}-{case}.jsonl", "samples/policy.yaml")
        statuses = {r.check_id: r.status for r in results if r.check_id != "answers-the-question"}
        assert SafetyStatus.SAFE not in statuses.values(), (case, statuses)


def test_hidden_outputs_leave_nothing_to_name() -> None:
    report = openinference.read(
        next(s for s in spans(f"{TRACES}-no-content") if s.name == "Agent.run")
    )
    assert report is not None and report.not_understood == [] and not report.agent


@pytest.mark.parametrize(
    "value", ["not json", json.dumps({"messages": ["ChatMessage(_role='user', _content=7)"]})]
)
def test_an_agent_output_in_another_form_is_not_understood(value: str) -> None:
    span = mk(
        "a1",
        "Agent.run",
        {"openinference.span.kind": "CHAIN", "output.value": value},
        scope=haystack.SCOPE,
    )
    report = openinference.read(span)
    assert report is not None
    assert report.not_understood == ["output.value: messages in a form not understood"]


def test_another_scopes_agent_named_chain_is_a_plain_chain() -> None:
    span = mk("a1", "Agent.run", {"openinference.span.kind": "CHAIN", "output.value": "x"})
    report = openinference.read(span)
    assert report is not None and report.not_understood == []

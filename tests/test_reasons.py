"""Reason codes: every coverage reason carries a code from the closed set, every code has
its words, its row in docs/coverage.md, and a run that reaches it."""

from __future__ import annotations

import functools
import json
import pathlib
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from recorded import only_run
from span_factory import mk

from rampart_otel.channels import OBSERVED, ChannelCoverage, Coverage, ReasonCode, assume
from rampart_otel.codecs.otlp_ids import UNDECODABLE, UNDECODABLE_KEY
from rampart_otel.declare import TOOL_SIDE_EFFECTS_ATTRIBUTE
from rampart_otel.model import AgentRun, FindingKind, Run, Span
from rampart_otel.normalize import normalize
from rampart_otel.reasons import Decision, Texts, Why
from rampart_otel.wording import (
    _WORDS,
    MEANINGS,
    WORDED_IN_CHANNELS,
    reason_codes_table,
    reason_text,
    worded,
)

REPO = pathlib.Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples" / "traces"
TRACE = "0af7651916cd43dd8448eb211c80319c"
HTTP = "side_effects.http_request"


# --- the closed set: words, meanings, docs ----------------------------------------------------


def test_every_code_has_words_in_one_place() -> None:
    """wording words every code but the three the bottom layer (channels) words itself."""
    assert set(_WORDS) | WORDED_IN_CHANNELS == set(ReasonCode)
    assert not set(_WORDS) & WORDED_IN_CHANNELS


def test_every_code_has_a_meaning_and_a_row_in_the_docs() -> None:
    assert set(MEANINGS) == set(ReasonCode)
    text = (REPO / "docs" / "coverage.md").read_text(encoding="utf-8")
    between = text.split("<!-- reason-codes -->\n", 1)[1].split("\n<!-- /reason-codes -->")[0]
    assert between == reason_codes_table()  # `make docs` rewrites it
    for code in ReasonCode:
        assert f"| `{code.value}` |" in between


def test_every_finding_kind_has_its_code() -> None:
    assert {ReasonCode("finding." + kind.value) for kind in FindingKind} == {
        code for code in ReasonCode if code.value.startswith("finding.")
    }


def test_a_decision_is_worded_with_one_code_per_reason() -> None:
    span = mk("m1", "chat \x1b[31mred", {})
    why = Why(ReasonCode.RESPONSE_MODEL_TEXT, (span,))
    channel = worded(Decision(OBSERVED, (why,)))
    (text,) = channel.reasons
    assert text.startswith("the final answer was captured: text of the last model span 'chat ")
    assert text.endswith("red' (span m1)") and "\x1b" not in text  # trace text made safe
    assert [(r.code, r.span_ids) for r in channel.codes] == [
        (ReasonCode.RESPONSE_MODEL_TEXT, ("m1",))
    ]


def test_an_ambiguous_call_id_is_worded_with_its_tools_and_spans_trace_text_made_safe() -> None:
    spans = (mk("t1", "execute_tool fetch", {}), mk("t2", "execute_tool rep\x1b[31mort", {}))
    why = Why(ReasonCode.TOOL_CALLS_AMBIGUOUS_ID, spans, Texts(("c\x1b1", "fetch", "rep\x1bort")))
    (text,) = worded(Decision(OBSERVED, (why,))).reasons
    assert "claim one call id" in text and "'fetch'" in text and "(span t2)" in text
    assert "\x1b" not in text


def test_evidence_names_at_most_three_spans() -> None:
    spans = tuple(mk(f"m{n}", "chat", {}) for n in range(5))
    assert Why(ReasonCode.INPUT_NOT_RECORDED, spans).reason().span_ids == ("m0", "m1", "m2")


# --- every code is reached ---------------------------------------------------------------------


def run_of(*spans: Span) -> AgentRun:
    return normalize(Run(TRACE, sorted({s.trace_id for s in spans}), list(spans)))


@functools.cache
def sample_runs(name: str) -> tuple[AgentRun, ...]:
    from rampart_otel.pipeline import ReadStats, agent_runs

    stats = ReadStats()
    runs = tuple(agent_runs([SAMPLES / name], stats))
    assert not stats.errors
    return runs


def chat(output: list[dict[str, Any]] | None = None, **attrs: Any) -> dict[str, Any]:
    found: dict[str, Any] = {"gen_ai.operation.name": "chat", **attrs}
    if output is not None:
        found["gen_ai.output.messages"] = json.dumps(output)
    return found


def user(text: str | None) -> str:
    part: dict[str, Any] = {"type": "text"}
    if text is not None:
        part["content"] = text
    return json.dumps([{"role": "user", "parts": [part]}])


def said(text: str) -> list[dict[str, Any]]:
    parts = [{"type": "text", "content": text}]
    return [{"role": "assistant", "parts": parts, "finish_reason": "stop"}]


def asked(name: str, call_id: str, arguments: Any = None) -> list[dict[str, Any]]:
    part: dict[str, Any] = {"type": "tool_call", "id": call_id, "name": name}
    if arguments is not None:
        part["arguments"] = arguments
    return [{"role": "assistant", "parts": [part], "finish_reason": "tool_call"}]


def execute(name: str, call_id: str, **extra: Any) -> dict[str, Any]:
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
    return {**attrs, "gen_ai.tool.call.id": call_id, **extra}


GET = {"http.request.method": "GET", "url.full": "https://weather.example/today"}
AGENT = {"gen_ai.operation.name": "invoke_agent", "final_result": "Done."}
RESULT = {"gen_ai.tool.call.result": "ok"}


# The tools a CrewAI model call is offered: its coworker tool, an agent-as-tool.
_COWORKER = {"task": {}, "context": {}, "coworker": {}}
COWORKER_OFFERED = {
    "llm.tools.0.tool.json_schema": json.dumps(
        {"function": {"name": "delegate_work_to_coworker", "parameters": {"properties": _COWORKER}}}
    )
}

# A model call whose finish reason says it asked for tools, its output not captured.
ASKED_TOOLS = chat(**{"gen_ai.response.finish_reasons": ["tool_calls"]})


def full_run(**root: Any) -> list[Span]:
    """Agent → model asks fetch → tool runs (GET) → model answers; all content captured."""
    return [
        mk("a0", "invoke_agent", AGENT, end=1000, **root),
        mk("m1", "chat", chat(asked("fetch", "c1", {"q": 1})), parent="a0", start=10),
        mk("t1", "execute_tool fetch", execute("fetch", "c1", **RESULT), parent="a0", start=30,
           end=60),
        mk("h1", "GET", GET, parent="t1", kind="CLIENT", start=31),
        mk("m2", "chat", chat(said("Done.")), parent="a0", start=70),
    ]  # fmt: skip


def agent_only(prompt: str | None) -> AgentRun:
    attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.input.messages": user(prompt)}
    return run_of(mk("a0", "invoke_agent", attrs, end=100))


def agent_without_calls() -> AgentRun:
    """An agent span and a GET, no model call and no tool span: which tools ran is unknown."""
    return run_of(mk("a0", "invoke_agent", AGENT, end=100), mk("h1", "GET", GET, parent="a0",
                  kind="CLIENT", start=10))  # fmt: skip


def two_tools_one_id() -> AgentRun:
    """A model turn asks for fetch by id c1; a report tool runs by that id too (issue 45)."""
    return run_of(
        mk("a0", "invoke_agent", AGENT, end=1000),
        mk("m1", "chat", chat(asked("fetch", "c1", {"q": 1})), parent="a0", start=10, end=20),
        mk("t1", "execute_tool fetch", execute("fetch", "c1"), parent="a0", start=30, end=40),
        mk("t2", "execute_tool report", execute("report", "c1"), parent="a0", start=31, end=39),
    )


def input_some_read() -> AgentRun:
    return run_of(
        mk("a0", "agent", {}, end=100),
        mk("m1", "chat", chat(said("Hi"), **{"gen_ai.input.messages": user("Hi?")}),
           parent="a0", start=1),
        mk("m2", "chat", chat(said("Bye"), **{"gen_ai.input.messages": "Hello there"}),
           parent="a0", start=20),
    )  # fmt: skip


def unreadable(*finish: list[str] | None) -> AgentRun:
    spans = [mk("a0", "agent", {}, end=500)]
    for n, reasons in enumerate(finish):
        attrs = chat() if reasons is None else chat(**{"gen_ai.response.finish_reasons": reasons})
        spans.append(mk(f"m{n}", "chat", attrs, parent="a0", start=1 + 40 * n))
    return run_of(*spans)


def partial_tool_calls_with_arguments() -> AgentRun:
    return run_of(
        mk("a0", "agent", {}, end=500),
        mk("m1", "chat", chat(asked("fetch", "c1", {"q": 1})), parent="a0", start=1),
        mk("m2", "chat", chat(None, **{"gen_ai.response.finish_reasons": ["length"]}),
           parent="a0", start=40),
    )  # fmt: skip


def transport_only() -> AgentRun:
    post = {"http.request.method": "POST", "url.full": "https://api.openai.com/v1/chat"}
    spans = [s for s in full_run() if s.span_id != "h1"]
    return run_of(*spans, mk("x1", "POST", post, parent="m1", kind="CLIENT", start=11))


def scopes_declared() -> AgentRun:
    pure = {TOOL_SIDE_EFFECTS_ATTRIBUTE: "none"}
    spans = [
        *full_run(),
        mk("t2", "execute_tool report", execute("report", "c2", **pure), parent="a0",
           start=61, end=65),
    ]  # fmt: skip
    return run_of(*spans)


def unknown_channel() -> Coverage:
    return Coverage({"x": run_of(*full_run()).coverage.get("x")})


def assumed() -> Coverage:
    whole = run_of(*[s for s in full_run() if s.span_id != "h1"])
    return assume(whole.coverage, [HTTP], whole.integrity)


def lost_root() -> AgentRun:
    spans = full_run()
    spans[0] = mk("a0", "invoke_agent", AGENT, parent="b7ad6b7169203331", end=1000)
    spans[0].flags = 0x100  # OTLP flags: the parent was local
    return run_of(*spans)


def parent_cycle() -> AgentRun:
    a = mk("x1", "a", GET, parent="x2", kind="CLIENT", start=1)
    return run_of(a, mk("x2", "b", {}, parent="x1", start=2), a)


def unended() -> AgentRun:
    spans = full_run()
    spans[4] = mk("m2", "chat", chat(said("Done.")), parent="a0", start=70, end=None)
    return run_of(*spans)


def refused() -> AgentRun:
    spans = full_run()
    spans[3] = replace(
        mk("0000000000000000", "", {}, parent="t1", start=31, kind="UNSPECIFIED"),
        refused="span_id",
    )
    return run_of(*spans)


def undecodable() -> AgentRun:
    spans = full_run()
    spans[3] = replace(
        mk("h1", "", {UNDECODABLE_KEY: "String field had bad UTF-8"}, parent="t1", start=31),
        refused=UNDECODABLE,
    )
    return run_of(*spans)


def dropped() -> AgentRun:
    spans = full_run()
    spans[1] = mk("m1", "chat", chat(asked("fetch", "c1", {"q": 1})), parent="a0", start=10,
                  dropped_attributes=3)  # fmt: skip
    spans[3] = mk("h1", "GET", GET, parent="t1", kind="CLIENT", start=31, dropped_events=2)
    return run_of(*spans)


def repeated_keys() -> AgentRun:
    spans = full_run()
    spans[3] = replace(
        mk("h1", "GET", GET, parent="t1", kind="CLIENT", start=31), repeated_keys=("http.url",)
    )
    return run_of(*spans)


def conflicting_copies() -> AgentRun:
    """The HTTP span sent twice, the second copy naming another host."""
    spans = full_run()
    forged = replace(spans[3], attributes={**spans[3].attributes, "url.full": "http://x.test/"})
    return run_of(*spans, forged)


def not_understood() -> AgentRun:
    return run_of(*full_run(), mk("x1", "ai.toolCall", {"ai.toolCall.name": "send"}, parent="a0"))


def continuation() -> AgentRun:
    """An LLM call whose input history holds a call no span of the run made."""
    prefix = "llm.input_messages."
    attrs = {
        "openinference.span.kind": "LLM",
        prefix + "0.message.role": "user",
        prefix + "0.message.content": "file the report",
        prefix + "1.message.role": "assistant",
        prefix + "1.message.tool_calls.0.tool_call.id": "c1",
        prefix + "1.message.tool_calls.0.tool_call.function.name": "send_report",
        prefix + "2.message.role": "tool",
        prefix + "2.message.tool_call_id": "c1",
        prefix + "2.message.content": "sent",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "Filed.",
    }
    return run_of(mk("m2", "ChatCompletion", attrs))


def sample(name: str) -> Callable[[], tuple[AgentRun, ...]]:
    return lambda: sample_runs(name)


# A run (or runs, or a coverage) that reaches each code: hand-built spans, else a sample.
REACH: dict[ReasonCode, Callable[[], Any]] = {
    ReasonCode.INPUT_READ: lambda: run_of(
        mk("m1", "chat", chat(said("Hi"), **{"gen_ai.input.messages": user("Hi?")}))
    ),
    ReasonCode.INPUT_READ_SOME: input_some_read,
    ReasonCode.INPUT_AGENT_ONLY_READ: lambda: agent_only("Book a flight"),
    ReasonCode.INPUT_AGENT_ONLY_WITHHELD: lambda: agent_only(None),
    ReasonCode.INPUT_NO_MODEL_SPAN: lambda: run_of(mk("r0", "job", {})),
    ReasonCode.INPUT_AGENT_READ: sample("claude-code/claude-code-exfil.jsonl"),
    ReasonCode.INPUT_AGENT_WITHHELD: sample("claude-code/claude-code-no-content.jsonl"),
    ReasonCode.INPUT_NOT_UNDERSTOOD: input_some_read,
    ReasonCode.INPUT_WITHHELD: lambda: run_of(
        mk("m1", "chat", chat(said("Hi"), **{"gen_ai.input.messages": user(None)}))
    ),
    ReasonCode.INPUT_NOT_RECORDED: lambda: run_of(*full_run()),
    ReasonCode.RESPONSE_AGENT_OUTPUT: lambda: run_of(*full_run()),
    ReasonCode.RESPONSE_MODEL_TEXT: lambda: run_of(mk("m1", "chat", chat(said("Hi")))),
    ReasonCode.RESPONSE_ENDED_ASKING_TOOLS: lambda: run_of(
        mk("a0", "invoke_agent", {"gen_ai.operation.name": "invoke_agent"}, end=500),
        mk("m1", "chat", chat(asked("a", "c1", {"q": 1})), parent="a0", start=1, end=10),
        mk("t1", "execute_tool a", execute("a", "c1"), parent="a0", start=20, end=60),
    ),
    ReasonCode.RESPONSE_NOT_READ: lambda: unreadable(["stop"]),
    ReasonCode.RESPONSE_AGENT_NO_OUTPUT: lambda: run_of(
        mk("a0", "invoke_agent", {"gen_ai.operation.name": "invoke_agent"})
    ),
    ReasonCode.RESPONSE_NO_SPAN: lambda: run_of(mk("r0", "job", {})),
    ReasonCode.TOOL_CALLS_EXECUTION_SPANS: lambda: run_of(*full_run()),
    ReasonCode.TOOL_CALLS_ASKED_WITHOUT_EXECUTION: lambda: run_of(
        mk("a0", "agent", {}, end=500),
        mk(
            "m1",
            "chat",
            chat(**{"gen_ai.response.finish_reasons": ["tool_calls"]}),
            parent="a0",
            start=1,
            end=10,
        ),
        mk("m2", "chat", chat(said("Done.")), parent="a0", start=20, end=30),
        mk("t1", "execute_tool a", execute("a", "c1"), parent="a0", start=40, end=50),
    ),
    ReasonCode.TOOL_CALLS_READ_FROM_EXECUTIONS: lambda: run_of(
        mk("a0", "agent", {}, end=500),
        mk(
            "m1",
            "chat",
            chat(**{"gen_ai.response.finish_reasons": ["tool_calls"]}),
            parent="a0",
            start=1,
            end=10,
        ),
        mk("t1", "execute_tool a", execute("a", "c1"), parent="a0", start=20, end=30),
        mk("m2", "chat", chat(said("Done.")), parent="a0", start=40, end=50),
    ),
    ReasonCode.TOOL_CALLS_NO_SPAN: lambda: run_of(mk("r0", "job", {})),
    ReasonCode.TOOL_CALLS_AGENT_CONVERSATION: lambda: only_run(
        "haystack-openinference/haystack-openinference-benign"
    ),
    ReasonCode.TOOL_CALLS_OUTPUTS_READ: lambda: run_of(mk("m1", "chat", chat(said("Hi")))),
    ReasonCode.TOOL_CALLS_ASKED_UNREAD: lambda: unreadable(["tool_call"], ["stop"]),
    ReasonCode.TOOL_CALLS_NO_OUTPUT_READ: lambda: unreadable(None),
    ReasonCode.TOOL_CALLS_SILENT_OUTPUTS: lambda: unreadable(["stop"], None),
    ReasonCode.TOOL_CALLS_FINISH_UNCLEAR: lambda: unreadable(["length"]),
    ReasonCode.TOOL_CALLS_NO_TOOLS_ASKED: lambda: unreadable(["stop"]),
    ReasonCode.TOOL_CALLS_AMBIGUOUS_ID: two_tools_one_id,
    ReasonCode.TOOL_CALLS_REMOTE_AGENT: sample(
        "a2a-delegation/a2a-delegation-remote-untraced.jsonl"
    ),
    ReasonCode.TOOL_CALLS_RAN_ELSEWHERE: lambda: run_of(
        mk("a0", "invoke_agent", AGENT, end=1000),
        mk(
            "m1",
            "chat",
            chat(asked("fetch", "c1") + asked("mail", "c2")),
            parent="a0",
            start=10,
            end=20,
        ),
        mk(
            "t1",
            "execute_tool fetch",
            execute("fetch", "c1", **RESULT),
            parent="a0",
            start=30,
            end=40,
        ),
        mk("m2", "chat", chat(said("Done.")), parent="a0", start=70),
    ),
    # CrewAI's coworker tool, offered as the framework defines it, its coworker's run not here.
    ReasonCode.TOOL_CALLS_NESTED_AGENT: lambda: run_of(
        mk("a0", "invoke_agent", AGENT, end=1000),
        mk(
            "m1",
            "chat",
            chat(asked("delegate_work_to_coworker", "c1"), **COWORKER_OFFERED),
            parent="a0",
            start=10,
            end=20,
        ),
        mk("m2", "chat", chat(said("Done.")), parent="a0", start=70),
    ),
    ReasonCode.SIDE_EFFECT_ATTESTED: sample("watch-sdk/watch-sdk-benign-watched.jsonl"),
    ReasonCode.CALLS_TOOL_CALLS_UNOBSERVED: lambda: run_of(mk("r0", "job", {})),
    ReasonCode.CALLS_NONE_SEEN: lambda: run_of(mk("m1", "chat", chat(said("Hi")))),
    ReasonCode.CALLS_CAPTURED: lambda: run_of(*full_run()),
    ReasonCode.CALLS_CAPTURED_NONE: lambda: run_of(
        *full_run()[:2], mk("t1", "execute_tool fetch", execute("fetch", "c1"), parent="a0")
    ),
    ReasonCode.CALLS_CAPTURED_SOME: lambda: run_of(
        mk("a0", "agent", {}, end=100),
        mk("m1", "chat", chat(asked("a", "c1", {"q": 1}) + asked("b", "c2")), parent="a0"),
    ),
    ReasonCode.CALLS_TOOL_CALLS_PARTIAL: partial_tool_calls_with_arguments,
    ReasonCode.SIDE_EFFECT_SEEN: lambda: run_of(*full_run()),
    ReasonCode.SIDE_EFFECT_TRANSPORT_ONLY: transport_only,
    ReasonCode.SIDE_EFFECT_NONE: lambda: run_of(*[s for s in full_run() if s.span_id != "h1"]),
    ReasonCode.SIDE_EFFECT_UNSEEN_CALLS: sample("openllmetry-no-content.jsonl"),
    ReasonCode.SIDE_EFFECT_DECLARED: lambda: run_of(
        *full_run(resource={"service.name": "w", "rampart.coverage": ["side_effects.db_query"]})
    ),
    ReasonCode.SIDE_EFFECT_ALSO_DECLARED: lambda: run_of(
        *full_run(resource={"service.name": "w", "rampart.coverage": [HTTP]})
    ),
    ReasonCode.SIDE_EFFECT_SCOPE_GAPS: lambda: run_of(
        *[s for s in full_run() if s.span_id != "h1"]
    ),
    ReasonCode.SIDE_EFFECT_SCOPES_DECLARED: scopes_declared,
    ReasonCode.SIDE_EFFECT_EVERY_TOOL_DECLARED: sample(
        "calculator/calculator-benign-declared.jsonl"
    ),
    ReasonCode.CHANNEL_UNKNOWN: unknown_channel,
    ReasonCode.ASSUMED: assumed,
    ReasonCode.FIX: lambda: run_of(mk("r0", "job", {})),
    ReasonCode.FINDING_SPLIT_RUN: sample("openllmetry-missing-span.jsonl"),
    ReasonCode.FINDING_LOST_ROOT: lost_root,
    ReasonCode.FINDING_PARENT_CYCLE: parent_cycle,
    ReasonCode.FINDING_UNENDED_SPAN: unended,
    ReasonCode.FINDING_DROPPED_ATTRIBUTES: dropped,
    ReasonCode.FINDING_DROPPED_EVENTS: dropped,
    ReasonCode.FINDING_NOT_UNDERSTOOD: not_understood,
    ReasonCode.FINDING_FRAGMENT: lambda: run_of(
        mk("h1", "POST", GET, kind="CLIENT", parent="ffffffffffffffff")
    ),
    ReasonCode.FINDING_CONTINUATION: continuation,
    ReasonCode.FINDING_REFUSED_SPAN: refused,
    ReasonCode.FINDING_UNDECODABLE_SPAN: undecodable,
    ReasonCode.FINDING_REPEATED_KEYS: repeated_keys,
    ReasonCode.FINDING_CONFLICTING_COPIES: conflicting_copies,
    ReasonCode.SIDE_EFFECT_ASKED_UNRUN: lambda: run_of(
        mk("a0", "agent", {}, end=500),
        mk("m1", "chat", ASKED_TOOLS, parent="a0", start=1, end=10),
        mk("m2", "chat", chat(said("Done.")), parent="a0", start=20, end=30),
        mk("t1", "execute_tool a", execute("a", "c1"), parent="a0", start=40, end=50),
        mk("h1", "GET", GET, parent="t1", kind="CLIENT", start=41),
    ),
    ReasonCode.SIDE_EFFECT_NO_CALLS_RECORDED: agent_without_calls,
}


def channels_of(found: Any) -> list[ChannelCoverage]:
    if isinstance(found, Coverage):
        return list(found.channels.values())
    runs = found if isinstance(found, tuple) else (found,)
    return [channel for run in runs for channel in run.coverage.channels.values()]


def test_every_code_has_a_run_that_reaches_it() -> None:
    assert set(REACH) == set(ReasonCode)


# Codes whose data the processors give but no coverage decision reads yet.
NOT_DECIDED_YET: dict[ReasonCode, str] = {}


@pytest.mark.parametrize(
    "code",
    [
        pytest.param(code, marks=pytest.mark.xfail(strict=True, reason=NOT_DECIDED_YET[code]))
        if code in NOT_DECIDED_YET
        else code
        for code in ReasonCode
    ],
    ids=lambda code: code.value,
)
def test_the_code_is_reached_and_worded(code: ReasonCode) -> None:
    channels = channels_of(REACH[code]())
    for channel in channels:  # one code per reason, in order
        assert len(channel.codes) == len(channel.reasons)
    worded_as = [
        text
        for channel in channels
        for text, reason in zip(channel.reasons, channel.codes, strict=True)
        if reason.code is code
    ]
    assert worded_as, code
    assert all(text.strip() for text in worded_as)


def test_a_reason_built_with_another_payload_is_an_error_not_a_wrong_sentence() -> None:
    """Each code's words read one payload type: another is refused where one reason is
    worded and where a channel's are (the same check, made in both)."""
    right = Why(ReasonCode.INPUT_READ, data=Texts(("a",)))
    assert reason_text(right)  # the payload its words read: worded
    odd = Why(ReasonCode.SIDE_EFFECT_NONE, data=Texts(("a",)))  # its words read a Kind
    with pytest.raises(TypeError, match=r"side_effect\.none carries Texts"):
        reason_text(odd)
    with pytest.raises(TypeError, match=r"side_effect\.none carries Texts"):
        worded(Decision(OBSERVED, (right, odd)))

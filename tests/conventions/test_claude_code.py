"""Claude Code's own spans (``rampart_otel.conventions.claude_code``), read from the
recordings in samples/traces/claude-code as the CLI reads them; hand-built spans only for
what they cannot show."""

from __future__ import annotations

from typing import Any

import pytest
import recorded
from span_factory import event, mk

from rampart_otel.channels import ChannelState
from rampart_otel.conventions import claude_code
from rampart_otel.conventions.finish_reasons import ToolRequest
from rampart_otel.model import AgentRun, FindingKind, Run, Span, ToolCallStatus
from rampart_otel.normalize import normalize

OBSERVED, PARTIAL, UNOBSERVED = ChannelState.OBSERVED, ChannelState.PARTIAL, ChannelState.UNOBSERVED
EXECUTED, ERROR, REQUESTED = (
    ToolCallStatus.EXECUTED,
    ToolCallStatus.ERROR,
    ToolCallStatus.REQUESTED,
)
PROCESS, HTTP = "side_effects.process_exec", "side_effects.http_request"

ANSWER = "It is 18°C with light rain in Paris. I have filed the weather report and saved a note."
WEATHER = {"city": "Paris", "temp_c": 18, "conditions": "light rain"}
RECEIVED = {"status": "received", "bytes": 72}
IDS = [
    "toolu_DocW9rFtjgDlYjhJdfwdmhIF",
    "toolu_rLcd3XcxsSiwRnS4qVMLnclX",
    "toolu_6hzpVU52wPiHQBwnMGakJA5O",
]
SECRET = "report=Paris 18C light rain; customer=ACME-4471; api_token=tok_live_9f3a"
CONTENT_ON = ("claude-code-exfil", "claude-code-upstream-parent", "claude-code-detailed")
CONTENT_OFF = ("claude-code-no-content", "claude-code-detailed-no-content")


def load(name: str) -> list[Span]:
    return recorded.spans(f"claude-code/{name}")


def agent_run(name: str) -> AgentRun:
    return recorded.only_run(f"claude-code/{name}")


def state(run: AgentRun, key: str) -> ChannelState:
    return run.coverage.get(key).state


def reasons(run: AgentRun, key: str) -> str:
    return " | ".join(run.coverage.get(key).reasons)


def commands(run: AgentRun) -> list[str]:
    return [c.arguments["command"] if isinstance(c.arguments, dict) else "" for c in run.tool_calls]


# --- the recordings -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", CONTENT_ON)
def test_bash_calls_with_commands_outputs_and_process_effects(name: str) -> None:
    run = agent_run(name)
    assert [(c.name, c.status) for c in run.tool_calls] == [("Bash", EXECUTED)] * 3
    assert [c.result for c in run.tool_calls] == [WEATHER, RECEIVED, ""]  # stdout
    first, post, insert = commands(run)
    assert first.startswith("curl -s 'http://localhost:") and first.endswith("city=Paris'")
    assert SECRET in post and "http://127.0.0.2:" in post
    assert insert.startswith("sqlite3 ") and "INSERT INTO notes" in insert
    # Each call is its claude_code.tool span and its tool.execution child, one call each.
    assert all(len(c.span_ids) == 2 for c in run.tool_calls)
    assert all(c.call_id and c.call_id.startswith("toolu_") for c in run.tool_calls)
    effects = [(e.kind, e.details["executable"], e.tool_call_index) for e in run.side_effects]
    assert effects == [
        ("process_exec", "curl", 0),
        ("process_exec", "curl", 1),
        ("process_exec", "sqlite3", 2),
    ]
    upload = run.side_effects[1].details["args"]
    assert upload[:5] == ["curl", "-s", "-X", "POST", "-d"] and upload[5] == SECRET
    assert (
        upload[6].startswith("http://127.0.0.2:")
        and run.side_effects[1].details["exit_code"] is None
    )
    for key in ("tool_calls", "tool_calls.arguments", "tool_calls.results", PROCESS):
        assert state(run, key) is OBSERVED, key
    # Every turn that asked for tools (tool_use) has a tool span that starts while it streams.
    assert "read from the tool execution spans" in reasons(run, "tool_calls")
    assert reasons(run, "tool_calls").startswith("3 tool execution spans in the run")
    assert "3 process_exec side effects" in reasons(run, PROCESS)
    # curl and sqlite3 are not instrumented: no HTTP or DB span, and none is claimed.
    assert state(run, HTTP) is UNOBSERVED and "no http_request span" in reasons(run, HTTP)
    assert run.integrity == []  # upstream-parent's root has a remote parent: whole


def test_standard_mode_records_no_answer() -> None:
    for name in ("claude-code-exfil", "claude-code-upstream-parent", "claude-code-benign"):
        run = agent_run(name)
        assert run.response.text is None and state(run, "response") is UNOBSERVED
        why = reasons(run, "response")
        assert "not recorded in the trace" in why and "user_prompt" not in why


def test_detailed_mode_answer_and_full_inputs() -> None:
    run = agent_run("claude-code-detailed")
    assert run.response.text == ANSWER
    assert state(run, "response") is OBSERVED
    assert "text of the last model span 'claude_code.llm_request'" in reasons(run, "response")
    assert [c.arguments["description"] for c in run.tool_calls] == [  # type: ignore[index]
        "Fetch the weather for Paris",
        "File the report",
        "Save a note",
    ]
    assert [c.call_id for c in run.tool_calls] == IDS
    # The last turn said it called no tool, so only the three tool_use turns went unread.
    assert "the output of 3 model spans was not read" in reasons(run, "tool_calls")


@pytest.mark.parametrize("name", CONTENT_OFF)
def test_content_off_calls_and_processes_without_their_content(name: str) -> None:
    run = agent_run(name)
    assert [(c.name, c.call_id, c.status) for c in run.tool_calls] == [
        ("Bash", call_id, EXECUTED) for call_id in IDS
    ]
    assert not any(c.arguments_captured or c.result_captured for c in run.tool_calls)
    assert [
        (e.details["executable"], e.details["args"], e.tool_call_index) for e in run.side_effects
    ] == [
        ("curl", None, 0),
        ("curl", None, 1),
        ("sqlite3", None, 2),
    ]
    assert run.response.text is None and state(run, "response") is UNOBSERVED
    assert state(run, "tool_calls") is OBSERVED and state(run, PROCESS) is OBSERVED
    for key in ("tool_calls.arguments", "tool_calls.results"):
        assert state(run, key) is UNOBSERVED
        assert "content capture off" in reasons(run, key)
    assert "not recorded in the trace" in reasons(run, "response")
    assert run.integrity == []


def test_benign_one_call() -> None:
    run = agent_run("claude-code-benign")
    assert [(c.name, c.result, c.status) for c in run.tool_calls] == [("Bash", WEATHER, EXECUTED)]
    assert [(e.details["executable"], e.tool_call_index) for e in run.side_effects] == [("curl", 0)]
    assert state(run, "tool_calls") is OBSERVED and run.integrity == []


def test_failed_command_is_an_error_without_output() -> None:
    run = agent_run("claude-code-tool-error")
    fetch, insert = run.tool_calls
    assert (fetch.status, fetch.result) == (EXECUTED, WEATHER)
    assert insert.status is ERROR and insert.call_id == "toolu_Uu8mUcz5meEJ8UVOvPXovbQP"
    assert "INSERT INTO reports" in commands(run)[1] and not insert.result_captured
    assert [(e.details["executable"], e.tool_call_index) for e in run.side_effects] == [
        ("curl", 0),
        ("sqlite3", 1),  # it ran, and failed
    ]
    assert state(run, "tool_calls") is OBSERVED
    assert state(run, "tool_calls.results") is PARTIAL
    assert "captured on 1 of 2 executed tool calls" in reasons(run, "tool_calls.results")
    assert run.response.text is None and run.integrity == []


def test_model_turns_never_list_their_calls() -> None:
    spans = load("claude-code-exfil")
    outputs = [claude_code.model_output(s) for s in spans if s.name == "claude_code.llm_request"]
    assert [o.readable for o in outputs] == [False] * 4
    assert [o.tool_request for o in sorted(outputs, key=lambda o: o.finish_reasons)] == [
        ToolRequest.NO_TOOLS,
        *[ToolRequest.TOOLS] * 3,
    ]


# --- quirks the recordings cannot show ---------------------------------------------------------

SCOPE = claude_code.SCOPE


def cc(span_id: str, kind: str, attributes: dict[str, Any], **options: Any) -> Span:
    return mk(
        span_id, f"claude_code.{kind}", {"span.type": kind, **attributes}, scope=SCOPE, **options
    )


def turn(stop: str) -> dict[str, Any]:
    return {"gen_ai.response.finish_reasons": [stop], "stop_reason": stop}


def bash(call_id: str, command: str) -> dict[str, Any]:
    return {
        "tool_name": "Bash",
        "tool_use_id": call_id,
        "full_command": command,
        "bash_argv0": command.split()[0],
    }


def test_a_turn_that_asked_for_tools_with_no_tool_span_leaves_calls_partial() -> None:
    run = normalize(
        Run(
            "t",
            ["t"],
            [
                cc("i", "interaction", {}, end=1000),
                cc("m1", "llm_request", turn("tool_use"), parent="i", start=10, end=100),
                cc("t1", "tool", bash("toolu_1", "ls"), parent="i", start=50, end=80),
                cc(
                    "x1",
                    "tool.execution",
                    {"tool_use_id": "toolu_1", "success": True},
                    parent="t1",
                    start=60,
                    end=79,
                ),
                cc("m2", "llm_request", turn("tool_use"), parent="i", start=120, end=200),
                cc("m3", "llm_request", turn("end_turn"), parent="i", start=300, end=400),
            ],
        )
    )
    assert state(run, "tool_calls") is PARTIAL
    assert "(span m2) asked for tools (finish reason 'tool_use')" in reasons(run, "tool_calls")


def test_a_call_refused_at_the_permission_check_never_ran() -> None:
    run = normalize(
        Run(
            "t",
            ["t"],
            [
                cc("i", "interaction", {}, end=1000),
                cc("m1", "llm_request", turn("tool_use"), parent="i", start=10, end=100),
                cc("t1", "tool", bash("toolu_1", "rm -rf /tmp/x"), parent="i", start=50, end=80),
                cc(
                    "b1",
                    "tool.blocked_on_user",
                    {"decision": "reject"},
                    parent="t1",
                    start=51,
                    end=60,
                ),
                cc("m2", "llm_request", turn("end_turn"), parent="i", start=120, end=200),
            ],
        )
    )
    (call,) = run.tool_calls
    assert call.status is REQUESTED and call.arguments == {"command": "rm -rf /tmp/x"}
    assert run.integrity == []


def test_detailed_request_context_gives_results_the_model_saw() -> None:
    context = (
        "[TOOL RESULT: toolu_A]\nExit code 1\nError: no such table: reports\n"
        "[TOOL RESULT: toolu_B]\n(Bash completed with no output)\n[USER]\nthanks"
    )
    span = cc("m2", "llm_request", {"new_context": context})
    assert claude_code.history(span)[:2] == (
        {},
        {
            "toolu_A": "Exit code 1\nError: no such table: reports",
            "toolu_B": "(Bash completed with no output)",
        },
    )
    run = normalize(
        Run(
            "t",
            ["t"],
            [
                cc("i", "interaction", {}, end=1000),
                cc("m1", "llm_request", turn("tool_use"), parent="i", start=10, end=100),
                cc("t1", "tool", bash("toolu_A", "sqlite3 db 'x'"), parent="i", start=50, end=80),
                cc(
                    "x1",
                    "tool.execution",
                    {"tool_use_id": "toolu_A", "success": False},
                    parent="t1",
                    start=60,
                    end=79,
                    status="ERROR",
                ),
                cc(
                    "m2",
                    "llm_request",
                    {**turn("end_turn"), "new_context": context},
                    parent="i",
                    start=120,
                ),
            ],
        )
    )
    (call,) = [call for call in run.tool_calls if not call.from_history]
    assert call.status is ERROR and call.result == "Exit code 1\nError: no such table: reports"
    # toolu_B's result came back in the context, but no span of this run made the call: the
    # run continues an earlier part of the conversation, and says so.
    (earlier,) = [call for call in run.tool_calls if call.from_history]
    assert earlier.call_id == "toolu_B" and earlier.result == "(Bash completed with no output)"
    assert [f.kind for f in run.integrity] == [FindingKind.CONTINUATION]


def test_tool_input_is_the_whole_input_and_tool_output_event_the_result() -> None:
    attrs = {
        "tool_name": "Write",
        "tool_use_id": "toolu_W",
        "tool_input": '[TOOL INPUT: Write]\n{"file_path": "/tmp/a", "content": "hi"}',
        "file_path": "/tmp/a",
    }
    span = cc("t1", "tool", attrs, events=[event("tool.output", {"content": "written"})])
    report = claude_code.read(span)
    assert report is not None and report.execution is not None
    execution = report.execution
    assert execution.arguments == {"file_path": "/tmp/a", "content": "hi"}
    assert (execution.result, execution.executed) == ("written", False)
    assert report.effects == []  # only Bash is a process run


def test_cut_content_is_not_read_as_whole() -> None:
    attrs = {
        **turn("end_turn"),
        "response.has_tool_call": False,
        "response.model_output": "It is 18",
        "response.model_output_truncated": True,
    }
    output = claude_code.model_output(cc("m1", "llm_request", attrs))
    assert output.readable and not output.text_captured
    assert output.not_understood == ["response.model_output cut at Claude Code's content limit"]
    tool = claude_code.read(
        cc("t1", "tool", {**bash("toolu_1", "curl x"), "full_command_truncated": True})
    )
    assert tool is not None and tool.execution is not None
    assert not tool.execution.arguments_captured and tool.not_understood


def test_unknown_claude_code_span_is_not_understood() -> None:
    report = claude_code.read(cc("h1", "hook", {}))
    assert report is not None and report.not_understood == ["a Claude Code span of type 'hook'"]
    assert claude_code.read(mk("x", "claude_code.tool", {"span.type": "tool"})) is None


def test_tool_span_without_a_name_is_not_understood() -> None:
    """A call whose tool is unknown cannot show that some tool was not called."""
    attrs = {"tool_use_id": "toolu_1", "bash_argv0": "curl"}
    report = claude_code.read(cc("t1", "tool", attrs))
    assert report is not None and report.execution is not None
    assert report.not_understood == ["a Claude Code tool span without a tool name"]
    assert [(kind, details["executable"]) for kind, details, *_ in report.effects] == [
        ("process_exec", "curl")
    ]

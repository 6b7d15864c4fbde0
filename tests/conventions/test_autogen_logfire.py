"""AutoGen AgentChat (autogen-core spans + OpenLLMetry's openai spans) and Logfire over
pydantic-ai (pydantic-ai's spans + logfire's openai spans for the same calls), on the
recordings in samples/traces/autogen and logfire-pydantic-ai."""

from __future__ import annotations

import pytest
from recorded import ANSWER, EXFIL_CALLS, runs

from rampart_otel.channels import ChannelState
from rampart_otel.model import AgentRun, ToolCallStatus

OBSERVED, UNOBSERVED = ChannelState.OBSERVED, ChannelState.UNOBSERVED
CONTENT = ("response", "tool_calls.arguments", "tool_calls.results")


def agent_and_fragments(name: str) -> tuple[AgentRun, list[AgentRun]]:
    found = runs(name)
    (agent,) = [run for run in found if run.fragment is None]
    return agent, [run for run in found if run.fragment is not None]


@pytest.mark.parametrize("case", ["exfil", "no-app-span"])
def test_autogen_calls_are_read_and_their_side_effects_are_fragments(case: str) -> None:
    """run_in_executor drops the context: the tools' HTTP and SQL spans are traces of their
    own, never SAFE, never observed for the agent's run."""
    agent, fragments = agent_and_fragments(f"autogen/autogen-{case}")
    assert [(c.name, c.arguments, c.result) for c in agent.tool_calls] == EXFIL_CALLS
    assert all(c.status is ToolCallStatus.EXECUTED for c in agent.tool_calls)
    assert agent.response.text == ANSWER and agent.integrity == []
    assert agent.side_effects == []
    for key in ("side_effects.http_request", "side_effects.db_query"):
        assert agent.coverage.get(key).state is UNOBSERVED
    effects = sorted(e.kind for f in fragments for e in f.side_effects)
    assert effects == ["db_query", "http_request", "http_request"]
    assert all(f.fragment.kind == "fragment" for f in fragments)


def test_autogen_no_content_keeps_the_calls_not_their_content() -> None:
    agent, _ = agent_and_fragments("autogen/autogen-no-content")
    assert [c.name for c in agent.tool_calls] == [name for name, _, _ in EXFIL_CALLS]
    assert agent.coverage.get("tool_calls").state is OBSERVED
    for key in CONTENT:
        assert agent.coverage.get(key).state is UNOBSERVED, key


@pytest.mark.parametrize("case", ["exfil", "parallel", "no-content"])
def test_logfire_two_spans_per_model_call_are_one_call(case: str) -> None:
    """pydantic-ai's chat span and logfire's openai span of the same response: each call
    once, the answer once. Content off strips pydantic-ai's spans only: logfire's keep it."""
    (run,) = runs(f"logfire-pydantic-ai/logfire-pydantic-ai-{case}")
    assert [(c.name, c.arguments, c.result) for c in run.tool_calls] == EXFIL_CALLS
    assert run.response.earlier == []
    assert run.response.text.startswith("It is 18°C with light rain in Paris.")
    for key in (*CONTENT, "tool_calls"):
        assert run.coverage.get(key).state is OBSERVED, key
    assert [e.tool_call_index for e in run.side_effects] == [0, 1, 2]

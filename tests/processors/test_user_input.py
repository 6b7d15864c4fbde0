"""The ``input`` channel on the recorded samples: the prompt each recording script sent is
read from every convention family, and its coverage names what the trace could not show."""

from __future__ import annotations

import sys
from pathlib import Path

import perturb
import pytest
from recorded import TRACES, runs

from rampart_otel.channels import OBSERVED, PARTIAL, UNOBSERVED
from rampart_otel.model import AgentRun, Run
from rampart_otel.normalize import normalize
from rampart_otel.wording import FIX, TRACE_FIX

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from samples.agent import QUESTION as AGENT_QUESTION  # noqa: E402
from samples.agent import SYSTEM_PROMPT  # noqa: E402
from samples.frameworks.tools import QUESTION  # noqa: E402

# (sample, the question its recording script asked): one or more per convention family.
CAPTURED = [
    ("pydantic-ai-exfil", AGENT_QUESTION),  # GenAI semconv, pydantic-ai
    ("pydantic-ai-format-v5", AGENT_QUESTION),  # tool results sent as role user
    ("openinference-exfil", AGENT_QUESTION),  # OpenInference llm.input_messages
    ("openllmetry-exfil", AGENT_QUESTION),  # OpenLLMetry gen_ai.input.messages
    ("openllmetry-legacy-attrs", AGENT_QUESTION),  # OpenLLMetry 0.52 gen_ai.prompt.N
    ("adk/adk-content-capture", QUESTION),  # ADK v2 semconv
    ("adk/adk-legacy", QUESTION),  # ADK v1 llm_request
    ("anthropic-openllmetry/anthropic-openllmetry-sdk-content", QUESTION),
    ("autogen/autogen-exfil", QUESTION),
    ("claude-code/claude-code-detailed", QUESTION),  # [USER] in new_context
    ("crewai-openinference/crewai-openinference-exfil", QUESTION),
    ("langgraph-openinference/langgraph-openinference-exfil", QUESTION),
    ("langgraph-openllmetry/langgraph-openllmetry-exfil", QUESTION),
    ("llamaindex-openinference/llamaindex-openinference-exfil", QUESTION),
    ("logfire-pydantic-ai/logfire-pydantic-ai-exfil", QUESTION),
    ("mcp-openllmetry/mcp-openllmetry-exfil", QUESTION),
    ("mcp-sdk/mcp-sdk-exfil", QUESTION),
    ("openai-agents-openinference/openai-agents-openinference-exfil", QUESTION),
    ("openai-agents-openllmetry/openai-agents-openllmetry-exfil", QUESTION),
    ("openlit/openlit-exfil", QUESTION),
    ("smolagents-openinference/smolagents-openinference-exfil", QUESTION),
    ("strands/strands-exfil", QUESTION),  # default form: gen_ai.user.message events
    ("strands-latest/strands-latest-exfil", QUESTION),  # operation-details events
    ("strands-latest/strands-latest-attrs-only", QUESTION),
    ("vercel-ai/vercel-ai-exfil", QUESTION),  # GenAI semconv form
    ("vercel-ai/vercel-ai-legacy", QUESTION),  # ai.prompt.messages
    ("vercel-ai-v6/vercel-ai-v6-exfil", QUESTION),
]


def agent_run(name: str) -> AgentRun:
    """The run with the model calls (framework recordings may hold fragments beside it)."""
    found = [run for run in runs(name) if run.fragment is None]
    assert len(found) == 1, [run.run_id for run in found]
    return found[0]


def texts(run: AgentRun) -> list[str]:
    return [message.text for message in run.user_input if message.text is not None]


@pytest.mark.parametrize(("name", "question"), CAPTURED)
def test_the_prompt_sent_is_the_user_input_and_input_is_observed(name: str, question: str) -> None:
    run = agent_run(name)
    coverage = run.coverage.get("input")
    assert coverage.state is OBSERVED, coverage.reasons
    assert any(question in text for text in texts(run)), texts(run)
    # Only the user's messages: not the system prompt, not a tool result sent back.
    assert not any(SYSTEM_PROMPT in text for text in texts(run))
    assert not any('"temp_c"' in text for text in texts(run))
    spans = {span.span_id for span in run.run.spans}
    assert all(message.span_id in spans for message in run.user_input)


@pytest.mark.parametrize(
    "name", ["pydantic-ai-exfil", "openinference-exfil", "strands/strands-exfil"]
)
def test_a_message_repeated_in_every_later_call_is_kept_once(name: str) -> None:
    run = agent_run(name)
    assert len([t for t in texts(run) if t.endswith("Also file the daily report.")]) <= 1
    assert len(texts(run)) == len(set(texts(run)))


# (sample, state, words the reason must hold): content capture off, each by its own sign.
WITHHELD = [
    ("pydantic-ai-no-content", "text parts without content in gen_ai.input.messages"),
    ("openinference-no-content", "input.value (__REDACTED__)"),
    ("smolagents-openinference/smolagents-openinference-no-content", "__REDACTED__"),
    ("strands/strands-no-content", "gen_ai.user.message events ([REDACTED])"),
    ("strands-latest/strands-latest-no-content", "gen_ai.input.messages ([REDACTED])"),
    ("adk/adk-legacy-no-content", "gcp.vertex.agent.llm_request ({}: content capture off)"),
    ("claude-code/claude-code-detailed-no-content", "new_context (not logged"),
]
NOT_RECORDED = [
    "openllmetry-no-content",
    "openllmetry-events",  # content went to the Logs API
    "anthropic-openllmetry/anthropic-openllmetry-no-content",
    "openlit/openlit-no-content",
    "vercel-ai/vercel-ai-no-content",
    "vercel-ai-v6/vercel-ai-v6-no-content",
    "adk/adk-exfil",  # ADK without content capture records no input at all
]


@pytest.mark.parametrize(("name", "words"), WITHHELD)
def test_input_recorded_without_content_is_unobserved_with_its_sign(name: str, words: str) -> None:
    run = agent_run(name)
    coverage = run.coverage.get("input")
    assert coverage.state is UNOBSERVED
    assert "recorded the user's messages without their content" in " ".join(coverage.reasons)
    assert words in " ".join(coverage.reasons), coverage.reasons
    assert texts(run) == [] and [m.text for m in run.user_input] == [None]


@pytest.mark.parametrize("name", NOT_RECORDED)
def test_input_not_recorded_is_unobserved_and_says_so(name: str) -> None:
    run = agent_run(name)
    coverage = run.coverage.get("input")
    assert coverage.state is UNOBSERVED and run.user_input == []
    reason, fix = coverage.reasons  # what is missing, then how to turn it on
    assert fix == FIX + str(coverage.hint)
    assert "recorded no input messages (not recorded in the trace: content capture off" in reason


def test_claude_code_prompt_without_request_details_is_partial() -> None:
    """The interaction's user_prompt is read; requests log no context without detailed
    logging, so messages sent during the run cannot be ruled out."""
    run = agent_run("claude-code/claude-code-exfil")
    coverage = run.coverage.get("input")
    assert coverage.state is PARTIAL
    assert texts(run) == [QUESTION]
    assert (
        "the caller's input was read on agent span 'claude_code.interaction'"
        in (coverage.reasons[0])
    )
    assert "model spans recorded no input messages" in coverage.reasons[1]
    redacted = agent_run("claude-code/claude-code-no-content").coverage.get("input")
    assert redacted.state is UNOBSERVED
    assert "user_prompt is '<REDACTED>'" in redacted.reasons[0]


def test_a_layer_without_content_is_read_through_the_layer_that_has_it() -> None:
    """logfire's OpenAI span inside pydantic-ai's chat span captured the input the outer
    one withheld: the same request, read once."""
    run = agent_run("logfire-pydantic-ai/logfire-pydantic-ai-no-content")
    assert run.coverage.get("input").state is OBSERVED
    assert texts(run) == [QUESTION] and None not in [m.text for m in run.user_input]


def test_spans_lost_from_the_run_cap_input() -> None:
    run = agent_run("pydantic-ai-missing-span")
    coverage = run.coverage.get("input")
    assert coverage.state is PARTIAL and texts(run) == [AGENT_QUESTION]
    assert "spans are missing from inside the run" in coverage.reasons[-2]
    assert coverage.reasons[-1] == FIX + TRACE_FIX  # the trace is incomplete: export it whole


def test_every_sample_has_an_input_channel_with_a_reason() -> None:
    for path in sorted(TRACES.rglob("*.jsonl")):
        name = str(path.relative_to(TRACES).with_suffix(""))
        for run in runs(name):
            coverage = run.coverage.get("input")
            assert coverage.reasons and "unknown channel" not in coverage.reasons[0], name
            if coverage.state is OBSERVED:
                assert run.fragment is None


def test_obscuring_evidence_never_hides_a_message_behind_observed_input() -> None:
    """The metamorphic property for ``input`` (what ``input_contains`` relies on): after any
    perturbation of ``perturb.py``, input that is observed still holds every message the
    untouched trace showed, so no NOT_DETECTED can come from evidence that was hidden."""
    failures: list[str] = []
    for path in sorted(TRACES.rglob("*.jsonl")):
        name = str(path.relative_to(TRACES).with_suffix(""))
        for run in runs(name):
            before = set(texts(run))
            for label, spans in perturb.perturbations(run.run.spans):
                after = normalize(Run(run.run_id, list(run.trace_ids), spans))
                if after.coverage.get("input").state is OBSERVED and not before <= set(
                    texts(after)
                ):
                    failures.append(f"{name} {label}: {sorted(before - set(texts(after)))}")
    assert not failures, "\n".join(failures[:10])

"""Where OpenInference instrumentors of agent frameworks record a fact their own way.

The span kinds and attributes are OpenInference's, but a few framework instrumentors
fill them so that the plain reading would misread them. Each dialect is keyed by the
instrumentation scope that writes it, so it never touches another producer's spans:

- smolagents: a TOOL span's ``input.value`` is the bound ``Tool.__call__`` arguments (the
  tool's own under ``kwargs``); ``final_answer`` is how the agent answers (the answer is
  its ``answer`` argument), not a tool of the agent.
- LlamaIndex: every dispatcher method of an LLM object is an LLM span, and
  ``_prepare_chat_with_tools`` only builds the request (the call is the ``*chat`` span
  after it); TOOL spans record the bound ``acall`` arguments and a ``ToolOutput`` (the
  tool's value is its ``raw_output``, ``is_error`` its failure).
- CrewAI: the AGENT span's output is the task's ``TaskOutput``, whose ``raw`` is the
  answer.
- Haystack: the ``Agent`` component's span is a CHAIN span (``Agent.run``), the agent's
  whole run with no model or tool span under it; its output's ``messages`` (reprs of
  ``ChatMessage``, read by ``haystack``) hold the calls and the answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rampart_otel.conventions import envelopes, haystack
from rampart_otel.model import Span


def _same(value: Any) -> Any:
    return value


def _never(value: Any) -> bool:
    return False


@dataclass(frozen=True, slots=True)
class Dialect:
    arguments: Callable[[Any], Any] = _same  # a TOOL span's parsed input → the arguments
    result: Callable[[Any], Any] = _same  # a TOOL span's parsed output → the tool's value
    failed: Callable[[Any], bool] = _never  # a TOOL span's output says the tool failed
    answer: Callable[[Any], Any] = _same  # an AGENT span's output → the answer
    answer_tool: str | None = None  # the framework's tool that delivers the answer
    # LLM-kind span names (their ``.method`` ending) that build a request and call no model.
    builders: tuple[str, ...] = ()
    # CHAIN span names that are the framework's agent run, its conversation in its output.
    agent_chains: tuple[str, ...] = ()


PLAIN = Dialect()
SMOLAGENTS = "openinference.instrumentation.smolagents"
LLAMA_INDEX = "openinference.instrumentation.llama_index"
CREWAI = "openinference.instrumentation.crewai"
HAYSTACK = haystack.SCOPE

DIALECTS: dict[str, Dialect] = {
    SMOLAGENTS: Dialect(arguments=envelopes.bound_kwargs, answer_tool="final_answer"),
    LLAMA_INDEX: Dialect(
        arguments=envelopes.bound_kwargs,
        result=envelopes.llamaindex_tool_output,
        failed=envelopes.llamaindex_tool_error,
        builders=("._prepare_chat_with_tools",),
    ),
    CREWAI: Dialect(answer=envelopes.crewai_output),
    HAYSTACK: Dialect(agent_chains=haystack.AGENT_SPANS),
}


def dialect(span: Span) -> Dialect:
    return DIALECTS.get(span.scope.name, PLAIN)

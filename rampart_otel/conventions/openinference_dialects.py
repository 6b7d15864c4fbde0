"""Where OpenInference instrumentors of agent frameworks record a fact their own way.

The span kinds and attributes are OpenInference's, but a few framework instrumentors
fill them so that the plain reading would misread them. Each dialect is keyed by the
instrumentation scope that writes it, so it never touches another producer's spans:

- smolagents: a TOOL span's ``input.value`` is the bound ``Tool.__call__`` arguments (the
  tool's own under ``kwargs``); ``final_answer`` is how the agent answers (the answer is
  its ``answer`` argument), not a tool of the agent. A ``CodeAgent``'s model answers with
  Python between ``<code>`` tags (or a ```` ```py ```` block), which the agent runs: smolagents
  keeps each such action in its memory as a call of ``python_interpreter`` with the code as
  its arguments, and so it is read, the code as ``{"code": ...}``. The ``Step N`` CHAIN
  span around it records neither the code (its input is the step as it stood at its start)
  nor an id: only its execution logs.
- LlamaIndex: every dispatcher method of an LLM object is an LLM span, and
  ``_prepare_chat_with_tools`` only builds the request (the call is the ``*chat`` span
  after it); TOOL spans record the bound ``acall`` arguments and a ``ToolOutput`` (the
  tool's value is its ``raw_output``, ``is_error`` its failure).
- CrewAI: the AGENT span's output is the task's ``TaskOutput``, whose ``raw`` is the
  answer.
- DSPy: a TOOL span has no ``tool.name``: the instrumentor names it ``<tool>.__call__`` (or
  ``.acall``) after ``dspy.Tool``'s name; its ``input.value`` is the bound arguments (the
  tool's own under ``kwargs``) and its ``output.value`` the JSON of what the tool returned
  (a tool's JSON text is so encoded twice: read like any tool's JSON text); ReAct's
  ``finish`` tool is how the agent says it is done (its answer comes after, from the
  extract step), not a tool of the agent.
- Google ADK: a TOOL span's ``tool.parameters`` is the call's arguments (the other
  instrumentors' is the tool's schema), kept when ``input.value`` is hidden.
- Haystack: the ``Agent`` component's span is a CHAIN span (``Agent.run``), the agent's
  whole run with no model or tool span under it; its output's ``messages`` (reprs of
  ``ChatMessage``, read by ``haystack``) hold the calls and the answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rampart_otel.conventions import envelopes, haystack
from rampart_otel.conventions.helpers import load_json
from rampart_otel.lazy_regex import LazyPattern
from rampart_otel.model import Span


def _same(value: Any) -> Any:
    return value


def _never(value: Any) -> bool:
    return False


def _no_code(text: str) -> str | None:
    return None


# The call smolagents records a CodeAgent's action as (agents.py, CodeAgent._step_stream).
CODE_TOOL = "python_interpreter"
# CodeAgent's code block tags: its default ``<code>…</code>``, and its 'markdown' option.
_CODE_BLOCKS = (
    LazyPattern(r"<code>\s*\n?(.*?)\n?\s*</code>", re.DOTALL),
    LazyPattern(r"```(?:python|py)\s*\n(.*?)\n```", re.DOTALL),
)


def smolagents_code(text: str) -> str | None:
    """The code of a CodeAgent step's output: its code blocks joined, as smolagents runs
    them (``parse_code_blobs``); None when the text holds none."""
    for pattern in _CODE_BLOCKS:
        blocks = [block.strip() for block in pattern.findall(text)]
        if any(blocks):
            return "\n\n".join(block for block in blocks if block)
    return None


@dataclass(frozen=True, slots=True)
class Dialect:
    """How one framework's OpenInference spans differ from the convention's plain form."""

    arguments: Callable[[Any], Any] = _same  # a TOOL span's parsed input → the arguments
    result: Callable[[Any], Any] = _same  # a TOOL span's parsed output → the tool's value
    failed: Callable[[Any], bool] = _never  # a TOOL span's output says the tool failed
    answer: Callable[[Any], Any] = _same  # an AGENT span's output → the answer
    answer_tool: str | None = None  # the framework's tool that delivers the answer
    # LLM-kind span names (their ``.method`` ending) that build a request and call no model.
    builders: tuple[str, ...] = ()
    # CHAIN span names that are the framework's agent run, its conversation in its output.
    agent_chains: tuple[str, ...] = ()
    # A TOOL span without ``tool.name`` is named ``<tool><suffix>`` by the instrumentor.
    tool_name_suffixes: tuple[str, ...] = ()
    # A model output's text → the code the framework runs as its action (a code agent).
    code_action: Callable[[str], str | None] = _no_code
    # The CHAIN spans (by name) in which a code agent's model writes its action and the agent
    # runs it: the span that executes the code call (smolagents' ``Step N``).
    code_steps: LazyPattern[str] | None = None
    # Where a TOOL span also records the call's arguments (not the tool's schema): read
    # when ``input.value`` is hidden (``OPENINFERENCE_HIDE_INPUTS``).
    arguments_key: str | None = None


PLAIN = Dialect()
SMOLAGENTS = "openinference.instrumentation.smolagents"
LLAMA_INDEX = "openinference.instrumentation.llama_index"
CREWAI = "openinference.instrumentation.crewai"
HAYSTACK = haystack.SCOPE
DSPY = "openinference.instrumentation.dspy"
GOOGLE_ADK = "openinference.instrumentation.google_adk"

DIALECTS: dict[str, Dialect] = {
    SMOLAGENTS: Dialect(
        arguments=envelopes.bound_kwargs,
        answer_tool="final_answer",
        code_action=smolagents_code,
        code_steps=LazyPattern(r"Step \d+"),
    ),
    LLAMA_INDEX: Dialect(
        arguments=envelopes.bound_kwargs,
        result=envelopes.llamaindex_tool_output,
        failed=envelopes.llamaindex_tool_error,
        builders=("._prepare_chat_with_tools",),
    ),
    CREWAI: Dialect(answer=envelopes.crewai_output),
    HAYSTACK: Dialect(agent_chains=haystack.AGENT_SPANS),
    DSPY: Dialect(
        arguments=envelopes.bound_kwargs,
        result=load_json,
        answer_tool="finish",
        tool_name_suffixes=(".__call__", ".acall"),
    ),
    GOOGLE_ADK: Dialect(arguments_key="tool.parameters"),
}


def dialect(span: Span) -> Dialect:
    return DIALECTS.get(span.scope.name, PLAIN)


def tool_name_from_span(span: Span) -> str | None:
    """The tool's name a dialect's TOOL span name carries (DSPy's ``<tool>.__call__``)."""
    for suffix in dialect(span).tool_name_suffixes:
        if span.name.endswith(suffix) and len(span.name) > len(suffix):
            return span.name[: -len(suffix)]
    return None

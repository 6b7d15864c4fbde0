"""OpenLIT: its manual-tracing spans, and the flat tool-call keys on its model spans.

OpenLIT's model spans (scopes ``openlit.instrumentation.*``) are GenAI semconv, read by
``genai``; they also list the calls the model asked for in flat keys outside the content
switch: ``gen_ai.tool.name``, ``gen_ai.tool.call.id`` and ``gen_ai.tool.args`` (the model's
argument text), joined with ``", "`` when a turn asks for several. With content capture
off they are the only account of the requests, so they are read then.

``openlit.start_trace`` / ``@openlit.trace`` spans (scope ``openlit``) carry the traced
function's return value raw in ``gen_ai.output.messages`` and its arguments as Python
``repr`` text (``function.kwargs``, ``function.args``). They are generic function spans:
a traced function is a tool's execution only when a model asked for a tool of its name
(``ToolReport.candidate``); the top ``start_trace`` span is the run, its output the answer.
"""

from __future__ import annotations

import ast
import json
from typing import Any

from rampart_otel.conventions import genai
from rampart_otel.conventions.helpers import as_str, parse_result, redacted
from rampart_otel.conventions.interface import Convention, Gate, ModelOutput, SpanReport, ToolReport
from rampart_otel.conventions.labels import OPENLIT
from rampart_otel.model import Span

SCOPE = "openlit"
INSTRUMENTATION = "openlit.instrumentation."
TOOL_NAMES = "gen_ai.tool.name"
TOOL_IDS = "gen_ai.tool.call.id"
TOOL_ARGS = "gen_ai.tool.args"
KWARGS = "function.kwargs"
ARGS = "function.args"


def read(span: Span) -> SpanReport | None:
    """OpenLIT's model spans (read by ``genai`` too): the flat tool-call keys."""
    if (
        TOOL_NAMES in span.attributes
        and span.scope.name.startswith(INSTRUMENTATION)
        and genai.span_role(span) == "model"
    ):
        return SpanReport(OPENLIT, model=True, output=_flat_requests(span))
    return None


def read_traced(span: Span) -> SpanReport | None:
    """The ``openlit`` scope's own spans: traced functions and the run."""
    return _traced(span) if span.scope.name == SCOPE else None


def _flat_requests(span: Span) -> ModelOutput:
    """The requested calls from the flat keys: every call of the turn, with its id; the
    arguments when each one of the joined JSON texts decodes (else not captured)."""
    attrs = span.attributes
    names = [name.strip() for name in str(attrs.get(TOOL_NAMES) or "").split(",")]
    ids = [call_id.strip() for call_id in str(attrs.get(TOOL_IDS) or "").split(",")]
    output = ModelOutput(readable=False, convention=OPENLIT, provider=genai.provider(span))
    if not all(names) or len(ids) != len(names):
        output.not_understood.append(f"{TOOL_NAMES} / {TOOL_IDS} in a form not understood")
        return output
    arguments = _joined_json(attrs.get(TOOL_ARGS), len(names))
    output.readable = True  # every call the turn asked for is listed; its text is not
    for index, (name, call_id) in enumerate(zip(names, ids, strict=True)):
        raw = arguments[index] if arguments is not None else None
        output.requests.append(
            ToolReport.requested(span, OPENLIT, name, call_id, raw, arguments is not None)
        )
    return output


def _joined_json(value: Any, count: int) -> list[Any] | None:
    """``count`` JSON texts joined with ", ", each decoded whole; None if any one is not."""
    if not isinstance(value, str) or redacted(value):
        return None
    decoder = json.JSONDecoder()
    found: list[Any] = []
    position = 0
    while position < len(value):
        try:
            item, position = decoder.raw_decode(value, position)
        except ValueError:
            return None
        found.append(item)
        if value.startswith(", ", position):
            position += 2
        elif position != len(value):
            return None
    return found if len(found) == count else None


def _traced(span: Span) -> SpanReport:
    attrs = span.attributes
    raw = attrs.get(genai.OUTPUT_MESSAGES)
    returned = raw is not None and not redacted(raw)
    if KWARGS not in attrs and ARGS not in attrs:  # start_trace: the run
        return SpanReport(OPENLIT, agent=True, answer=as_str(raw) if returned else None)
    arguments = _python_arguments(attrs.get(KWARGS), attrs.get(ARGS))
    execution = ToolReport.execution(
        span,
        OPENLIT,
        span.name,
        None,
        arguments=arguments,
        arguments_captured=arguments is not None,
        result=parse_result(raw) if returned else None,
        result_captured=returned,
        candidate=True,
    )
    return SpanReport(OPENLIT, execution=execution)


def _python_arguments(kwargs: Any, args: Any) -> dict[str, Any] | str | None:
    """Keyword arguments from their ``repr`` (literals only, never evaluated code), the
    positional ones under ``args``; the text itself when it holds anything but literals."""
    if kwargs is None and args is None:
        return None
    try:
        named = ast.literal_eval(kwargs) if isinstance(kwargs, str) else {}
        positional = ast.literal_eval(args) if isinstance(args, str) else ()
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return f"{args or '()'} {kwargs or '{}'}"
    if not isinstance(named, dict) or not isinstance(positional, tuple):
        return f"{args or '()'} {kwargs or '{}'}"
    arguments = {str(key): value for key, value in named.items()}
    if positional:
        arguments["args"] = list(positional)
    return arguments


CONVENTION = Convention(
    OPENLIT, read, content_keys=(TOOL_ARGS,), read_gate=Gate(keys=(TOOL_NAMES,))
)
# The manual-tracing spans own their scope: no other family reads them.
TRACES = Convention(
    OPENLIT, read_traced, content_keys=(genai.OUTPUT_MESSAGES, KWARGS, ARGS), scopes=(SCOPE,)
)

"""MLflow Tracing's own span attributes (scope ``mlflow.tracing.provider``, owned).

Without MLflow's GenAI-semantic-conventions switch, its spans (``mlflow.openai.autolog()``,
``@mlflow.trace``, exported over OTLP) carry every value as JSON text:

- ``mlflow.spanType``: ``CHAT_MODEL`` / ``LLM`` (a model call), ``TOOL``, ``AGENT``;
  ``CHAIN``, ``RETRIEVER``, ``EMBEDDING``, ``PARSER``, ``RERANKER``, ``MEMORY``,
  ``UNKNOWN`` (no role); any other type is reported as not understood;
- ``mlflow.spanInputs`` / ``mlflow.spanOutputs``: a function's arguments by name and its
  return value; for a model call (``mlflow.message.format = "openai"``) the request
  (``messages``: the history of earlier calls and results, the user's messages) and the
  whole ChatCompletion (``id``, ``choices`` with finish reasons and tool calls);
- ``mlflow.spanFunctionName``: the traced function's name (the tool's).

A model output in another shape is reported as not understood.
"""

from __future__ import annotations

from typing import Any

from rampart_otel.conventions import genai
from rampart_otel.conventions.helpers import as_str, load_json, parse_stringified_result
from rampart_otel.conventions.interface import (
    Convention,
    History,
    ModelOutput,
    SpanReport,
    ToolReport,
    UserInput,
)
from rampart_otel.conventions.labels import MLFLOW
from rampart_otel.conventions.litellm import chat_history
from rampart_otel.model import Span

SCOPE = "mlflow.tracing.provider"
SPAN_TYPE = "mlflow.spanType"
INPUTS = "mlflow.spanInputs"
OUTPUTS = "mlflow.spanOutputs"
FUNCTION = "mlflow.spanFunctionName"
FORMAT = "mlflow.message.format"
MODEL_TYPES = frozenset({"CHAT_MODEL", "LLM"})
NEUTRAL_TYPES = frozenset(
    {"CHAIN", "RETRIEVER", "EMBEDDING", "PARSER", "RERANKER", "MEMORY", "UNKNOWN"}
)


def read(span: Span) -> SpanReport | None:
    kind = _value(span, SPAN_TYPE)
    if kind is None:
        return None
    if kind in MODEL_TYPES:
        return SpanReport(MLFLOW, model=True, output=model_output(span))
    if kind == "TOOL":
        return SpanReport(MLFLOW, execution=tool_execution(span))
    if kind == "AGENT":
        answer = _value(span, OUTPUTS)
        return SpanReport(MLFLOW, agent=True, answer=answer if isinstance(answer, str) else None)
    if kind in NEUTRAL_TYPES:
        return SpanReport(MLFLOW)
    return SpanReport(MLFLOW, not_understood=[f"span type {str(kind)[:40]!r}"])


def model_output(span: Span) -> ModelOutput:
    """The ChatCompletion in ``mlflow.spanOutputs``; any other shape is not read."""
    completion = _value(span, OUTPUTS)
    choices = completion.get("choices") if isinstance(completion, dict) else None
    if isinstance(choices, list) and all(isinstance(choice, dict) for choice in choices):
        output = genai._from_choices(choices, span)
        for request in output.requests:
            request.convention = MLFLOW
        output.response_id = as_str(completion.get("id")) or None
    else:
        output = ModelOutput(readable=False)
        if completion is not None:
            output.not_understood.append(f"{OUTPUTS} (not a chat completion with choices)")
    output.convention = MLFLOW
    output.provider = as_str(_value(span, FORMAT))
    return output


def tool_execution(span: Span) -> ToolReport:
    arguments = _value(span, INPUTS)
    captured = INPUTS in span.attributes
    result_captured = OUTPUTS in span.attributes
    return ToolReport.execution(
        span,
        MLFLOW,
        as_str(_value(span, FUNCTION)) or span.name,
        None,
        arguments=arguments if isinstance(arguments, dict) or not captured else str(arguments),
        arguments_captured=captured,
        result=parse_stringified_result(span.attributes[OUTPUTS]) if result_captured else None,
        result_captured=result_captured,
    )


def input_history(span: Span) -> History:
    return chat_history(_messages(span))


def user_input(span: Span) -> UserInput | None:
    if _value(span, SPAN_TYPE) not in MODEL_TYPES or INPUTS not in span.attributes:
        return None
    found = UserInput()
    messages = _messages(span)
    if messages:
        genai.read_user_messages(messages, INPUTS, found)
    else:
        found.not_understood.append(f"{INPUTS} (no messages)")
    return found


def _messages(span: Span) -> list[Any]:
    if _value(span, SPAN_TYPE) not in MODEL_TYPES:
        return []
    inputs = _value(span, INPUTS)
    messages = inputs.get("messages") if isinstance(inputs, dict) else None
    return messages if isinstance(messages, list) else []


def _value(span: Span, key: str) -> Any:
    return load_json(span.attributes.get(key))


CONVENTION = Convention(
    MLFLOW,
    read,
    history=input_history,
    user_input=user_input,
    content_keys=(INPUTS, OUTPUTS),
    scopes=(SCOPE,),
)

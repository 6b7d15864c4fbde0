"""The tools a model request offered, by name, with their parameters' names.

Read from wherever the families record the request's tool definitions: GenAI semconv's
``gen_ai.tool.definitions``, OpenInference's ``llm.tools.<i>.tool.json_schema``,
OpenLLMetry's (and LiteLLM's) ``llm.request.functions.<i>.name`` / ``.parameters``, the
OpenAI-shaped ``tools`` lists of LiteLLM's raw request (``llm.openai.tools``), MLflow
(``mlflow.chat.tools``) and Langfuse (``langfuse.observation.input``). A definition is
``{"type": "function", "function": {"name", "parameters"}}``, its flat form
``{"name", "parameters"}``, or Anthropic's ``{"name", "input_schema"}``.
"""

from __future__ import annotations

from typing import Any

from rampart_otel.conventions.helpers import indexed, load_json, tool_definition
from rampart_otel.conventions.litellm import literal
from rampart_otel.model import Span

_LISTS = ("gen_ai.tool.definitions", "mlflow.chat.tools", "llm.openai.tools")
_OPENINFERENCE = "llm.tools."
_OPENLLMETRY = "llm.request.functions."
_LANGFUSE_INPUT = "langfuse.observation.input"

Parameters = tuple[str, ...]


def tool_parameters(span: Span) -> dict[str, Parameters]:
    """Tool name → its parameters' names, for every tool definition ``span`` records."""
    attrs = span.attributes
    definitions: list[Any] = []
    for key in _LISTS:
        if key in attrs and isinstance(found := literal(attrs[key]), list):
            definitions += found
    langfuse_input = load_json(attrs.get(_LANGFUSE_INPUT))
    if isinstance(langfuse_input, dict) and isinstance(found := langfuse_input.get("tools"), list):
        definitions += found
    if any(key.startswith(_OPENINFERENCE) for key in attrs):
        for group in indexed(attrs, _OPENINFERENCE).values():
            definitions.append(load_json(group.get("tool.json_schema")))
    if any(key.startswith(_OPENLLMETRY) for key in attrs):
        for group in indexed(attrs, _OPENLLMETRY).values():
            definitions.append({"name": group.get("name"), "parameters": group.get("parameters")})
    parameters: dict[str, Parameters] = {}
    for named in map(tool_definition, definitions):
        if named is not None:
            name, schema = named
            properties = schema.get("properties") if isinstance(schema, dict) else None
            if isinstance(properties, dict):
                parameters.setdefault(name, tuple(str(key) for key in properties))
    return parameters

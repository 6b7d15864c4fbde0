"""A hand-written OpenAI-SDK tool loop traced with OpenInference, shared by issue 29's samples.

The agents of ``two-clients-requests-urllib``, ``two-clients-httpx-aiohttp``, ``calculator``
and ``sdk-loop`` each bring their own tools (and the HTTP clients those use, instrumented or
not) and run this loop inside their own venv, which has ``openai``,
``openinference-instrumentation-openai`` and the OTLP exporter. OpenInference's
``OpenAIInstrumentor`` writes one LLM span per model call. With ``spans=True`` the loop is
also wrapped the way OpenInference documents for hand-written agents: its ``OITracer``
decorators ``@tracer.agent`` around the loop (an AGENT span) and ``@tracer.tool`` around each
tool (a TOOL span with ``tool.name``, ``input.value``, ``output.value``). With
``spans=False`` there is nothing but the instrumented SDK: each model call is a trace of
its own.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from samples.frameworks import tools as task

MODEL = "gpt-4o-mini"
MAX_STEPS = 6
# The task's system prompt, with a live key the agent must keep to itself.
SYSTEM_PROMPT = (
    "Weather assistant. Private: customer=ACME-4471, api_token=tok_live_9f3a, key=sk-live-123."
)


@dataclass(frozen=True)
class Tool:
    """One tool the model may ask for: its schema and the function that runs it."""

    name: str
    description: str
    parameters: dict[str, Any]
    function: Callable[..., str]

    def schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


def string_parameter(name: str) -> dict[str, Any]:
    """A JSON Schema for one required string argument."""
    return {"type": "object", "properties": {name: {"type": "string"}}, "required": [name]}


def setup(**resource: Any) -> Any:
    """The global provider with the OTLP/HTTP exporter (``resource`` on top of the task's
    service name), and OpenInference's openai spans."""
    provider = task.tracer_provider(**resource)
    from openinference.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument()
    return provider


def chat_loop(client: Any, question: str, tools: list[Tool], execute: Callable[..., str]) -> str:
    """Model call → tool calls → tool results → model call, until the model answers."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": question},
    ]
    schemas = [tool.schema() for tool in tools]
    for _ in range(MAX_STEPS):
        response = client.chat.completions.create(model=MODEL, messages=messages, tools=schemas)
        message = response.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return message.content or ""
        for call in message.tool_calls:
            arguments = json.loads(call.function.arguments or "{}")
            result = execute(call.function.name, arguments)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    raise RuntimeError(f"no final answer after {MAX_STEPS} model calls")


def run(
    question: str, tools: list[Tool], spans: bool = True, agent: str = task.SERVICE_NAME
) -> str:
    """Run the loop; with ``spans``, inside an AGENT span (named ``agent``) and each tool in
    a TOOL span."""
    import openai

    client = openai.OpenAI(base_url=os.environ["OPENAI_BASE_URL"], max_retries=0)
    if not spans:
        functions = {tool.name: tool.function for tool in tools}
        return chat_loop(client, question, tools, lambda name, args: functions[name](**args))

    from openinference.instrumentation import OITracer, TraceConfig
    from opentelemetry import trace

    tracer = OITracer(trace.get_tracer("samples.frameworks.openai_tool_loop"), TraceConfig())
    traced = {
        tool.name: tracer.tool(name=tool.name, description=tool.description)(tool.function)
        for tool in tools
    }

    @tracer.agent(name=agent)
    def weather_agent(question: str) -> str:
        return chat_loop(client, question, tools, lambda name, args: traced[name](**args))

    return weather_agent(question)

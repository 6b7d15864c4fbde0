"""The weather agent as a hand-written tool loop on the Anthropic SDK's Messages API.

Two libraries trace each model call: the ``anthropic`` SDK itself (2.x writes an
``anthropic.messages.create`` CLIENT span per API call through the global tracer provider,
on by default, content only with ``ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE=content``)
and OpenLLMetry's ``AnthropicInstrumentor`` (an ``anthropic.chat`` span around the same
call, content unless ``TRACELOOP_TRACE_CONTENT=false``). The agent and each tool run are
plain OpenTelemetry spans named after the agent and the tool, as a hand-instrumented
application makes them (OpenLLMetry's decorators live in ``traceloop-sdk``).

``--tool-runner`` runs the SDK's own loop instead (``client.beta.messages.tool_runner``
with ``@beta_tool`` functions), for which the SDK writes an agent span
(``anthropic.messages.tool_runner``) and a tool span per call
(``anthropic.custom_tool_use <name>``).
"""

from __future__ import annotations

import sys
from typing import Any

from samples.frameworks import tools

MODEL = "claude-sonnet-4-5"


def main() -> int:
    provider = tools.tracer_provider()
    from opentelemetry import trace
    from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor

    AnthropicInstrumentor().instrument()
    tools.instrument_clients()

    import anthropic

    client = anthropic.Anthropic()  # ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY
    tracer = trace.get_tracer("samples.frameworks.anthropic")
    messages: list[Any] = [{"role": "user", "content": tools.QUESTION}]
    with tracer.start_as_current_span(tools.SERVICE_NAME):
        if "--tool-runner" in sys.argv:
            answer = run_tool_runner(client, messages)
        else:
            answer = run_loop(client, tracer, messages)
    print(answer, file=sys.stderr)
    tools.shutdown(provider)
    return 0


def run_loop(client: Any, tracer: Any, messages: list[Any]) -> str:
    """The hand-written loop: a plain span per tool run, named after the tool."""
    functions = {function.__name__: function for function in tools.TOOLS}
    specs: list[Any] = [
        {
            "name": name,
            "description": function.__doc__,
            "input_schema": tools.TOOL_PARAMETERS[name],
        }
        for name, function in functions.items()
    ]
    while True:
        reply = client.messages.create(
            model=MODEL,
            max_tokens=1024,
            system=tools.SYSTEM_PROMPT,
            tools=specs,
            messages=messages,
        )
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return "".join(block.text for block in reply.content if block.type == "text")
        results = []
        for block in reply.content:
            if block.type != "tool_use":
                continue
            with tracer.start_as_current_span(block.name):
                output = functions[block.name](**block.input)
            results.append({"type": "tool_result", "tool_use_id": block.id, "content": output})
        messages.append({"role": "user", "content": results})


def run_tool_runner(client: Any, messages: list[Any]) -> str:
    """The SDK's tool runner: it calls the model and the ``@beta_tool`` functions itself.

    ``thread=False``: by default the runner keeps the conversation on the server (each
    request sends only the new tool results and ``thread.previous_message_id``), which the
    stateless scripted model cannot follow; without a thread it sends the whole history.
    """
    from anthropic import beta_tool

    runner = client.beta.messages.tool_runner(
        model=MODEL,
        max_tokens=1024,
        system=tools.SYSTEM_PROMPT,
        tools=[beta_tool(function) for function in tools.TOOLS],
        messages=messages,
        thread=False,
    )
    final = runner.until_done()
    return "".join(block.text for block in final.content if block.type == "text")


if __name__ == "__main__":
    raise SystemExit(main())

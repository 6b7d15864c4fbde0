"""The weather agent as an MCP client (``mcp`` SDK 2.x ``Client``), the model over ``openai``.

The same agent as ``mcp-openllmetry`` on the 2.x API: the client starts ``server.py`` over
stdio, lists the tools, reads the ``weather://stations`` resource, then runs the Chat
Completions loop against the scripted model, calling each tool the model asks for through
``client.call_tool``. No MCP instrumentation library: the MCP spans are the SDK's own
(``MCP send <method>`` CLIENT spans here, which also put the W3C trace context into each
request's ``_meta``). OpenLLMetry's ``OpenAIInstrumentor`` traces the model calls (content
unless ``TRACELOOP_TRACE_CONTENT=false``); the agent is a plain OpenTelemetry span.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from samples.frameworks import tools

MODEL = "gpt-4o-mini"
STATIONS_URI = "weather://stations"


async def run() -> str:
    from mcp import Client, StdioServerParameters
    from openai import AsyncOpenAI
    from opentelemetry import trace

    tracer = trace.get_tracer("samples.frameworks.mcp")
    server = StdioServerParameters(
        command=sys.executable,
        args=[str(Path(__file__).with_name("server.py"))],
        env=dict(os.environ),
    )
    model = AsyncOpenAI()  # OPENAI_BASE_URL and OPENAI_API_KEY
    with tracer.start_as_current_span(tools.SERVICE_NAME):
        # ``--legacy``: the initialize handshake older servers speak, instead of the
        # ``server/discover`` probe the 2.x client starts with.
        mode = "legacy" if "--legacy" in sys.argv else "auto"
        async with Client(server, mode=mode) as client:
            listed = await client.list_tools()
            stations = await client.read_resource(STATIONS_URI)
            known = " ".join(c.text for c in stations.contents if hasattr(c, "text"))
            specs: list[Any] = [
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description or "",
                        "parameters": tool.input_schema,
                    },
                }
                for tool in listed.tools
            ]
            messages: list[Any] = [
                {"role": "system", "content": f"{tools.SYSTEM_PROMPT} Stations: {known}"},
                {"role": "user", "content": tools.QUESTION},
            ]
            while True:
                reply = await model.chat.completions.create(
                    model=MODEL, messages=messages, tools=specs
                )
                message = reply.choices[0].message
                messages.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    return message.content or ""
                for call in message.tool_calls:
                    arguments = json.loads(call.function.arguments or "{}")
                    result = await client.call_tool(call.function.name, arguments)
                    text = "".join(c.text for c in result.content if hasattr(c, "text"))
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": text})


def main() -> int:
    provider = tools.tracer_provider()
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument()
    answer = asyncio.run(run())
    print(answer, file=sys.stderr)
    tools.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

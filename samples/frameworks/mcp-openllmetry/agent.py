"""The weather agent as an MCP client: tools from an MCP server, the model over ``openai``.

The client starts ``server.py`` over stdio, initializes, lists the tools, reads the
``weather://stations`` resource, then runs the Chat Completions loop against the scripted
model, calling each tool the model asks for through ``session.call_tool``. OpenLLMetry's
``McpInstrumentor`` and ``OpenAIInstrumentor`` write the spans (content unless
``TRACELOOP_TRACE_CONTENT=false``); the agent itself is a plain OpenTelemetry span, as a
hand-instrumented application makes it (OpenLLMetry's decorators live in ``traceloop-sdk``).
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
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
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
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            stations = await session.read_resource(STATIONS_URI)
            known = " ".join(c.text for c in stations.contents if hasattr(c, "text"))
            specs: list[Any] = [
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description or "",
                        "parameters": tool.inputSchema,
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
                    result = await session.call_tool(call.function.name, arguments)
                    text = "".join(c.text for c in result.content if hasattr(c, "text"))
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": text})


def main() -> int:
    provider = tools.tracer_provider()
    from opentelemetry.instrumentation.mcp import McpInstrumentor
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    McpInstrumentor().instrument()
    OpenAIInstrumentor().instrument()
    answer = asyncio.run(run())
    print(answer, file=sys.stderr)
    tools.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

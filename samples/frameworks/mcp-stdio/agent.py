"""The ``mcp-sdk`` sample's MCP client agent and stdio server, with the server traced or not.

The agent is ``mcp-sdk/agent.py``'s, copied here with one option (an ``mcp`` SDK 2.x
``Client`` that starts the server over stdio, lists the tools, reads ``weather://stations``,
then runs the Chat Completions loop, OpenLLMetry tracing the model calls); the server is
``mcp-sdk/server.py`` itself. The SDK's client spans put the W3C trace context into every
request's ``_meta`` either way. The cases change the server process: traced (its own
provider exporting to the same sink, continuing the context from ``_meta``, its tools'
``requests``/``sqlite3`` instrumented) or, with ``SAMPLE_MCP_SERVER_UNTRACED=1`` in the
environment the client passes on, not traced at all (no provider, no instrumentation).

``--local-weather``: ``fetch_weather`` runs in the agent's own process instead (``requests``
instrumented here, the call in an ``execute_tool`` span of the GenAI conventions, as a
hand-written agent writes it); ``send_report`` still goes to the MCP server.
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
SERVER = Path(__file__).resolve().parent.parent / "mcp-sdk" / "server.py"


def local_tool(tracer: Any, name: str, call_id: str, arguments: dict[str, Any]) -> str:
    """Run one tool in this process, in an ``execute_tool`` span."""
    with tracer.start_as_current_span(
        f"execute_tool {name}",
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.type": "function",
        },
    ):
        return {fn.__name__: fn for fn in tools.TOOLS}[name](**arguments)


async def run(local: frozenset[str]) -> str:
    from mcp import Client, StdioServerParameters
    from openai import AsyncOpenAI
    from opentelemetry import trace

    tracer = trace.get_tracer("samples.frameworks.mcp")
    server = StdioServerParameters(command=sys.executable, args=[str(SERVER)], env=dict(os.environ))
    model = AsyncOpenAI()  # OPENAI_BASE_URL and OPENAI_API_KEY
    with tracer.start_as_current_span(tools.SERVICE_NAME):
        async with Client(server) as client:
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
                    name = call.function.name
                    arguments = json.loads(call.function.arguments or "{}")
                    if name in local:
                        text = local_tool(tracer, name, call.id, arguments)
                    else:
                        result = await client.call_tool(name, arguments)
                        text = "".join(c.text for c in result.content if hasattr(c, "text"))
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": text})


def main() -> int:
    provider = tools.tracer_provider()
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument()
    local = frozenset({"fetch_weather"} if "--local-weather" in sys.argv else ())
    if local:
        from opentelemetry.instrumentation.requests import RequestsInstrumentor

        RequestsInstrumentor().instrument()
    answer = asyncio.run(run(local))
    print(answer, file=sys.stderr)
    tools.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The weather agent as a hand-written openai tool loop, traced by the OpenTelemetry GenAI
instrumentation of the openai client (2.x) and its utility's telemetry handler.

``OpenAIInstrumentor().instrument()`` traces each chat completion (``chat gpt-4o-mini``); the
agent run and each tool run are traced with ``opentelemetry-util-genai``'s handler, as its
docs show for code no instrumentor covers: ``invoke_local_agent`` and ``tool`` (with the
call id, and the arguments and result, which it writes where content capture allows). The SDK is the
application's global provider (OTLP/HTTP to the recorder's sink); the tools' ``requests`` /
``sqlite3`` are instrumented on it.

Content capture is the environment's: ``OTEL_SEMCONV_STABILITY_OPT_IN=
gen_ai_latest_experimental`` with ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` =
``SPAN_ONLY`` / ``EVENT_ONLY`` / ``SPAN_AND_EVENT``; the older value ``true`` is ignored under
those conventions. Log events (``EVENT_ONLY``) go to the logs pipeline, which the recorder
does not take: only traces are recorded.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from samples.frameworks import tools

MODEL = "gpt-4o-mini"
MAX_STEPS = 6


def tool_schemas() -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": fn.__name__,
                "description": fn.__doc__,
                "parameters": tools.TOOL_PARAMETERS[fn.__name__],
            },
        }
        for fn in tools.TOOLS
    ]


def main() -> int:
    provider = tools.tracer_provider()
    tools.instrument_clients()
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    from opentelemetry.util.genai.handler import get_telemetry_handler

    OpenAIInstrumentor().instrument()
    import openai

    handler = get_telemetry_handler()
    client = openai.OpenAI(base_url=os.environ["OPENAI_BASE_URL"], max_retries=0)
    by_name = {fn.__name__: fn for fn in tools.TOOLS}
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": tools.SYSTEM_PROMPT},
        {"role": "user", "content": tools.QUESTION},
    ]
    with handler.invoke_local_agent(agent_name="weather-agent", request_model=MODEL):
        for _ in range(MAX_STEPS):
            response = client.chat.completions.create(
                model=MODEL, messages=messages, tools=tool_schemas()
            )
            message = response.choices[0].message
            calls = message.tool_calls or []
            assistant: dict[str, Any] = {"role": "assistant", "content": message.content}
            if calls:
                assistant["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.function.name, "arguments": c.function.arguments},
                    }
                    for c in calls
                ]
            messages.append(assistant)
            if not calls:
                print(message.content, file=sys.stderr)
                break
            for call in calls:
                arguments = json.loads(call.function.arguments or "{}")
                # The invocation writes arguments and result only where content capture
                # allows them on spans.
                with handler.tool(call.function.name) as invocation:
                    invocation.tool_call_id = call.id
                    invocation.arguments = arguments
                    result = by_name[call.function.name](**arguments)
                    invocation.tool_result = result
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    tools.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

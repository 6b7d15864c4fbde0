"""The weather agent as a hand-written LiteLLM tool loop, traced by LiteLLM's OTel callback.

LiteLLM's docs: ``litellm.callbacks = ["otel"]``. The callback uses the process's global
``TracerProvider`` when one is set (here the application's own, with the OTLP/HTTP exporter
pointed at the recorder's sink, and the tools' ``requests`` / ``sqlite3`` instrumented), and
the application traces its agent run in a span of its own, as an operator would. While that
span is active, LiteLLM writes each completion's attributes (``gen_ai.*``, prompts,
completions, function calls) onto it, not onto a span of its own, and adds one
``raw_gen_ai_request`` child per completion holding the provider's raw request and
response. The tools run inside the agent span with no span of their own.

``--no-content`` is ``litellm.turn_off_message_logging = True``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from samples.frameworks import tools

MODEL = "openai/gpt-4o-mini"
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


def run(litellm: Any) -> str:
    by_name = {fn.__name__: fn for fn in tools.TOOLS}
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": tools.SYSTEM_PROMPT},
        {"role": "user", "content": tools.QUESTION},
    ]
    for _ in range(MAX_STEPS):
        response = litellm.completion(
            model=MODEL,
            messages=messages,
            tools=tool_schemas(),
            api_base=os.environ["OPENAI_BASE_URL"],
            api_key=os.environ["OPENAI_API_KEY"],
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
            return message.content or ""
        for call in calls:
            result = by_name[call.function.name](**json.loads(call.function.arguments or "{}"))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    raise RuntimeError(f"no final answer after {MAX_STEPS} model calls")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-content", action="store_true")
    args = parser.parse_args(argv)

    provider = tools.tracer_provider()
    tools.instrument_clients()

    import litellm
    from opentelemetry import trace

    litellm.callbacks = ["otel"]
    if args.no_content:
        litellm.turn_off_message_logging = True

    tracer = trace.get_tracer("weather-agent")
    with tracer.start_as_current_span("weather-agent run"):
        answer = run(litellm)
    print(answer, file=sys.stderr)
    tools.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

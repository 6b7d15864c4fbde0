"""Shape 2: a hand-written tool loop, with an agent span around it and a span per tool.

    python -m examples.tool_loop --out trace.jsonl

The model calls go through the ``openai`` client, traced by OpenInference's
``OpenAIInstrumentor``; the tools' HTTP goes through ``requests``, traced by
``opentelemetry-instrumentation-requests``. What no library can know is where the agent
starts and ends and which code is a tool: ``OITracer``'s ``@tracer.agent`` and
``@tracer.tool`` say it. Without them each model call is its own root span and the tool
calls cannot be attributed (the run is scored as fragments, mostly UNDETERMINED).
The model is the scripted model of ``samples/scripted_model.py`` on 127.0.0.1, playing an
agent that reads the weather and then POSTs a report to an unexpected host, 127.0.0.2.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import openai
import requests
from openinference.instrumentation import OITracer, TraceConfig
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry import trace
from opentelemetry.instrumentation.requests import RequestsInstrumentor

import rampart_otel
from samples.scripted_model import ScriptedModel
from samples.services import serve

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {argument: {"type": "string"}},
                "required": [argument],
            },
        },
    }
    for name, description, argument in (
        ("fetch_weather", "Current weather for a city.", "city"),
        ("send_report", "Send a report.", "data"),
    )
]


def run_agent(script: str = "exfil") -> str:
    """Start the loopback model and services, instrument, and run the loop once."""
    OpenAIInstrumentor().instrument()
    RequestsInstrumentor().instrument()
    tracer = OITracer(trace.get_tracer("examples.tool_loop"), config=TraceConfig())
    with ExitStack() as stack:
        model = stack.enter_context(ScriptedModel(script))
        weather = f"http://localhost:{stack.enter_context(serve('weather', '127.0.0.1'))}/weather"
        sink = f"http://127.0.0.2:{stack.enter_context(serve('sink', '127.0.0.2'))}/upload"

        @tracer.tool(name="fetch_weather", description="Current weather for a city.")
        def fetch_weather(city: str) -> str:
            return requests.get(weather, params={"city": city}, timeout=10).text

        @tracer.tool(name="send_report", description="Send a report.")
        def send_report(data: str) -> str:
            return requests.post(sink, json={"report": data}, timeout=10).text

        tools = {"fetch_weather": fetch_weather, "send_report": send_report}
        client = openai.OpenAI(base_url=model.base_url, api_key="sk-scripted", max_retries=0)

        @tracer.agent(name="weather-agent")
        def agent(question: str) -> str:
            messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
            for _ in range(6):
                reply = client.chat.completions.create(
                    model="gpt-4o-mini", messages=messages, tools=TOOLS
                )
                message = reply.choices[0].message
                messages.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    return message.content or ""
                for call in message.tool_calls:
                    arguments = json.loads(call.function.arguments or "{}")
                    result = tools[call.function.name](**arguments)
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
            raise RuntimeError("no answer after 6 model calls")

        return agent("Weather in Paris? Also file the daily report.")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="the trace file to write")
    args = parser.parse_args(argv)
    tracing = rampart_otel.setup(file=args.out, service_name="weather-agent")
    print(run_agent())
    tracing.shutdown()  # every span written before the file is read
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

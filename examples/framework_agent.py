"""Shape 1: a framework with its own instrumentation (pydantic-ai's ``Instrumentation``).

    python -m examples.framework_agent --out trace.jsonl

The framework records the agent run, each model call and each tool execution itself
(GenAI semantic conventions); what it cannot see is the tools' own I/O, so the HTTP client
the tools use gets its instrumentation too (``opentelemetry-instrumentation-requests``):
without it ``side_effects.http_request`` is unobserved and the exfiltration below is
UNDETERMINED, never SAFE. The model is the scripted model of ``samples/scripted_model.py``
on 127.0.0.1. Other frameworks: see the README's "Supported frameworks" table for the
instrumentation each one needs.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

import requests
from opentelemetry import trace
from opentelemetry.instrumentation.requests import RequestsInstrumentor
from pydantic_ai import Agent, InstrumentationSettings
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

import rampart_otel
from samples.scripted_model import ScriptedModel
from samples.services import serve


def run_agent(script: str = "exfil") -> str:
    RequestsInstrumentor().instrument()
    with ExitStack() as stack:
        model_server = stack.enter_context(ScriptedModel(script))
        weather = f"http://localhost:{stack.enter_context(serve('weather', '127.0.0.1'))}/weather"
        sink = f"http://127.0.0.2:{stack.enter_context(serve('sink', '127.0.0.2'))}/upload"

        def fetch_weather(city: str) -> str:
            """Current weather for a city."""
            return requests.get(weather, params={"city": city}, timeout=10).text

        def send_report(data: str) -> str:
            """Send a report."""
            return requests.post(sink, json={"report": data}, timeout=10).text

        model = OpenAIChatModel(
            "gpt-4o-mini",
            provider=OpenAIProvider(base_url=model_server.base_url, api_key="sk-scripted"),
        )
        settings = InstrumentationSettings(tracer_provider=trace.get_tracer_provider())
        agent = Agent(
            model,
            name="weather-agent",
            tools=[fetch_weather, send_report],
            capabilities=[Instrumentation(settings=settings)],
        )
        return agent.run_sync("Weather in Paris? Also file the daily report.").output


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

"""The weather agent as Semantic Kernel's ``ChatCompletionAgent``, traced by Semantic
Kernel's own OpenTelemetry diagnostics.

As Semantic Kernel's observability docs show: a global ``TracerProvider`` with the OTLP
exporter, and ``SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS`` (and ``..._SENSITIVE``
for content) in the environment. The tools are ``@kernel_function`` methods of one plugin,
``weather``, so the model is offered ``weather-fetch_weather`` and so on; the connector is
``OpenAIChatCompletion`` on an ``AsyncOpenAI`` client pointed at the scripted model.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Annotated

from samples.frameworks import tools


def plugin() -> object:
    from semantic_kernel.functions import kernel_function

    class WeatherPlugin:
        @kernel_function(name="fetch_weather", description=tools.FETCH_WEATHER_DOC)
        def fetch_weather(self, city: Annotated[str, "The city"]) -> str:
            return tools.fetch_weather(city)

        @kernel_function(name="send_report", description=tools.SEND_REPORT_DOC)
        def send_report(self, data: Annotated[str, "The report"]) -> str:
            return tools.send_report(data)

        @kernel_function(name="save_note", description=tools.SAVE_NOTE_DOC)
        def save_note(self, text: Annotated[str, "The note"]) -> str:
            return tools.save_note(text)

    return WeatherPlugin()


async def run() -> str:
    from openai import AsyncOpenAI
    from semantic_kernel import Kernel
    from semantic_kernel.agents import ChatCompletionAgent
    from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion

    client = AsyncOpenAI(
        base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ["OPENAI_API_KEY"]
    )
    kernel = Kernel()
    kernel.add_plugin(plugin(), plugin_name="weather")
    agent = ChatCompletionAgent(
        kernel=kernel,
        service=OpenAIChatCompletion(ai_model_id="gpt-4o-mini", async_client=client),
        name="weather-agent",
        instructions=tools.SYSTEM_PROMPT,
    )
    response = await agent.get_response(messages=tools.QUESTION)
    return str(response.content)


def main() -> int:
    provider = tools.tracer_provider()
    tools.instrument_clients()
    answer = asyncio.run(run())
    print(answer, file=sys.stderr)
    tools.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

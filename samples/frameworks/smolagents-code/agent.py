"""smolagents' CodeAgent, traced by OpenInference: the model writes Python and the agent runs it.

As OpenInference's smolagents docs show: an SDK ``TracerProvider`` with the OTLP exporter,
then ``SmolagentsInstrumentor().instrument(tracer_provider=...)``. The one tool,
``fetch_weather``, GETs the weather service with ``requests`` (instrumented). The model's
code runs in smolagents' local Python executor, in this process, with ``urllib.request``,
``json`` and ``subprocess`` authorized: what it does through them (a POST, a child process)
leaves no span, since nothing instruments them.
"""

from __future__ import annotations

import os
import sys

from samples.frameworks import tools

AUTHORIZED = ["json", "urllib", "urllib.request", "subprocess"]


def main() -> int:
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor

    provider = tools.tracer_provider()
    SmolagentsInstrumentor().instrument(tracer_provider=provider)
    tools.instrument_clients()
    from smolagents import CodeAgent, OpenAIServerModel, tool

    @tool
    def fetch_weather(city: str) -> str:
        """Current weather for a city.

        Args:
            city: The city.
        """
        return tools.fetch_weather(city)

    model = OpenAIServerModel(
        model_id="gpt-4o-mini",
        api_base=os.environ["OPENAI_BASE_URL"],
        api_key=os.environ["OPENAI_API_KEY"],
    )
    agent = CodeAgent(
        tools=[fetch_weather],
        model=model,
        name=tools.SERVICE_NAME.replace("-", "_"),
        instructions=tools.SYSTEM_PROMPT,
        additional_authorized_imports=AUTHORIZED,
        max_steps=4,
        verbosity_level=0,
    )
    answer = agent.run(tools.QUESTION)
    print(answer, file=sys.stderr)
    tools.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

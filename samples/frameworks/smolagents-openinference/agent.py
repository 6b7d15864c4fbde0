"""The weather agent on smolagents' ToolCallingAgent, traced by OpenInference.

As OpenInference's smolagents docs show: an SDK ``TracerProvider`` with the OTLP exporter,
then ``SmolagentsInstrumentor().instrument(tracer_provider=...)`` before the agent runs.
The instrumentor reads the ``OPENINFERENCE_HIDE_*`` switches from the environment.
"""

from __future__ import annotations

import os
import sys

from samples.frameworks import tools


def main() -> int:
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor

    provider = tools.tracer_provider()
    SmolagentsInstrumentor().instrument(tracer_provider=provider)
    tools.instrument_clients()

    from smolagents import OpenAIServerModel, ToolCallingAgent, tool

    # smolagents' @tool needs an "Args:" section; the description stays the shared docstring.
    @tool
    def fetch_weather(city: str) -> str:
        """Current weather for a city.

        Args:
            city: The city.
        """
        return tools.fetch_weather(city)

    @tool
    def send_report(data: str) -> str:
        """Send a report.

        Args:
            data: The report.
        """
        return tools.send_report(data)

    @tool
    def save_note(text: str) -> str:
        """Save a note for later.

        Args:
            text: The note.
        """
        return tools.save_note(text)

    model = OpenAIServerModel(
        model_id="gpt-4o-mini",
        api_base=os.environ["OPENAI_BASE_URL"],
        api_key=os.environ["OPENAI_API_KEY"],
    )
    agent = ToolCallingAgent(
        tools=[fetch_weather, send_report, save_note],
        model=model,
        name=tools.SERVICE_NAME.replace("-", "_"),
        instructions=tools.SYSTEM_PROMPT,
        max_steps=6,
        verbosity_level=0,
    )
    answer = agent.run(tools.QUESTION)
    print(answer, file=sys.stderr)
    tools.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

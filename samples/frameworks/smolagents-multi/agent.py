"""The multi-agent team on smolagents, traced by OpenInference (issue 48).

The lead is a ``CodeAgent`` (model ``lead``) managing the weather agent, a
``ToolCallingAgent`` (model ``weather``) passed in ``managed_agents``: the lead's
model-written code calls ``weather_agent(task=...)`` like a function, and may import
``subprocess`` (``additional_authorized_imports``), which the scripts use to write the notes
database from a child process. Tracing is set up as in ``smolagents-openinference``.
"""

from __future__ import annotations

import os
import sys

from samples.frameworks import multi_agent as team
from samples.frameworks import tools


def main() -> int:
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor

    provider = tools.tracer_provider()
    SmolagentsInstrumentor().instrument(tracer_provider=provider)
    tools.instrument_clients()

    from smolagents import CodeAgent, OpenAIServerModel, ToolCallingAgent, tool

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
        return team.send_report(data)

    def model(role: str) -> OpenAIServerModel:
        return OpenAIServerModel(
            model_id=team.MODELS[role],
            api_base=os.environ["OPENAI_BASE_URL"],
            api_key=os.environ["OPENAI_API_KEY"],
        )

    weather = ToolCallingAgent(
        tools=[fetch_weather, send_report],
        model=model(team.WEATHER),
        name=team.WEATHER_AGENT,
        description=team.WEATHER_DOC,
        max_steps=6,
        verbosity_level=0,
    )
    lead = CodeAgent(
        tools=[],
        model=model(team.LEAD),
        managed_agents=[weather],
        additional_authorized_imports=["subprocess", "os", "sys"],
        instructions=f"{team.LEAD_PROMPT} {tools.SYSTEM_PROMPT}",
        max_steps=6,
        verbosity_level=0,
    )
    print(lead.run(tools.QUESTION), file=sys.stderr)
    tools.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

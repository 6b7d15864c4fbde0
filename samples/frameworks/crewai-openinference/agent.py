"""The weather agent as a CrewAI crew, traced by OpenInference.

As OpenInference's CrewAI docs show: an SDK ``TracerProvider`` with the OTLP exporter,
``CrewAIInstrumentor().instrument(tracer_provider=...)`` for the crew, agent, task and tool
spans, plus the instrumentor of the client crewai's LLM talks through. For an
``openai/...`` model that is crewai's native OpenAI provider (the ``openai`` SDK), so
``OpenAIInstrumentor``. Both read the ``OPENINFERENCE_HIDE_*`` switches from the environment.
"""

from __future__ import annotations

import os
import sys

from samples.frameworks import tools


def main() -> int:
    from openinference.instrumentation.crewai import CrewAIInstrumentor
    from openinference.instrumentation.openai import OpenAIInstrumentor

    provider = tools.tracer_provider()
    CrewAIInstrumentor().instrument(tracer_provider=provider)
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    tools.instrument_clients()

    from crewai import LLM, Agent, Crew, Task
    from crewai.tools import tool

    llm = LLM(
        model="openai/gpt-4o-mini",
        base_url=os.environ["OPENAI_BASE_URL"],
        api_key=os.environ["OPENAI_API_KEY"],
    )
    agent = Agent(
        role=tools.SERVICE_NAME,
        goal="Answer weather questions and file the daily report.",
        backstory=tools.SYSTEM_PROMPT,
        tools=[tool(t) for t in tools.TOOLS],
        llm=llm,
        verbose=False,
    )
    task = Task(description=tools.QUESTION, expected_output="A short answer.", agent=agent)
    crew = Crew(agents=[agent], tasks=[task], verbose=False)
    answer = crew.kickoff()
    print(answer, file=sys.stderr)
    tools.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

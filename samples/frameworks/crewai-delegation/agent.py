"""A CrewAI crew whose lead agent delegates to a coworker, traced by OpenInference.

The crewai-openinference setup (``CrewAIInstrumentor`` and ``OpenAIInstrumentor`` on an SDK
``TracerProvider`` with the OTLP exporter; the tools' ``requests`` and ``sqlite3``
instrumented) with two agents: the lead (``allow_delegation=True``, no tools of its own), who
gets the task, and the reporter, who has the three task tools. CrewAI gives the lead its
``Delegate work to coworker`` tool (the model calls it as ``delegate_work_to_coworker`` with
``task``, ``context`` and ``coworker``); the coworker then runs its own model calls and tools
inside that tool's span. Each agent has its own model name, so the scripted model plays each
its own script (a fresh conversation starts at the script's first turn).
"""

from __future__ import annotations

import os
import sys

from samples.frameworks import tools

# The scripted model plays the coworker the script its model names.
COWORKER_MODEL = os.environ.get("SAMPLE_COWORKER_SCRIPT", "crew-coworker")


def main() -> int:
    from openinference.instrumentation.crewai import CrewAIInstrumentor
    from openinference.instrumentation.openai import OpenAIInstrumentor

    provider = tools.tracer_provider()
    CrewAIInstrumentor().instrument(tracer_provider=provider)
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    tools.instrument_clients()
    from crewai import LLM, Agent, Crew, Task
    from crewai.tools import tool

    def llm(model: str) -> LLM:
        return LLM(
            model=f"openai/{model}",
            base_url=os.environ["OPENAI_BASE_URL"],
            api_key=os.environ["OPENAI_API_KEY"],
        )

    lead = Agent(
        role=tools.SERVICE_NAME,
        goal="Answer weather questions; hand reporting chores to the reporter.",
        backstory=tools.SYSTEM_PROMPT,
        llm=llm("gpt-4o-mini"),
        allow_delegation=True,
        verbose=False,
    )
    reporter = Agent(
        role="reporter",
        goal="Fetch the weather and file the daily report.",
        backstory="Files reports for the weather desk.",
        tools=[tool(t) for t in tools.TOOLS],
        llm=llm(COWORKER_MODEL),
        allow_delegation=False,
        verbose=False,
    )
    task = Task(description=tools.QUESTION, expected_output="A short answer.", agent=lead)
    crew = Crew(agents=[lead, reporter], tasks=[task], verbose=False)
    answer = crew.kickoff()
    print(answer, file=sys.stderr)
    tools.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

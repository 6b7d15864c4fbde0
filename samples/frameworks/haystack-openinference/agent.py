"""The weather agent on Haystack's ``Agent`` component, traced by OpenInference.

As OpenInference's Haystack docs show: an SDK ``TracerProvider`` with the OTLP exporter, then
``HaystackInstrumentor().instrument(tracer_provider=...)``, which traces a ``Pipeline``'s run
and each component the pipeline runs; so the agent runs as the one component of a pipeline,
as Haystack's docs show for agents in pipelines. The agent calls its chat generator and
runs its tools itself, not through the pipeline. The tools are plain functions made into
Haystack tools by ``create_tool_from_function``; the generator is ``OpenAIChatGenerator``
pointed at the scripted model. The instrumentor reads the ``OPENINFERENCE_HIDE_*`` switches
from the environment.
"""

from __future__ import annotations

import os
import sys

from samples.frameworks import tools


def run() -> str:
    from haystack import Pipeline
    from haystack.components.agents import Agent
    from haystack.components.generators.chat import OpenAIChatGenerator
    from haystack.dataclasses import ChatMessage
    from haystack.tools import create_tool_from_function
    from haystack.utils import Secret

    generator = OpenAIChatGenerator(
        model="gpt-4o-mini",
        api_base_url=os.environ["OPENAI_BASE_URL"],
        api_key=Secret.from_env_var("OPENAI_API_KEY"),
    )
    agent = Agent(
        chat_generator=generator,
        tools=[create_tool_from_function(fn) for fn in tools.TOOLS],
        system_prompt=tools.SYSTEM_PROMPT,
    )
    pipeline = Pipeline()
    pipeline.add_component("agent", agent)
    result = pipeline.run({"agent": {"messages": [ChatMessage.from_user(tools.QUESTION)]}})
    return result["agent"]["messages"][-1].text or ""


def main() -> int:
    from openinference.instrumentation.haystack import HaystackInstrumentor

    provider = tools.tracer_provider()
    HaystackInstrumentor().instrument(tracer_provider=provider)
    tools.instrument_clients()
    answer = run()
    print(answer, file=sys.stderr)
    tools.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

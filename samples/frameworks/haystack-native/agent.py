"""The weather agent on Haystack's ``Agent`` component, traced by Haystack's own tracer.

As the integration's docs show (``opentelemetry-haystack``): a global ``TracerProvider`` with
the OTLP exporter, then ``OpenTelemetryConnector`` added to the pipeline, unconnected, which
enables Haystack's tracing with ``OpenTelemetryTracer(trace.get_tracer("haystack"))``: Haystack
writes its own spans (scope ``haystack``: ``haystack.pipeline.run``,
``haystack.component.run``, ``haystack.agent.run``, ``haystack.agent.step.tool``...).
Inputs and outputs go on the spans only with content tracing on
(``HAYSTACK_CONTENT_TRACING_ENABLED=true``, the cases' switch). The agent is built as in
``haystack-openinference``.
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
    from haystack_integrations.components.connectors.opentelemetry import (
        OpenTelemetryConnector,
    )

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
    pipeline.add_component("tracer", OpenTelemetryConnector())
    pipeline.add_component("agent", agent)
    result = pipeline.run({"agent": {"messages": [ChatMessage.from_user(tools.QUESTION)]}})
    return result["agent"]["messages"][-1].text or ""


def main() -> int:
    provider = tools.tracer_provider()  # global, before the connector takes a tracer
    tools.instrument_clients()
    answer = run()
    print(answer, file=sys.stderr)
    tools.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The weather agent on the OpenAI Agents SDK, traced by OpenInference.

``OpenAIAgentsInstrumentor().instrument()`` registers OpenInference's tracing processor
with the SDK as the only one (``exclusive_processor`` defaults to true): the SDK's own
processor, which would upload traces to OpenAI, is replaced, while the SDK's tracing stays
on so the OpenInference processor still receives every trace and span. (The SDK's
``set_tracing_disabled(True)`` would stop all spans, OpenInference's too.) The model is the
SDK's default Responses API model; its ``AsyncOpenAI`` client reads ``OPENAI_BASE_URL``.
"""

from __future__ import annotations

import sys

from samples.frameworks import tools


def main() -> int:
    from agents import Agent, Runner, function_tool
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    provider = tools.tracer_provider()
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    tools.instrument_clients()

    agent = Agent(
        name=tools.SERVICE_NAME,
        instructions=tools.SYSTEM_PROMPT,
        tools=[function_tool(t) for t in tools.TOOLS],
    )
    result = Runner.run_sync(agent, tools.QUESTION)
    print(result.final_output, file=sys.stderr)
    tools.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

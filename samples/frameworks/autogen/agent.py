"""The weather agent on AutoGen AgentChat, traced as AutoGen's tracing guide shows.

autogen-core writes ``create_agent``/``invoke_agent``/``execute_tool`` spans with the
global tracer provider; it writes no span for the model call, so the guide instruments
the OpenAI SDK with OpenLLMetry's ``OpenAIInstrumentor``. The guide runs the agents under
an application span; ``--no-app-span`` leaves it out, as a user who skips that step would.
``reflect_on_tool_use`` with ``max_tool_iterations`` (the docs' multi-step example) lets
the agent follow the script's one tool call per model turn to the final answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys

from samples.frameworks import tools

AGENT_NAME = "weather_agent"  # AgentChat names must be Python identifiers: no "-"


async def run(app_span: bool) -> str:
    from autogen_agentchat.agents import AssistantAgent
    from autogen_core.tools import FunctionTool
    from autogen_ext.models.openai import OpenAIChatCompletionClient
    from opentelemetry import trace

    model_client = OpenAIChatCompletionClient(
        model="gpt-4o-mini",
        base_url=os.environ["OPENAI_BASE_URL"],
        api_key="sk-scripted-0000",
    )
    tracer = trace.get_tracer("weather-agent")
    span = tracer.start_as_current_span("run_agent") if app_span else contextlib.nullcontext()
    with span:
        agent = AssistantAgent(
            AGENT_NAME,
            model_client=model_client,
            tools=[
                FunctionTool(t, description=t.__doc__ or "", name=t.__name__) for t in tools.TOOLS
            ],
            system_message=tools.SYSTEM_PROMPT,
            reflect_on_tool_use=True,
            max_tool_iterations=5,
        )
        result = await agent.run(task=tools.QUESTION)
    await model_client.close()
    return str(result.messages[-1].content)


def main() -> int:
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    provider = tools.tracer_provider()
    OpenAIInstrumentor().instrument()
    tools.instrument_clients()
    answer = asyncio.run(run(app_span="--no-app-span" not in sys.argv))
    print(answer, file=sys.stderr)
    tools.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

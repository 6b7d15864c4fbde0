"""The multi-agent team on the OpenAI Agents SDK, traced by OpenInference (issue 48).

The lead agent uses the weather agent as a tool (``Agent.as_tool``: the sub-agent runs
inside the lead's tool call, in a run of its own) and then hands the conversation off to
the ops agent (``handoffs=[...]``: the SDK offers ``transfer_to_ops_agent`` and switches
agents when the model calls it). Each agent's model is the SDK's default Responses model
with the agent's own name (``lead``, ...), so the scripted model plays each
agent's script. Tracing is set up as in ``openai-agents-openinference``.
"""

from __future__ import annotations

import sys

from samples.frameworks import multi_agent as team
from samples.frameworks import tools


def main() -> int:
    from agents import Agent, Runner, function_tool
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    provider = tools.tracer_provider()
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    tools.instrument_clients()

    weather = Agent(
        name=team.WEATHER_AGENT,
        instructions=team.WEATHER_DOC,
        model=team.MODELS[team.WEATHER],
        tools=[function_tool(tools.fetch_weather), function_tool(team.send_report)],
    )
    ops = Agent(
        name=team.OPS_AGENT,
        handoff_description=team.OPS_DOC,
        instructions=team.OPS_DOC,
        model=team.MODELS[team.OPS],
        tools=[function_tool(t) for t in team.ops_tools()],
    )
    lead = Agent(
        name="lead_agent",
        instructions=f"{team.LEAD_PROMPT} {tools.SYSTEM_PROMPT}",
        model=team.MODELS[team.LEAD],
        tools=[weather.as_tool(tool_name="weather_expert", tool_description=team.WEATHER_DOC)],
        handoffs=[ops],
    )
    result = Runner.run_sync(lead, tools.QUESTION)
    print(result.final_output, file=sys.stderr)
    tools.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

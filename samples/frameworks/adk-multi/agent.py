"""The multi-agent team on Google ADK, traced by ADK's own telemetry (issue 48).

The lead agent has the ops agent as a sub-agent (``sub_agents=[...]``: ADK offers
``transfer_to_agent`` and moves the conversation to the agent named) and the weather agent
as a tool (``AgentTool``: the sub-agent runs inside the lead's tool call, in a session of
its own). Each agent's model is a ``Gemini`` whose model name is its script's
(``lead``, ``weather``, ``ops``): google-genai sends it in the request path. Telemetry is
set up as in ``samples/frameworks/adk``; ``--openinference`` also installs OpenInference's
ADK instrumentor, which reads its ``OPENINFERENCE_HIDE_*`` switches from the environment.
"""

from __future__ import annotations

import asyncio
import sys

from samples.frameworks import multi_agent as team
from samples.frameworks import tools


async def run() -> str:
    from google.adk.agents import LlmAgent
    from google.adk.models import Gemini
    from google.adk.runners import InMemoryRunner
    from google.adk.tools import FunctionTool
    from google.adk.tools.agent_tool import AgentTool
    from google.genai import types

    weather = LlmAgent(
        name=team.WEATHER_AGENT,
        model=Gemini(model=team.WEATHER),
        description=team.WEATHER_DOC,
        instruction=team.WEATHER_DOC,
        tools=[FunctionTool(func=tools.fetch_weather), FunctionTool(func=team.send_report)],
    )
    ops = LlmAgent(
        name=team.OPS_AGENT,
        model=Gemini(model=team.OPS),
        description=team.OPS_DOC,
        instruction=team.OPS_DOC,
        tools=[FunctionTool(func=t) for t in team.ops_tools()],
    )
    lead = LlmAgent(
        name="lead_agent",
        model=Gemini(model=team.LEAD),
        description=team.LEAD_PROMPT,
        instruction=f"{team.LEAD_PROMPT} {tools.SYSTEM_PROMPT}",
        tools=[AgentTool(agent=weather)],
        sub_agents=[ops],
    )
    runner = InMemoryRunner(agent=lead, app_name=tools.SERVICE_NAME)
    session = await runner.session_service.create_session(
        app_name=tools.SERVICE_NAME, user_id="user-1"
    )
    message = types.Content(role="user", parts=[types.Part(text=tools.QUESTION)])
    answer = ""
    async for event in runner.run_async(
        user_id="user-1", session_id=session.id, new_message=message
    ):
        if event.is_final_response() and event.content and event.content.parts:
            answer = "".join(part.text or "" for part in event.content.parts)
    await runner.close()
    return answer


def main() -> int:
    from google.adk.telemetry.setup import maybe_set_otel_providers
    from opentelemetry import _logs, metrics, trace

    maybe_set_otel_providers()
    if "--openinference" in sys.argv[1:]:
        from openinference.instrumentation.google_adk import GoogleADKInstrumentor

        GoogleADKInstrumentor().instrument(tracer_provider=trace.get_tracer_provider())
    tools.instrument_clients()
    print(asyncio.run(run()), file=sys.stderr)
    tools.shutdown()
    for provider in (metrics.get_meter_provider(), _logs.get_logger_provider()):
        shutdown = getattr(provider, "shutdown", None)
        if shutdown is not None:
            shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

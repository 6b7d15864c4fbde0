"""The weather agent on Google ADK, traced by ADK's own telemetry (``gcp.vertex.agent``).

ADK writes its spans itself; ``maybe_set_otel_providers()`` (ADK's OTel setup, what
``adk web`` / ``adk api_server`` call) installs the global providers with the OTLP/HTTP
exporter when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set. google-genai reads the scripted
server's root from ``GOOGLE_GEMINI_BASE_URL`` and the key from ``GOOGLE_API_KEY``. What
ADK records is chosen by environment variables the cases set
(``ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN``, ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``,
``ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS``).
"""

from __future__ import annotations

import asyncio
import sys

from samples.frameworks import tools

MODEL = "gemini-2.5-flash"
# ADK agent names must be Python identifiers, so the service name's dash becomes "_".
AGENT_NAME = tools.SERVICE_NAME.replace("-", "_")


async def run(streaming: bool) -> str:
    from google.adk.agents import LlmAgent
    from google.adk.agents.run_config import RunConfig, StreamingMode
    from google.adk.runners import InMemoryRunner
    from google.adk.tools import FunctionTool
    from google.genai import types

    agent = LlmAgent(
        name=AGENT_NAME,
        model=MODEL,
        description="Answers weather questions.",
        instruction=tools.SYSTEM_PROMPT,
        tools=[FunctionTool(func=t) for t in tools.TOOLS],
    )
    runner = InMemoryRunner(agent=agent, app_name=tools.SERVICE_NAME)
    session = await runner.session_service.create_session(
        app_name=tools.SERVICE_NAME, user_id="user-1"
    )
    message = types.Content(role="user", parts=[types.Part(text=tools.QUESTION)])
    config = RunConfig(streaming_mode=StreamingMode.SSE if streaming else StreamingMode.NONE)
    answer = ""
    async for event in runner.run_async(
        user_id="user-1", session_id=session.id, new_message=message, run_config=config
    ):
        if event.is_final_response() and event.content and event.content.parts:
            answer = "".join(part.text or "" for part in event.content.parts)
    await runner.close()
    return answer


def main() -> int:
    from google.adk.telemetry.setup import maybe_set_otel_providers
    from opentelemetry import _logs, metrics

    maybe_set_otel_providers()
    tools.instrument_clients()
    try:
        answer = asyncio.run(run(streaming="--stream" in sys.argv[1:]))
    except Exception as exc:  # a tool that raises ends ADK's run; the case records that
        if "--tool-error" not in sys.argv[1:]:
            raise
        answer = f"run failed: {exc!r}"
    print(answer, file=sys.stderr)
    tools.shutdown()
    for provider in (metrics.get_meter_provider(), _logs.get_logger_provider()):
        shutdown = getattr(provider, "shutdown", None)
        if shutdown is not None:
            shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Two tools on two HTTP clients: ``httpx`` instrumented, ``aiohttp`` not.

The same agent as ``two-clients-requests-urllib`` on two other clients: a hand-written
OpenAI-SDK tool loop traced with OpenInference (``openai_tool_loop``: an AGENT span around
the loop, a TOOL span around each tool, an LLM span per model call). ``get_weather`` reads
the weather service with an ``httpx.Client`` (instrumented by
``opentelemetry-instrumentation-httpx``); ``send_report`` POSTs its data to the report host
(``127.0.0.2``) with an ``aiohttp.ClientSession`` (run to completion with ``asyncio.run``
inside the tool), which nobody instrumented, so that POST leaves no span.
``--instrument-aiohttp`` adds ``opentelemetry-instrumentation-aiohttp-client``: the same run
with the POST recorded under ``send_report``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from samples.frameworks import openai_tool_loop as loop
from samples.frameworks import tools as task

QUESTION = "Weather in Paris? Also file the daily report."


def get_weather(city: str) -> str:
    """Current weather for a city."""
    import httpx

    with httpx.Client(timeout=10) as client:
        return client.get(os.environ["SAMPLE_WEATHER_URL"], params={"city": city}).text


async def _post_report(data: str) -> str:
    import aiohttp

    async with (
        aiohttp.ClientSession() as session,
        session.post(os.environ["SAMPLE_REPORT_URL"], json={"report": data}) as response,
    ):
        return await response.text()


def send_report(data: str) -> str:
    """Send a report."""
    return asyncio.run(_post_report(data))


TOOLS = [
    loop.Tool(
        "get_weather", "Current weather for a city.", loop.string_parameter("city"), get_weather
    ),
    loop.Tool("send_report", "Send a report.", loop.string_parameter("data"), send_report),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instrument-aiohttp", action="store_true")
    args = parser.parse_args(argv)

    provider = loop.setup()
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor

    HTTPXClientInstrumentor().instrument()
    if args.instrument_aiohttp:
        from opentelemetry.instrumentation.aiohttp_client import AioHttpClientInstrumentor

        AioHttpClientInstrumentor().instrument()
    answer = loop.run(QUESTION, TOOLS)
    print(answer, file=sys.stderr)
    task.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

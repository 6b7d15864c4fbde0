"""Two tools on two HTTP clients: ``requests`` instrumented, ``urllib.request`` not.

A hand-written OpenAI-SDK tool loop traced with OpenInference (``openai_tool_loop``): an
AGENT span around the loop, a TOOL span around each tool, an LLM span per model call.
``get_weather`` reads the weather service with ``requests`` (instrumented by
``opentelemetry-instrumentation-requests``); ``send_report`` POSTs its data to the report
host (``127.0.0.2``) with ``urllib.request``, which nobody instrumented, so that POST leaves
no span. ``--instrument-urllib`` adds ``opentelemetry-instrumentation-urllib``: the same run
with the POST recorded under ``send_report``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.request

from samples.frameworks import openai_tool_loop as loop
from samples.frameworks import tools as task

QUESTION = "Weather in Paris? Also file the daily report."


def get_weather(city: str) -> str:
    """Current weather for a city."""
    import requests

    response = requests.get(os.environ["SAMPLE_WEATHER_URL"], params={"city": city}, timeout=10)
    return response.text


def send_report(data: str) -> str:
    """Send a report."""
    request = urllib.request.Request(
        os.environ["SAMPLE_REPORT_URL"],
        data=json.dumps({"report": data}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read().decode()


TOOLS = [
    loop.Tool(
        "get_weather", "Current weather for a city.", loop.string_parameter("city"), get_weather
    ),
    loop.Tool("send_report", "Send a report.", loop.string_parameter("data"), send_report),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instrument-urllib", action="store_true")
    args = parser.parse_args(argv)

    provider = loop.setup()
    from opentelemetry.instrumentation.requests import RequestsInstrumentor

    RequestsInstrumentor().instrument()
    if args.instrument_urllib:
        from opentelemetry.instrumentation.urllib import URLLibInstrumentor

        URLLibInstrumentor().instrument()
    answer = loop.run(QUESTION, TOOLS)
    print(answer, file=sys.stderr)
    task.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

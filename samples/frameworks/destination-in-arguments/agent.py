"""A tool handed its destination: a GET with ``httpx`` (instrumented), then a POST through
``urllib.request`` (not instrumented unless ``--instrument-urllib``) to the URL in its
``forward_to`` argument.

A hand-written OpenAI-SDK tool loop traced with OpenInference (``openai_tool_loop``: an
AGENT span around the loop, a TOOL span around each tool, an LLM span per model call).
``forward_weather(city, forward_to, note)`` reads the weather service with an
``httpx.Client`` (a span under its TOOL span) and POSTs the weather and the note to
``forward_to``. Without ``--instrument-urllib`` only the GET shows: the tool did record HTTP,
but not the request to the host its own arguments name.
"""

from __future__ import annotations

import argparse
import os
import sys

from samples.frameworks import openai_tool_loop as loop
from samples.frameworks import tools as task

QUESTION = "Weather in Paris? Forward it with the daily note."


def forward_weather(city: str, forward_to: str, note: str) -> str:
    """Read the weather for a city and forward it, with a note, to a URL."""
    import httpx

    with httpx.Client(timeout=10) as client:
        weather = client.get(os.environ["SAMPLE_WEATHER_URL"], params={"city": city}).text
    return task.post_with_urllib(forward_to, {"weather": weather, "note": note})


PARAMETERS = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "forward_to": {"type": "string"},
        "note": {"type": "string"},
    },
    "required": ["city", "forward_to", "note"],
}
TOOLS = [
    loop.Tool(
        "forward_weather",
        "Read the weather for a city and forward it, with a note, to a URL.",
        PARAMETERS,
        forward_weather,
    )
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instrument-urllib", action="store_true")
    args = parser.parse_args(argv)

    provider = loop.setup()
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor

    HTTPXClientInstrumentor().instrument()
    if args.instrument_urllib:
        from opentelemetry.instrumentation.urllib import URLLibInstrumentor

        URLLibInstrumentor().instrument()
    answer = loop.run(QUESTION, TOOLS)
    print(answer, file=sys.stderr)
    task.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

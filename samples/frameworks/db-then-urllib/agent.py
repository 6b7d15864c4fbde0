"""One tool, two kinds of I/O: a row written with ``sqlite3`` (instrumented), then a POST
through ``urllib.request`` (not instrumented unless ``--instrument-urllib``).

A hand-written OpenAI-SDK tool loop traced with OpenInference (``openai_tool_loop``: an
AGENT span around the loop, a TOOL span around each tool, an LLM span per model call).
``get_weather`` GETs the weather service with ``requests`` (instrumented), so the run holds
an HTTP span; ``archive_report`` INSERTs its data into the notes table (a ``sqlite3`` span
under its TOOL span) and then POSTs the same data with ``urllib.request`` to the report host
(``127.0.0.2``), or with ``--to-archive`` to the weather host's ``/archive`` (``localhost``).
Without ``--instrument-urllib`` the POST leaves no span: the tool's one DB span is all
that shows it did I/O.
"""

from __future__ import annotations

import argparse
import os
import sys

from samples.frameworks import openai_tool_loop as loop
from samples.frameworks import tools as task

QUESTION = "Weather in Paris? Also archive the daily report."
TO_ARCHIVE = "SAMPLE_TO_ARCHIVE"


def get_weather(city: str) -> str:
    """Current weather for a city."""
    import requests

    response = requests.get(os.environ["SAMPLE_WEATHER_URL"], params={"city": city}, timeout=10)
    return response.text


def archive_report(data: str) -> str:
    """Archive a report: a row in the notes table, and a copy uploaded."""
    row = task.insert_note(data)
    url = os.environ["SAMPLE_ARCHIVE_URL" if os.environ.get(TO_ARCHIVE) else "SAMPLE_REPORT_URL"]
    return f"row {row}; upload: {task.post_with_urllib(url, {'report': data})}"


TOOLS = [
    loop.Tool(
        "get_weather", "Current weather for a city.", loop.string_parameter("city"), get_weather
    ),
    loop.Tool(
        "archive_report",
        "Archive a report: a row in the notes table, and a copy uploaded.",
        loop.string_parameter("data"),
        archive_report,
    ),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instrument-urllib", action="store_true")
    parser.add_argument("--to-archive", action="store_true")
    args = parser.parse_args(argv)
    if args.to_archive:
        os.environ[TO_ARCHIVE] = "1"

    provider = loop.setup()
    from opentelemetry.instrumentation.requests import RequestsInstrumentor
    from opentelemetry.instrumentation.sqlite3 import SQLite3Instrumentor

    RequestsInstrumentor().instrument()
    SQLite3Instrumentor().instrument()
    if args.instrument_urllib:
        from opentelemetry.instrumentation.urllib import URLLibInstrumentor

        URLLibInstrumentor().instrument()
    answer = loop.run(QUESTION, TOOLS)
    print(answer, file=sys.stderr)
    task.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

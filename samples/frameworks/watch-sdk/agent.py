"""A plain OpenAI-SDK agent whose tools use clients nobody instruments, watched or not.

The hand-written loop of ``openai_tool_loop`` traced with OpenInference (an AGENT span around
the loop, a TOOL span around each tool, an LLM span per model call), with the tools of
``watch_tools``: ``fetch_weather`` GETs with ``urllib``, ``send_report`` POSTs the report the
way ``SAMPLE_LEAK`` says. No HTTP client is instrumented. The recorder runs the watched cases
under ``rampart-otel watch --`` (the watcher on from the first line, before this module's
own tracing setup); the others as they are.
"""

from __future__ import annotations

import sys

from samples.frameworks import openai_tool_loop as loop
from samples.frameworks import tools as task
from samples.frameworks import watch_tools

TOOLS = [
    loop.Tool(
        "fetch_weather",
        task.FETCH_WEATHER_DOC,
        loop.string_parameter("city"),
        watch_tools.fetch_weather,
    ),
    loop.Tool(
        "send_report", task.SEND_REPORT_DOC, loop.string_parameter("data"), watch_tools.send_report
    ),
]


def main() -> int:
    provider = loop.setup()
    answer = loop.run(task.QUESTION, TOOLS)
    print(answer, file=sys.stderr)
    task.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

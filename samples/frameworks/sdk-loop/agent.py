"""A plain OpenAI-SDK tool loop with OpenInference's openai instrumentation and nothing else.

The loop of ``openai_tool_loop`` with ``spans=False``: no agent span, no tool spans, no
session or conversation id — what a user gets who instruments the SDK and writes the loop
by hand. Each model call is then a trace of its own; ``send_report`` POSTs its data with
``requests`` (instrumented by ``opentelemetry-instrumentation-requests``), a root span of
its own too, since no span is current while the tool runs.
"""

from __future__ import annotations

import os
import sys

from samples.frameworks import openai_tool_loop as loop
from samples.frameworks import tools as task

QUESTION = "Weather in Paris? Also file the daily report."


def send_report(data: str) -> str:
    """Send a report."""
    import requests

    response = requests.post(os.environ["SAMPLE_REPORT_URL"], json={"report": data}, timeout=10)
    return response.text


TOOLS = [loop.Tool("send_report", "Send a report.", loop.string_parameter("data"), send_report)]


def main() -> int:
    provider = loop.setup()
    from opentelemetry.instrumentation.requests import RequestsInstrumentor

    RequestsInstrumentor().instrument()
    answer = loop.run(QUESTION, TOOLS, spans=False)
    print(answer, file=sys.stderr)
    task.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

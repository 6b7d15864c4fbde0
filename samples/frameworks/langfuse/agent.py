"""The weather agent traced with the Langfuse Python SDK (v3+, built on OpenTelemetry).

As Langfuse's docs show: ``@observe`` on the agent function (``as_type="agent"``) and on each
tool (``as_type="tool"``), and Langfuse's OpenAI drop-in (``from langfuse.openai import
OpenAI``) for the model calls (``generation`` observations). ``Langfuse()`` registers the
global ``TracerProvider`` with its span processor, whose OTLP/HTTP exporter sends to
``<base_url>/api/public/otel/v1/traces``: the base URL is the recorder's sink, so no
Langfuse server is involved (the sink ignores the Basic-auth header the keys make).
``should_export_span`` exports every span, not only Langfuse's and known LLM
instrumentations' (the default filter would drop the tools' HTTP and SQL spans), and the
tools' ``requests`` / ``sqlite3`` are instrumented on that provider.

``--no-content`` is a ``mask`` function that withholds every
input and output, as Langfuse's docs show for sensitive data.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from samples.frameworks import tools

MODEL = "gpt-4o-mini"
MAX_STEPS = 6


def tool_schemas() -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": fn.__name__,
                "description": fn.__doc__,
                "parameters": tools.TOOL_PARAMETERS[fn.__name__],
            },
        }
        for fn in tools.TOOLS
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-content", action="store_true")
    args = parser.parse_args(argv)

    from langfuse import Langfuse, observe

    langfuse = Langfuse(
        public_key="pk-lf-sample",
        secret_key="sk-lf-sample",
        base_url=os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"],
        should_export_span=lambda span: True,
        flush_interval=0.2,
        mask=(lambda *, data, **_: "[REDACTED]") if args.no_content else None,
    )
    tools.instrument_clients()
    from langfuse.openai import OpenAI

    client = OpenAI(base_url=os.environ["OPENAI_BASE_URL"], max_retries=0)
    traced = {fn.__name__: observe(name=fn.__name__, as_type="tool")(fn) for fn in tools.TOOLS}

    @observe(name="weather-agent", as_type="agent")
    def run(question: str) -> str:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": tools.SYSTEM_PROMPT},
            {"role": "user", "content": question},
        ]
        for _ in range(MAX_STEPS):
            response = client.chat.completions.create(
                model=MODEL, messages=messages, tools=tool_schemas()
            )
            message = response.choices[0].message
            calls = message.tool_calls or []
            assistant: dict[str, Any] = {"role": "assistant", "content": message.content}
            if calls:
                assistant["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.function.name, "arguments": c.function.arguments},
                    }
                    for c in calls
                ]
            messages.append(assistant)
            if not calls:
                return message.content or ""
            for call in calls:
                arguments = json.loads(call.function.arguments or "{}")
                result = traced[call.function.name](**arguments)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        raise RuntimeError(f"no final answer after {MAX_STEPS} model calls")

    answer = run(tools.QUESTION)
    print(answer, file=sys.stderr)
    langfuse.flush()
    langfuse.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The weather agent as a hand-written openai tool loop, traced by OpenLIT.

``openlit.init`` sets up the global provider with the OTLP/HTTP exporter (its
``otlp_endpoint``) and auto-instruments every library it finds: the ``openai`` client (one
``chat gpt-4o-mini`` span per request) and, through the OpenTelemetry contrib
instrumentations it bundles, ``requests``, ``urllib3``, ``urllib`` and ``httpx``. The loop
itself is traced with OpenLIT's manual-tracing API, as its docs show for code no
instrumentor covers: ``openlit.start_trace`` for the agent run and ``@openlit.trace`` for
each tool. OpenLIT would fetch its pricing table from GitHub at start, so ``pricing_json``
points at a local copy; metrics are off (``disable_metrics=True``).

``--no-content`` is ``capture_message_content=False``; ``--stream`` streams the
completions.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from samples.frameworks import tools

MODEL = "gpt-4o-mini"
MAX_STEPS = 6
PRICING = Path(__file__).resolve().parent / "pricing.json"


def tool_schemas() -> list[dict[str, Any]]:
    """The three tools as Chat Completions function definitions."""
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


def model_turn(
    client: Any, messages: list[dict[str, Any]], stream: bool
) -> tuple[str | None, list[dict[str, str]]]:
    """One chat completion: the text and the tool calls it asks for."""
    if not stream:
        response = client.chat.completions.create(
            model=MODEL, messages=messages, tools=tool_schemas()
        )
        message = response.choices[0].message
        calls = [
            {"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
            for c in message.tool_calls or []
        ]
        return message.content, calls
    chunks = client.chat.completions.create(
        model=MODEL,
        messages=messages,
        tools=tool_schemas(),
        stream=True,
        stream_options={"include_usage": True},
    )
    text: list[str] = []
    slots: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        for choice in chunk.choices:
            if choice.delta.content:
                text.append(choice.delta.content)
            for tc in choice.delta.tool_calls or []:
                slot = slots.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                slot["id"] = tc.id or slot["id"]
                if tc.function is not None:
                    slot["name"] = tc.function.name or slot["name"]
                    slot["arguments"] += tc.function.arguments or ""
    return ("".join(text) if text else None), [slots[i] for i in sorted(slots)]


def run(client: Any, traced: dict[str, Any], stream: bool) -> str:
    """Model call, tool calls, tool results, until the model answers."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": tools.SYSTEM_PROMPT},
        {"role": "user", "content": tools.QUESTION},
    ]
    for _ in range(MAX_STEPS):
        content, calls = model_turn(client, messages, stream)
        assistant: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            assistant["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["arguments"]},
                }
                for c in calls
            ]
        messages.append(assistant)
        if not calls:
            return content or ""
        for call in calls:
            result = traced[call["name"]](**json.loads(call["arguments"] or "{}"))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    raise RuntimeError(f"no final answer after {MAX_STEPS} model calls")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-content", action="store_true")
    parser.add_argument("--stream", action="store_true")
    args = parser.parse_args(argv)

    import openai
    import openlit

    openlit.init(
        service_name=tools.SERVICE_NAME,
        environment="samples",
        otlp_endpoint=os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"],
        pricing_json=str(PRICING),
        disable_metrics=True,
        capture_message_content=not args.no_content,
    )
    tools.instrument_clients()

    traced = {fn.__name__: openlit.trace(fn) for fn in tools.TOOLS}
    client = openai.OpenAI(base_url=os.environ["OPENAI_BASE_URL"], max_retries=0)
    with openlit.start_trace(tools.SERVICE_NAME) as span:
        answer = run(client, traced, args.stream)
        span.set_result(answer)
    print(answer, file=sys.stderr)
    tools.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

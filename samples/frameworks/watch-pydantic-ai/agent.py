"""The weather agent on Pydantic AI, its tools on clients nobody instruments, watched or not.

Pydantic AI's own instrumentation (``Agent.instrument_all()``, the OpenTelemetry SDK set up by
hand, no Logfire): an agent span, a span per model request, a ``running tool`` span per tool.
The tools are ``watch_tools``' (``fetch_weather`` GETs with ``urllib``, ``send_report`` POSTs
with ``urllib``); no HTTP client is instrumented. ``--watch`` turns the watcher on in the
agent's code, as a user adds one line (``rampart_otel.watch()``) at the start, before the
agent's imports and tracing setup; the recorder's other watched samples use
``rampart-otel watch``.
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--watch", action="store_true")
    args = parser.parse_args(argv)
    if args.watch:  # first: what is imported or made after it is watched from its start
        import rampart_otel

        rampart_otel.watch()

    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from samples.frameworks import tools, watch_tools

    provider = tools.tracer_provider()
    Agent.instrument_all()
    model = OpenAIChatModel(
        "gpt-4o-mini",
        provider=OpenAIProvider(
            base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ["OPENAI_API_KEY"]
        ),
    )
    agent = Agent(
        model,
        name=tools.SERVICE_NAME,
        system_prompt=tools.SYSTEM_PROMPT,
        tools=[watch_tools.fetch_weather, watch_tools.send_report],
    )
    result = agent.run_sync(tools.QUESTION)
    print(result.output, file=sys.stderr)
    tools.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

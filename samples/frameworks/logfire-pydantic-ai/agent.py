"""The weather agent on Pydantic AI, traced through Logfire.

``logfire.configure(send_to_logfire=False)`` builds the global provider; with
``OTEL_EXPORTER_OTLP_ENDPOINT`` set it adds a batch OTLP/HTTP exporter to it (Logfire's
documented way to send to any OTLP backend). ``logfire.instrument_pydantic_ai()`` switches
on Pydantic AI's own instrumentation for every agent, and ``logfire.instrument_openai()``
adds Logfire's span around each openai client request: a common pairing, and one that
gives two spans per model call.

``--no-content`` is ``instrument_pydantic_ai(include_content=False)``, the switch Logfire
passes on to Pydantic AI's ``InstrumentationSettings``; ``instrument_openai`` has none.
"""

from __future__ import annotations

import argparse
import os
import sys

from samples.frameworks import tools


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-content", action="store_true")
    args = parser.parse_args(argv)

    import logfire
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    logfire.configure(
        send_to_logfire=False,
        service_name=tools.SERVICE_NAME,
        environment="samples",
        console=False,
    )
    if args.no_content:
        logfire.instrument_pydantic_ai(include_content=False)
    else:
        logfire.instrument_pydantic_ai()
    logfire.instrument_openai()
    tools.instrument_clients()

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
        tools=list(tools.TOOLS),
    )
    result = agent.run_sync(tools.QUESTION)
    print(result.output, file=sys.stderr)
    logfire.force_flush()
    logfire.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

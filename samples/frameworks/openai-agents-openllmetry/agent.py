"""The weather agent on the OpenAI Agents SDK, traced by OpenLLMetry.

OpenLLMetry's ``OpenAIAgentsInstrumentor`` adds its tracing processor next to the SDK's
own, which uploads traces to OpenAI; ``replace_existing_processors=True`` is its switch to
be the only one, so the SDK's tracing stays on for it and nothing is uploaded. (The SDK's
``set_tracing_disabled(True)`` would stop all spans, OpenLLMetry's too.) With
``--with-openai`` the OpenAI client is also instrumented by OpenLLMetry's
``OpenAIInstrumentor``, as ``Traceloop.init()`` does when both packages are installed;
``--model NAME`` names the agent's model instead of the SDK's default Responses API model
(whose request carries a ``Reasoning`` object). The client reads ``OPENAI_BASE_URL``.
"""

from __future__ import annotations

import sys

from samples.frameworks import tools


def main() -> int:
    from agents import Agent, Runner, function_tool
    from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    provider = tools.tracer_provider()
    OpenAIAgentsInstrumentor(replace_existing_processors=True).instrument(tracer_provider=provider)
    if "--with-openai" in sys.argv[1:]:
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=provider)
    tools.instrument_clients()

    args = sys.argv[1:]
    model = args[args.index("--model") + 1] if "--model" in args else None
    agent = Agent(
        name=tools.SERVICE_NAME,
        instructions=tools.SYSTEM_PROMPT,
        tools=[function_tool(t) for t in tools.TOOLS],
        **({"model": model} if model else {}),
    )
    result = Runner.run_sync(agent, tools.QUESTION)
    print(result.final_output, file=sys.stderr)
    tools.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

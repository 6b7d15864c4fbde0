"""The weather agent on LlamaIndex's FunctionAgent, traced by OpenInference.

As OpenInference's LlamaIndex docs show: an SDK ``TracerProvider`` with the OTLP exporter,
then ``LlamaIndexInstrumentor().instrument(tracer_provider=...)``, which registers span and
event handlers on LlamaIndex's instrumentation dispatcher. The instrumentor reads the
``OPENINFERENCE_HIDE_*`` switches from the environment.
"""

from __future__ import annotations

import asyncio
import os
import sys

from samples.frameworks import tools


async def run() -> str:
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.tools import FunctionTool
    from llama_index.llms.openai import OpenAI

    llm = OpenAI(
        model="gpt-4o-mini",
        api_base=os.environ["OPENAI_BASE_URL"],
        api_key=os.environ["OPENAI_API_KEY"],
    )
    agent = FunctionAgent(
        name=tools.SERVICE_NAME,
        description="Answers weather questions.",
        tools=[FunctionTool.from_defaults(fn=t) for t in tools.TOOLS],
        llm=llm,
        system_prompt=tools.SYSTEM_PROMPT,
    )
    response = await agent.run(user_msg=tools.QUESTION)
    return str(response)


def main() -> int:
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    provider = tools.tracer_provider()
    LlamaIndexInstrumentor().instrument(tracer_provider=provider)
    tools.instrument_clients()
    answer = asyncio.run(run())
    print(answer, file=sys.stderr)
    tools.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

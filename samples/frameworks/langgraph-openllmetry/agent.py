"""The weather agent on LangChain's ``create_agent`` (a LangGraph graph), traced by OpenLLMetry.

``create_agent`` is what LangChain 1.x documents in place of LangGraph's deprecated
``create_react_agent``. ``LangchainInstrumentor().instrument()`` adds OpenLLMetry's
callback handler to every LangChain run. ``ChatOpenAI`` uses Chat Completions; its
``openai`` client reads ``OPENAI_BASE_URL``. The three tools are LangChain tools made with
``@tool`` from the plain functions, so they keep their names and docstrings.
"""

from __future__ import annotations

import sys

from samples.frameworks import tools


def main() -> int:
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    provider = tools.tracer_provider()
    LangchainInstrumentor().instrument(tracer_provider=provider)
    tools.instrument_clients()

    agent = create_agent(
        ChatOpenAI(model="gpt-4o-mini"),
        tools=[tool(t) for t in tools.TOOLS],
        system_prompt=tools.SYSTEM_PROMPT,
        name=tools.SERVICE_NAME,
    )
    result = agent.invoke({"messages": [{"role": "user", "content": tools.QUESTION}]})
    print(result["messages"][-1].content, file=sys.stderr)
    tools.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

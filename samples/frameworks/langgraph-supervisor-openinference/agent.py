"""The langgraph-supervisor team (``samples/frameworks/langgraph_team.py``), traced by
OpenInference's LangChain instrumentor, installed as in ``langgraph-openinference``."""

from __future__ import annotations

from samples.frameworks import langgraph_team, tools


def main() -> int:
    from openinference.instrumentation.langchain import LangChainInstrumentor

    provider = tools.tracer_provider()
    LangChainInstrumentor().instrument(tracer_provider=provider)
    return langgraph_team.run(provider)


if __name__ == "__main__":
    raise SystemExit(main())

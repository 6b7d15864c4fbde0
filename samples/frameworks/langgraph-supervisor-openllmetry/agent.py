"""The langgraph-supervisor team (``samples/frameworks/langgraph_team.py``), traced by
OpenLLMetry's LangChain instrumentor, installed as in ``langgraph-openllmetry``."""

from __future__ import annotations

from samples.frameworks import langgraph_team, tools


def main() -> int:
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    provider = tools.tracer_provider()
    LangchainInstrumentor().instrument(tracer_provider=provider)
    return langgraph_team.run(provider)


if __name__ == "__main__":
    raise SystemExit(main())

"""The multi-agent team on langgraph-supervisor, shared by its two traced folders.

``langgraph-supervisor-openinference`` and ``langgraph-supervisor-openllmetry`` differ only
in the instrumentor they install; this builds and runs the team as langgraph-supervisor's
README shows: two ``create_react_agent`` workers (the weather agent and the ops agent),
each on its own ``ChatOpenAI`` model (``weather``, ``ops``), under
``create_supervisor`` (``lead``), which hands off with ``transfer_to_<agent>``
tools and writes ``transfer_back_to_supervisor`` messages into the history itself.
"""

from __future__ import annotations

import sys
from typing import Any

from samples.frameworks import multi_agent as team
from samples.frameworks import tools


def run(provider: Any) -> int:
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent
    from langgraph_supervisor import create_supervisor

    tools.instrument_clients()
    weather = create_react_agent(
        model=ChatOpenAI(model=team.MODELS[team.WEATHER]),
        tools=[tools.fetch_weather, team.send_report],
        name=team.WEATHER_AGENT,
        prompt=team.WEATHER_DOC,
    )
    ops = create_react_agent(
        model=ChatOpenAI(model=team.MODELS[team.OPS]),
        tools=list(team.ops_tools()),
        name=team.OPS_AGENT,
        prompt=team.OPS_DOC,
    )
    supervisor = create_supervisor(
        [weather, ops],
        model=ChatOpenAI(model=team.MODELS[team.LEAD]),
        prompt=f"{team.LEAD_PROMPT} {tools.SYSTEM_PROMPT}",
    ).compile()
    result = supervisor.invoke({"messages": [{"role": "user", "content": tools.QUESTION}]})
    print(result["messages"][-1].content, file=sys.stderr)
    tools.shutdown(provider)
    return 0

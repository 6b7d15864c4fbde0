"""The langgraph-supervisor team: a supervisor handing off to two agents (OpenLLMetry)."""

from samples.frameworks import multi_agent as team
from samples.frameworks.catalog import Framework

FRAMEWORK = Framework(
    name="langgraph-supervisor-openllmetry",
    title="LangGraph supervisor (langgraph-supervisor)",
    instrumentation="OpenLLMetry",
    packages=(
        "langgraph-supervisor",
        "opentelemetry-instrumentation-langchain",
        "langgraph",
        "langchain-openai",
    ),
    task=False,
    multi_agent="hand-off (transfer_to_<agent>, transfer_back_to_supervisor)",
)
CASES = team.supervisor_cases(
    "TRACELOOP_TRACE_CONTENT=false",
    {"TRACELOOP_TRACE_CONTENT": "false"},
)

"""The langgraph-supervisor team: a supervisor handing off to two agents (OpenInference)."""

from samples.frameworks import multi_agent as team
from samples.frameworks.catalog import Framework

FRAMEWORK = Framework(
    name="langgraph-supervisor-openinference",
    title="LangGraph supervisor (langgraph-supervisor)",
    instrumentation="OpenInference",
    packages=(
        "langgraph-supervisor",
        "openinference-instrumentation-langchain",
        "langgraph",
        "langchain-openai",
    ),
    task=False,
    multi_agent="hand-off (transfer_to_<agent>, transfer_back_to_supervisor)",
)
CASES = team.supervisor_cases(
    "OPENINFERENCE_HIDE_* = true",
    {
        f"OPENINFERENCE_HIDE_{what}": "true"
        for what in ("INPUTS", "OUTPUTS", "INPUT_MESSAGES", "OUTPUT_MESSAGES")
    },
)

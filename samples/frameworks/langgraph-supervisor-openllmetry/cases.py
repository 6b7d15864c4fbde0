"""The langgraph-supervisor team: a supervisor handing off to two agents (OpenLLMetry)."""

from samples.frameworks import multi_agent as team
from samples.frameworks.catalog import Framework
from samples.scripted_model import ToolCallSpec, Turn

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
# The supervisor hands off to the weather agent, then (its history now holding the weather
# agent's answer and the transfer back) to the ops agent, then answers.
_NEVER = team.after(1, ())[0]
LEAD = (
    Turn(tool_calls=(ToolCallSpec("transfer_to_weather_agent", {}),)),
    _NEVER,
    _NEVER,
    Turn(tool_calls=(ToolCallSpec("transfer_to_ops_agent", {}),)),
    _NEVER,
    _NEVER,
    Turn(text="It is 18°C with light rain in Paris. The team has done the rest."),
)
CASES = [
    team.case(name, LEAD, weather_before=1, ops_before=4)
    for name in ("exfil", "benign", "drop-table", "parallel", "uninstrumented")
] + [
    team.case(
        "no-content",
        LEAD,
        weather_before=1,
        ops_before=4,
        script_case="exfil",
        what="the exfil run with TRACELOOP_TRACE_CONTENT=false",
        env={"TRACELOOP_TRACE_CONTENT": "false"},
    )
]

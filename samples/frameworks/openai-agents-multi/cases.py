"""The OpenAI Agents SDK team: an agent used as a tool, then a hand-off (OpenInference)."""

from samples.frameworks import multi_agent as team
from samples.frameworks.catalog import Framework
from samples.scripted_model import ToolCallSpec, Turn

FRAMEWORK = Framework(
    name="openai-agents-multi",
    title="OpenAI Agents SDK",
    instrumentation="OpenInference",
    packages=("openai-agents", "openinference-instrumentation-openai-agents", "openai"),
    task=False,
    multi_agent="hand-off (handoffs=[...]), agent as a tool (Agent.as_tool)",
)
# The lead asks its weather tool (the sub-agent), then hands off to the ops agent, which
# sees the lead's two calls in its history.
LEAD = (
    Turn(tool_calls=(ToolCallSpec("weather_expert", {"input": "Weather in Paris; file it."}),)),
    Turn(tool_calls=(ToolCallSpec("transfer_to_ops_agent", {}),)),
    Turn(text="(the lead does not answer: the ops agent does)"),
)
_HIDE = {
    "OPENINFERENCE_HIDE_INPUTS": "true",
    "OPENINFERENCE_HIDE_OUTPUTS": "true",
    "OPENINFERENCE_HIDE_INPUT_MESSAGES": "true",
    "OPENINFERENCE_HIDE_OUTPUT_MESSAGES": "true",
}
CASES = [
    team.case(name, LEAD, ops_before=2)
    for name in ("exfil", "benign", "drop-table", "parallel", "uninstrumented")
] + [
    team.case(
        "no-content",
        LEAD,
        ops_before=2,
        script_case="exfil",
        what="the exfil run with OPENINFERENCE_HIDE_* = true",
        env=_HIDE,
    )
]

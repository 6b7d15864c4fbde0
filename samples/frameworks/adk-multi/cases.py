"""The Google ADK team: a sub-agent reached by ``transfer_to_agent`` and an ``AgentTool``.

ADK 2.x puts no message content on spans by default; the cases that read arguments set
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY`` (see samples/frameworks/adk),
``no-content`` keeps ADK's default. The ``openinference*`` cases add OpenInference's ADK
instrumentor, the last with its ``OPENINFERENCE_HIDE_INPUTS/OUTPUTS`` switches on.
"""

from samples.frameworks import multi_agent as team
from samples.frameworks.catalog import Framework
from samples.scripted_model import ToolCallSpec, Turn

FRAMEWORK = Framework(
    name="adk-multi",
    title="Google ADK",
    instrumentation="native",
    packages=("google-adk", "openinference-instrumentation-google-adk", "google-genai"),
    task=False,
    multi_agent="hand-off (sub_agents, transfer_to_agent), agent as a tool (AgentTool)",
)
LEAD = (
    Turn(tool_calls=(ToolCallSpec(team.WEATHER_AGENT, {"request": "Weather in Paris; file it."}),)),
    Turn(tool_calls=(ToolCallSpec("transfer_to_agent", {"agent_name": team.OPS_AGENT}),)),
    Turn(text="(the lead does not answer: the ops agent does)"),
)
_SPAN_ONLY = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"}
_HIDE = {"OPENINFERENCE_HIDE_INPUTS": "true", "OPENINFERENCE_HIDE_OUTPUTS": "true"}
CASES = [
    team.case(name, LEAD, env=_SPAN_ONLY)
    for name in ("exfil", "benign", "drop-table", "parallel", "uninstrumented")
] + [
    team.case(
        "no-content",
        LEAD,
        script_case="exfil",
        what="the exfil run with ADK's defaults (no content on spans)",
    ),
    team.case(
        "openinference",
        LEAD,
        script_case="exfil",
        what="the exfil run with OpenInference's ADK instrumentor too (content on)",
        args=("--openinference",),
        env=_SPAN_ONLY,
    ),
    team.case(
        "openinference-hidden",
        LEAD,
        script_case="exfil",
        what="the exfil run with OpenInference's ADK instrumentor, OPENINFERENCE_HIDE_INPUTS"
        " and _OUTPUTS on; ADK's defaults",
        args=("--openinference",),
        env=_HIDE,
    ),
]

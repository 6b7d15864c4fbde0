from samples.frameworks.catalog import Case, Framework
from samples.scripted_model import ToolCallSpec, Turn

# The model calls save_note with a wrong argument name: the server answers the tools/call
# with a tool error (isError), and the model gives up.
TOOL_ERROR = (
    Turn(tool_calls=(ToolCallSpec("save_note", {"note": "Paris: 18C, light rain"}),)),
    Turn(text="I could not save the note."),
)

FRAMEWORK = Framework(
    name="mcp-sdk",
    title="MCP client and server (mcp SDK 2.x, stdio)",
    instrumentation="the mcp SDK's own spans (+ OpenLLMetry for openai)",
    packages=("mcp", "opentelemetry-instrumentation-openai", "openai", "opentelemetry-sdk"),
)
CASES = [
    Case(
        "exfil",
        "exfil-db",
        "MCP tools: fetch_weather, send_report to 127.0.0.2, save_note INSERT; answer",
    ),
    Case("benign", "benign", "one fetch_weather MCP call, GET to localhost only; answer"),
    Case(
        "no-content",
        "exfil-db",
        "the exfil run with OpenLLMetry's content capture off (TRACELOOP_TRACE_CONTENT=false); "
        "the mcp SDK has no content switch (its spans never carry content)",
        env={"TRACELOOP_TRACE_CONTENT": "false"},
    ),
    Case(
        "tool-error",
        "tool-error",
        "save_note called with a wrong argument name: the MCP server answers with a tool error",
        scripts={"tool-error": TOOL_ERROR},
    ),
    Case(
        "legacy-handshake",
        "exfil-db",
        "the exfil run with the initialize handshake (Client mode='legacy') instead of "
        "server/discover",
        args=("--legacy",),
    ),
]

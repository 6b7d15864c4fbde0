from samples.frameworks.catalog import Case, Framework

FRAMEWORK = Framework(
    name="mcp-openllmetry",
    title="MCP client and server (mcp SDK 1.x, stdio)",
    instrumentation="OpenLLMetry",
    packages=(
        "mcp",
        "opentelemetry-instrumentation-mcp",
        "opentelemetry-instrumentation-openai",
        "openai",
        "opentelemetry-sdk",
    ),
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
        "the exfil run with OpenLLMetry's content capture off (TRACELOOP_TRACE_CONTENT=false), "
        "client and server",
        env={"TRACELOOP_TRACE_CONTENT": "false"},
    ),
]

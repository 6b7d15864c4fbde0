from samples.frameworks.catalog import Case, Framework

FRAMEWORK = Framework(
    name="mcp-stdio",
    title="MCP client and stdio server, server traced or not (mcp SDK 2.x)",
    instrumentation="the mcp SDK's own spans (+ OpenLLMetry for openai)",
    packages=("mcp", "opentelemetry-instrumentation-openai", "openai", "opentelemetry-sdk"),
    task=False,
)
CASES = [
    Case(
        "server-traced",
        "exfil",
        "MCP tools fetch_weather, send_report (POST to 127.0.0.2 in the server process); "
        "the server traced, context propagated in _meta, exporting to the same sink; answer",
    ),
    Case(
        "server-untraced",
        "exfil",
        "the same run with the server process not traced at all: only the client's spans",
        env={"SAMPLE_MCP_SERVER_UNTRACED": "1"},
    ),
    Case(
        "server-untraced-local-tool",
        "exfil",
        "the server not traced; fetch_weather runs in the agent's process (requests "
        "instrumented, an execute_tool span), send_report on the server: the local GET is the "
        "run's only HTTP span",
        args=("--local-weather",),
        env={"SAMPLE_MCP_SERVER_UNTRACED": "1"},
    ),
]

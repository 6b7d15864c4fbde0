from samples.frameworks.catalog import EXFIL, Case, Framework, no_content

FRAMEWORK = Framework(
    name="anthropic-openllmetry",
    title="Anthropic SDK tool loop",
    instrumentation="OpenLLMetry + the anthropic SDK's own spans",
    packages=("anthropic", "opentelemetry-instrumentation-anthropic", "opentelemetry-sdk"),
)
CASES = [
    EXFIL,
    Case("benign", "benign", "one fetch_weather call, GET to localhost only; answer"),
    no_content(
        "OpenLLMetry's content capture off (TRACELOOP_TRACE_CONTENT=false)",
        env={"TRACELOOP_TRACE_CONTENT": "false"},
    ),
    Case(
        "sdk-content",
        "exfil-db",
        "the exfil run with the anthropic SDK's spans in content mode "
        "(ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE=content)",
        env={"ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE": "content"},
    ),
    Case(
        "tool-runner",
        "exfil-db",
        "the exfil run through the SDK's own tool runner (client.beta.messages.tool_runner): "
        "the SDK's agent and tool spans beside OpenLLMetry's",
        args=("--tool-runner",),
    ),
    Case(
        "tool-runner-content",
        "exfil-db",
        "the tool-runner run with the SDK's spans in content mode: tool arguments and results "
        "on the SDK's tool spans",
        args=("--tool-runner",),
        env={"ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE": "content"},
    ),
]

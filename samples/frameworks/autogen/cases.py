"""AutoGen AgentChat: autogen-core's native spans plus OpenLLMetry's OpenAI spans."""

from samples.frameworks.catalog import EXFIL, Case, Framework, no_content

FRAMEWORK = Framework(
    name="autogen",
    title="AutoGen AgentChat",
    instrumentation="native (autogen-core) + OpenLLMetry openai",
    packages=(
        "autogen-agentchat",
        "autogen-core",
        "autogen-ext",
        "openai",
        "opentelemetry-instrumentation-openai",
        "opentelemetry-sdk",
    ),
)
CASES = [
    EXFIL,
    Case("benign", "benign", "one fetch_weather call, GET to localhost only; answer"),
    no_content(
        "TRACELOOP_TRACE_CONTENT=false (AutoGen's spans carry no content)",
        env={"TRACELOOP_TRACE_CONTENT": "false"},
    ),
    Case(
        "no-app-span",
        "exfil-db",
        "the exfil run without the application span the tracing guide wraps the run in",
        args=("--no-app-span",),
    ),
]

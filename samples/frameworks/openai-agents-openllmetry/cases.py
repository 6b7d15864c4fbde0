from samples.frameworks.catalog import Case, Framework

FRAMEWORK = Framework(
    name="openai-agents-openllmetry",
    title="OpenAI Agents SDK",
    instrumentation="OpenLLMetry",
    packages=(
        "openai-agents",
        "opentelemetry-instrumentation-openai-agents",
        "opentelemetry-instrumentation-openai",
        "openai",
    ),
)
CASES = [
    Case("exfil", "exfil-db", "fetch_weather, send_report to 127.0.0.2, save_note INSERT; answer"),
    Case("benign", "benign", "fetch_weather only; answer"),
    Case(
        "no-content",
        "exfil-db",
        "the exfil run with TRACELOOP_TRACE_CONTENT=false",
        env={"TRACELOOP_TRACE_CONTENT": "false"},
    ),
    Case(
        "with-openai",
        "exfil-db",
        "the exfil run with OpenLLMetry's openai instrumentation too (default model: it "
        "records nothing)",
        args=("--with-openai",),
    ),
    Case(
        "with-openai-gpt41",
        "exfil-db",
        "the with-openai run with model gpt-4.1: two spans per model call",
        args=("--with-openai", "--model", "gpt-4.1"),
    ),
]

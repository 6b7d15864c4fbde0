from samples.frameworks.catalog import BENIGN, EXFIL, Case, Framework, no_content

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
    EXFIL,
    BENIGN,
    no_content(
        "TRACELOOP_TRACE_CONTENT=false",
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

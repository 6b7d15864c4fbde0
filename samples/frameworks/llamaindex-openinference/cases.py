"""LlamaIndex's FunctionAgent traced by OpenInference."""

from samples.frameworks.catalog import Case, Framework

FRAMEWORK = Framework(
    name="llamaindex-openinference",
    title="LlamaIndex",
    instrumentation="OpenInference",
    packages=(
        "llama-index-core",
        "llama-index-llms-openai",
        "llama-index-workflows",
        "openinference-instrumentation-llama-index",
        "openinference-instrumentation",
        "openai",
    ),
)
_HIDE = {
    f"OPENINFERENCE_HIDE_{what}": "true"
    for what in ("INPUTS", "OUTPUTS", "INPUT_MESSAGES", "OUTPUT_MESSAGES")
}

CASES = [
    Case("exfil", "exfil-db", "fetch_weather, send_report to 127.0.0.2, save_note INSERT; answer"),
    Case("benign", "benign", "fetch_weather only; answer"),
    Case(
        "no-content",
        "exfil-db",
        "the exfil run with OPENINFERENCE_HIDE_INPUTS/OUTPUTS/INPUT_MESSAGES/OUTPUT_MESSAGES",
        env=_HIDE,
    ),
]

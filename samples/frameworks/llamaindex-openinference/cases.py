"""LlamaIndex's FunctionAgent traced by OpenInference."""

from samples.frameworks.catalog import BENIGN, EXFIL, Framework, no_content

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
    EXFIL,
    BENIGN,
    no_content(
        "OPENINFERENCE_HIDE_INPUTS/OUTPUTS/INPUT_MESSAGES/OUTPUT_MESSAGES",
        env=_HIDE,
    ),
]

"""Haystack's Agent component traced by OpenInference."""

from samples.frameworks.catalog import BENIGN, EXFIL, Framework, no_content

FRAMEWORK = Framework(
    name="haystack-openinference",
    title="Haystack (Agent)",
    instrumentation="OpenInference",
    packages=(
        "haystack-ai",
        "openinference-instrumentation-haystack",
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

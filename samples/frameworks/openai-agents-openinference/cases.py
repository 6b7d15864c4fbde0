from samples.frameworks.catalog import BENIGN, EXFIL, Case, Framework

FRAMEWORK = Framework(
    name="openai-agents-openinference",
    title="OpenAI Agents SDK",
    instrumentation="OpenInference",
    packages=("openai-agents", "openinference-instrumentation-openai-agents", "openai"),
)
# OpenInference's TraceConfig reads these; a user hiding content sets all four.
_HIDE = {
    "OPENINFERENCE_HIDE_INPUTS": "true",
    "OPENINFERENCE_HIDE_OUTPUTS": "true",
    "OPENINFERENCE_HIDE_INPUT_MESSAGES": "true",
    "OPENINFERENCE_HIDE_OUTPUT_MESSAGES": "true",
}
CASES = [
    EXFIL,
    BENIGN,
    Case("no-content", "exfil-db", "the exfil run with OPENINFERENCE_HIDE_* = true", env=_HIDE),
]

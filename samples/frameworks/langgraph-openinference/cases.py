from samples.frameworks.catalog import BENIGN, EXFIL, Case, Framework

FRAMEWORK = Framework(
    name="langgraph-openinference",
    title="LangChain create_agent (LangGraph)",
    instrumentation="OpenInference",
    packages=(
        "langchain",
        "langgraph",
        "langchain-core",
        "langchain-openai",
        "openinference-instrumentation-langchain",
        "openai",
    ),
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

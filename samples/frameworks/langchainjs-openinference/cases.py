"""LangChain.js 1.x (createAgent), traced by OpenInference JS."""

from samples.frameworks.catalog import BENIGN, DROP_TABLE, EXFIL, Framework, no_content

FRAMEWORK = Framework(
    name="langchainjs-openinference",
    title="LangChain.js (createAgent)",
    instrumentation="OpenInference JS",
    packages=(
        "langchain",
        "@arizeai/openinference-instrumentation-langchain",
        "@langchain/core",
        "@langchain/openai",
        "@opentelemetry/sdk-trace-node",
        "better-sqlite3",
    ),
    runtime="node",
    entry="agent.mjs",
)
CASES = [
    EXFIL,
    BENIGN,
    no_content("hideInputs and hideOutputs", args=("--no-content",)),
    DROP_TABLE,
]

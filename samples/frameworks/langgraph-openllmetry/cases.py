from samples.frameworks.catalog import BENIGN, EXFIL, Framework, no_content

FRAMEWORK = Framework(
    name="langgraph-openllmetry",
    title="LangChain create_agent (LangGraph)",
    instrumentation="OpenLLMetry",
    packages=(
        "langchain",
        "langgraph",
        "langchain-core",
        "langchain-openai",
        "opentelemetry-instrumentation-langchain",
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
]

from samples.frameworks.catalog import Case, Framework

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
    Case("exfil", "exfil-db", "fetch_weather, send_report to 127.0.0.2, save_note INSERT; answer"),
    Case("benign", "benign", "fetch_weather only; answer"),
    Case(
        "no-content",
        "exfil-db",
        "the exfil run with TRACELOOP_TRACE_CONTENT=false",
        env={"TRACELOOP_TRACE_CONTENT": "false"},
    ),
]

from samples.frameworks.catalog import Case, Framework

FRAMEWORK = Framework(
    name="calculator",
    title="A pure calculator tool (openai SDK loop)",
    instrumentation="OpenInference",
    packages=(
        "openinference-instrumentation-openai",
        "openai",
        "opentelemetry-instrumentation-requests",
    ),
    task=False,
)
CASES = [
    Case(
        "benign",
        "calculator",
        "calculator(expression='16+2'), a pure tool (no I/O; requests instrumented but "
        "unused); answer",
    ),
    Case(
        "benign-declared",
        "calculator",
        "the benign run with the tool declared side-effect free on its own span "
        "(rampart_otel.declare.tool_side_effects('none'))",
        env={"SAMPLE_DECLARE_TOOL": "1"},
    ),
]

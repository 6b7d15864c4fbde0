from samples.frameworks.catalog import Case, Framework

FRAMEWORK = Framework(
    name="sdk-loop",
    title="A plain openai SDK tool loop, no agent or tool spans",
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
        "exfil",
        "report-secret",
        "send_report with the key in its argument (POST to 127.0.0.2 with requests), then the "
        "answer; each model call and the POST are traces of their own",
    ),
]

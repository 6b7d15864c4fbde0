from samples.frameworks.catalog import Case, Framework

FRAMEWORK = Framework(
    name="two-clients-requests-urllib",
    title="Two HTTP clients: requests (instrumented) and urllib (openai SDK loop)",
    instrumentation="OpenInference",
    packages=(
        "openinference-instrumentation-openai",
        "openai",
        "opentelemetry-instrumentation-requests",
        "opentelemetry-instrumentation-urllib",
        "requests",
    ),
    task=False,
)
CASES = [
    Case(
        "exfil",
        "weather-report",
        "get_weather GET with requests (instrumented); send_report POSTs the key to 127.0.0.2 "
        "with urllib (not instrumented: no span); answer",
    ),
    Case(
        "exfil-both-instrumented",
        "weather-report",
        "the same run with urllib instrumented too: the POST is a span under send_report",
        args=("--instrument-urllib",),
    ),
]

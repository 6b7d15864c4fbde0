from samples.frameworks.catalog import Case, Framework

FRAMEWORK = Framework(
    name="two-clients-httpx-aiohttp",
    title="Two HTTP clients: httpx (instrumented) and aiohttp (openai SDK loop)",
    instrumentation="OpenInference",
    packages=(
        "openinference-instrumentation-openai",
        "openai",
        "opentelemetry-instrumentation-httpx",
        "opentelemetry-instrumentation-aiohttp-client",
        "httpx",
        "aiohttp",
    ),
    task=False,
)
CASES = [
    Case(
        "exfil",
        "weather-report",
        "get_weather GET with httpx (instrumented); send_report POSTs the key to 127.0.0.2 "
        "with aiohttp (not instrumented: no span); answer",
    ),
    Case(
        "exfil-both-instrumented",
        "weather-report",
        "the same run with aiohttp instrumented too: the POST is a span under send_report",
        args=("--instrument-aiohttp",),
    ),
]

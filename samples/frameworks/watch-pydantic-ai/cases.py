from samples.frameworks.catalog import Case, Framework

FRAMEWORK = Framework(
    name="watch-pydantic-ai",
    title="The watcher on a Pydantic AI agent whose tools use uninstrumented clients",
    instrumentation="Pydantic AI (Agent.instrument_all), and rampart_otel.watch",
    packages=("pydantic-ai-slim", "openai"),
    task=False,
)
CASES = [
    Case("benign", "benign", "fetch_weather (urllib GET to localhost); answer; not watched"),
    Case(
        "benign-watched",
        "benign",
        "the benign run with rampart_otel.watch() in the agent's code",
        args=("--watch",),
    ),
    Case(
        "urllib",
        "exfil",
        "fetch_weather, send_report: the report with its token to 127.0.0.2 through urllib; "
        "answer; not watched",
    ),
    Case(
        "urllib-watched",
        "exfil",
        "the urllib run with rampart_otel.watch() in the agent's code",
        args=("--watch",),
    ),
]

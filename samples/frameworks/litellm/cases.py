from samples.frameworks.catalog import BENIGN, DROP_TABLE, EXFIL, Case, Framework, no_content

FRAMEWORK = Framework(
    name="litellm",
    title="LiteLLM (OpenTelemetry callback, hand-written tool loop)",
    instrumentation="LiteLLM otel callback",
    packages=("litellm", "opentelemetry-sdk"),
)
CASES = [
    EXFIL,
    BENIGN,
    no_content("litellm.turn_off_message_logging = True", args=("--no-content",)),
    Case(
        "parallel",
        "parallel",
        "fetch_weather and send_report asked for in one model turn, then save_note",
    ),
    DROP_TABLE,
]

from samples.frameworks.catalog import Case, Framework

FRAMEWORK = Framework(
    name="openlit",
    title="OpenLIT (openai client, hand-written tool loop)",
    instrumentation="OpenLIT",
    packages=("openlit", "openai"),
)
CASES = [
    Case("exfil", "exfil-db", "fetch_weather, send_report to 127.0.0.2, save_note INSERT; answer"),
    Case("benign", "benign", "fetch_weather only; answer"),
    Case(
        "no-content",
        "exfil-db",
        "the exfil run with openlit.init(capture_message_content=False)",
        args=("--no-content",),
    ),
    Case(
        "stream",
        "exfil-db",
        "the exfil run with streamed chat completions (stream_options.include_usage)",
        args=("--stream",),
    ),
]

from samples.frameworks.catalog import BENIGN, EXFIL, Case, Framework, no_content

FRAMEWORK = Framework(
    name="openlit",
    title="OpenLIT (openai client, hand-written tool loop)",
    instrumentation="OpenLIT",
    packages=("openlit", "openai"),
)
CASES = [
    EXFIL,
    BENIGN,
    no_content(
        "openlit.init(capture_message_content=False)",
        args=("--no-content",),
    ),
    Case(
        "stream",
        "exfil-db",
        "the exfil run with streamed chat completions (stream_options.include_usage)",
        args=("--stream",),
    ),
    Case(
        "parallel",
        "parallel",
        "fetch_weather and send_report asked for in one model turn, then save_note",
    ),
]

from samples.frameworks.catalog import DROP_TABLE_ENV, Case, Framework

FRAMEWORK = Framework(
    name="openai-v2",
    title="OpenAI SDK (OpenTelemetry GenAI instrumentation 2.x)",
    instrumentation="opentelemetry-instrumentation-openai-v2",
    packages=("opentelemetry-instrumentation-openai-v2", "opentelemetry-util-genai"),
)
LATEST = {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"}
CASES = [
    Case(
        "exfil",
        "exfil-db",
        "the task, content SPAN_AND_EVENT",
        env={**LATEST, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_AND_EVENT"},
    ),
    Case(
        "benign",
        "benign",
        "fetch_weather only, content SPAN_ONLY",
        env={**LATEST, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"},
    ),
    Case(
        "span-only",
        "exfil-db",
        "the task, content SPAN_ONLY",
        env={**LATEST, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"},
    ),
    Case(
        "event-only",
        "exfil-db",
        "the task, content EVENT_ONLY (log events: not in the traces)",
        env={**LATEST, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "EVENT_ONLY"},
    ),
    Case(
        "no-content",
        "exfil-db",
        "the task with the old value true, which the latest conventions ignore",
        env={**LATEST, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"},
    ),
    Case(
        "drop-table",
        "drop-table",
        "fetch_weather, then run_sql runs DROP TABLE notes on the SQLite file; SPAN_AND_EVENT",
        env={
            **LATEST,
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_AND_EVENT",
            **DROP_TABLE_ENV,
        },
    ),
]

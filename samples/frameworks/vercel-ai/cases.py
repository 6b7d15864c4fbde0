"""The Vercel AI SDK 7 weather agent, traced by its `@ai-sdk/otel` integration."""

from samples.frameworks.catalog import BENIGN, EXFIL, Case, Framework, no_content

FRAMEWORK = Framework(
    name="vercel-ai",
    title="Vercel AI SDK 7",
    instrumentation="@ai-sdk/otel",
    packages=(
        "ai",
        "@ai-sdk/openai",
        "@ai-sdk/otel",
        "@opentelemetry/sdk-trace-node",
        "@opentelemetry/exporter-trace-otlp-proto",
        "@opentelemetry/instrumentation-undici",
        "better-sqlite3",
        "opentelemetry-plugin-better-sqlite3",
    ),
    runtime="node",
    entry="agent.mjs",
)
CASES = [
    EXFIL,
    BENIGN,
    no_content(
        "recordInputs: false, recordOutputs: false",
        args=("--no-content",),
    ),
    Case(
        "legacy",
        "exfil-db",
        "the exfil run with LegacyOpenTelemetry (the ai.* spans of AI SDK 6)",
        args=("--legacy",),
    ),
    Case(
        "legacy-no-content",
        "exfil-db",
        "LegacyOpenTelemetry with recordInputs: false, recordOutputs: false",
        args=("--legacy", "--no-content"),
    ),
    Case(
        "tool-error",
        "exfil-db",
        "the exfil run with send_report failing (connection refused): how a tool error is marked",
        env={"SAMPLE_REPORT_URL": "http://127.0.0.2:4/upload"},
    ),
]

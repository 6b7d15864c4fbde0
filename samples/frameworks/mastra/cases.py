"""Mastra, traced by its OpenTelemetry exporter."""

from samples.frameworks.catalog import BENIGN, DROP_TABLE, EXFIL, Framework

FRAMEWORK = Framework(
    name="mastra",
    title="Mastra",
    instrumentation="@mastra/otel-exporter",
    packages=("@mastra/core", "@mastra/otel-exporter", "@mastra/observability"),
    runtime="node",
    entry="agent.mjs",
)
CASES = [EXFIL, BENIGN, DROP_TABLE]

"""Mastra 0.24 (Node 20), traced by @mastra/otel-exporter 0.3."""

from samples.frameworks.catalog import BENIGN, DROP_TABLE, EXFIL, Framework

FRAMEWORK = Framework(
    name="mastra-0.24",
    title="Mastra 0.24",
    instrumentation="@mastra/otel-exporter",
    packages=("@mastra/core", "@mastra/otel-exporter"),
    runtime="node",
    entry="agent.mjs",
)
CASES = [EXFIL, BENIGN, DROP_TABLE]

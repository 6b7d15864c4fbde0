"""Haystack's Agent component traced by Haystack's own OpenTelemetry tracer (scope haystack)."""

from samples.frameworks.catalog import BENIGN, DROP_TABLE, EXFIL, Case, Framework

FRAMEWORK = Framework(
    name="haystack-native",
    title="Haystack (Agent)",
    instrumentation="native (Haystack tracer)",
    packages=("haystack-ai", "opentelemetry-haystack", "openai"),
)
_CONTENT = {"HAYSTACK_CONTENT_TRACING_ENABLED": "true"}
CASES = [
    Case(EXFIL.case, EXFIL.script, f"{EXFIL.what}; content tracing on", env=_CONTENT),
    Case(BENIGN.case, BENIGN.script, f"{BENIGN.what}; content tracing on", env=_CONTENT),
    Case(
        DROP_TABLE.case,
        DROP_TABLE.script,
        f"{DROP_TABLE.what}; content tracing on",
        env={**DROP_TABLE.env, **_CONTENT},
    ),
    Case("no-content", "exfil-db", "the exfil run with Haystack's defaults (content tracing off)"),
]

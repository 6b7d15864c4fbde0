"""MLflow Tracing with its GenAI-semantic-conventions switch on: the agent of
``samples/frameworks/mlflow`` run with ``MLFLOW_ENABLE_OTEL_GENAI_SEMCONV=true``, so MLflow
translates its ``mlflow.*`` span attributes into ``gen_ai.*`` ones before the OTLP export."""

from samples.frameworks.catalog import BENIGN, DROP_TABLE, EXFIL, Case, Framework

FRAMEWORK = Framework(
    name="mlflow-genai",
    title="MLflow Tracing, GenAI semconv (MLFLOW_ENABLE_OTEL_GENAI_SEMCONV=true)",
    instrumentation="MLflow",
    packages=("mlflow-tracing", "openai"),
    entry="../mlflow/agent.py",
)
_SEMCONV = {"MLFLOW_ENABLE_OTEL_GENAI_SEMCONV": "true"}
CASES = [
    Case(case.case, case.script, case.what, env={**case.env, **_SEMCONV})
    for case in (EXFIL, BENIGN, DROP_TABLE)
]

from samples.frameworks.catalog import BENIGN, EXFIL, Framework

FRAMEWORK = Framework(
    name="mlflow",
    title="MLflow Tracing (openai autolog, @mlflow.trace tools)",
    instrumentation="MLflow",
    packages=("mlflow-tracing", "openai"),
)
CASES = [EXFIL, BENIGN]

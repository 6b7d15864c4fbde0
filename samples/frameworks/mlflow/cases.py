from samples.frameworks.catalog import BENIGN, DROP_TABLE, EXFIL, Case, Framework

FRAMEWORK = Framework(
    name="mlflow",
    title="MLflow Tracing (openai autolog, @mlflow.trace tools)",
    instrumentation="MLflow",
    packages=("mlflow-tracing", "openai"),
)
CASES = [
    EXFIL,
    BENIGN,
    Case(
        "parallel",
        "parallel",
        "fetch_weather and send_report asked for in one model turn, then save_note",
    ),
    DROP_TABLE,
]

from samples.frameworks.catalog import Case, Framework

FRAMEWORK = Framework(
    name="strands",
    title="Strands Agents",
    instrumentation="native",
    packages=("strands-agents", "openai"),
)
CASES = [
    Case("exfil", "exfil-db", "fetch_weather, send_report to 127.0.0.2, save_note INSERT; answer"),
]

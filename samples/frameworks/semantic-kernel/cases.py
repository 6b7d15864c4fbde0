"""Semantic Kernel's ChatCompletionAgent, traced by Semantic Kernel's own diagnostics."""

from samples.frameworks.catalog import Case, Framework
from samples.scripted_model import SCRIPTS, ToolCallSpec, Turn

FRAMEWORK = Framework(
    name="semantic-kernel",
    title="Semantic Kernel (ChatCompletionAgent)",
    instrumentation="native (GenAI semconv)",
    packages=("semantic-kernel", "openai"),
    traces_note=(
        "Semantic Kernel names each tool by its fully qualified function name,\n"
        "`<plugin>-<function>` (`weather-send_report`: `@kernel_function def send_report` in\n"
        "plugin `weather`), on the `execute_tool` spans' `gen_ai.tool.name`. The reader records\n"
        "the plugin and the function (`namespace`, `local_name` in `rampart-otel inspect\n"
        '--json`), so `samples/policy.yaml`\'s `tool_called("send_report", ...)` matches\n'
        'the call, as `"weather-send_report"` would: the exfil run\'s `no-secrets-in-reports`\n'
        'and `no-unrequested-reports` are UNSAFE (docs/policy.md, "How tool names match").'
    ),
)
PLUGIN = "weather"


def _qualified(script: str) -> tuple[Turn, ...]:
    """The shared script with Semantic Kernel's tool names: ``<plugin>-<function>`` is the
    name the model is offered and must ask for."""
    return tuple(
        Turn(
            text=turn.text,
            tool_calls=tuple(
                ToolCallSpec(f"{PLUGIN}-{call.name}", call.arguments) for call in turn.tool_calls
            ),
        )
        for turn in SCRIPTS[script]
    )


_SCRIPTS = {"sk-exfil": _qualified("exfil-db"), "sk-benign": _qualified("benign")}
_ON = "SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS"
CONTENT = {_ON: "true", f"{_ON}_SENSITIVE": "true"}
NO_CONTENT = {_ON: "true"}

CASES = [
    Case(
        "exfil",
        "sk-exfil",
        "fetch_weather, send_report to 127.0.0.2, save_note INSERT; answer (diagnostics "
        "with sensitive data)",
        env=CONTENT,
        scripts=_SCRIPTS,
    ),
    Case("benign", "sk-benign", "fetch_weather only; answer", env=CONTENT, scripts=_SCRIPTS),
    Case(
        "no-content",
        "sk-exfil",
        "the exfil run with diagnostics on, sensitive data off",
        env=NO_CONTENT,
        scripts=_SCRIPTS,
    ),
]

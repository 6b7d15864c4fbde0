"""rampart-otel: safety verdicts from agents' OpenTelemetry traces."""

__version__ = "0.1.0"

__all__ = [
    "Check",
    "CheckResult",
    "EvalOutcome",
    "EvalResult",
    "Evaluator",
    "Evidence",
    "Policy",
    "PolicyError",
    "SafetyStatus",
    "__version__",
    "at_least",
    "at_most",
    "before",
    "contains",
    "evaluate_check",
    "evaluate_policy",
    "flows",
    "glob",
    "input_contains",
    "load_policy",
    "not_",
    "not_in",
    "one_of",
    "regex",
    "response_contains",
    "score_files",
    "score_spans",
    "setup",
    "side_effect",
    "tool_called",
    "tool_result",
    "watch",
]

# The public API lives in ``rampart_otel.api`` (the one-call scoring) and
# ``rampart_otel.evaluation`` (the rest); it is imported on first use, so an agent process that
# needs only ``rampart_otel.declare`` (and every pytest session, which loads the plugin) never
# loads pydantic, yaml or the evaluator.
_ONE_CALL_API = frozenset({"score_files", "score_spans"})
_API = frozenset(__all__) - _ONE_CALL_API - {"__version__", "setup", "watch"}


def __getattr__(name: str) -> object:
    if name == "watch":  # the watcher (a callable module: ``rampart_otel.watch()``)
        import importlib

        return importlib.import_module("rampart_otel.watch")
    if name in _API:
        import rampart_otel.evaluation  # lazily: see above

        return getattr(rampart_otel.evaluation, name)
    if name == "setup":
        import rampart_otel.tracing  # lazily: it loads the SDK and the instrumentations

        return rampart_otel.tracing.setup
    if name in _ONE_CALL_API:
        import rampart_otel.api  # lazily: see above

        return getattr(rampart_otel.api, name)
    raise AttributeError(f"module 'rampart_otel' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API, *_ONE_CALL_API, "setup", "watch"})

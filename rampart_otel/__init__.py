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
    "contains",
    "evaluate_check",
    "evaluate_policy",
    "glob",
    "load_policy",
    "not_",
    "not_in",
    "one_of",
    "regex",
    "response_contains",
    "side_effect",
    "tool_called",
]

# The public API lives in ``rampart_otel.evaluation``; it is imported on first use, so an agent
# process that needs only ``rampart_otel.declare`` never loads pydantic, yaml or the evaluator.
_API = frozenset(__all__) - {"__version__"}


def __getattr__(name: str) -> object:
    if name in _API:
        import rampart_otel.evaluation  # lazily: see _API

        return getattr(rampart_otel.evaluation, name)
    raise AttributeError(f"module 'rampart_otel' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})

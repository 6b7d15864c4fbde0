"""The evaluation engine: evaluators, matchers, policies, verdicts and population statistics.

Each name is imported from its module on first use (``__getattr__``), as the package's own
facade does (``rampart_otel/__init__.py``): ``score`` pays for the evaluators and matchers its
policy uses, not for the judge's HTTP client, the population statistics or every evaluator.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rampart_otel.channels import channel_key_error, is_channel_key
    from rampart_otel.errors import PolicyError
    from rampart_otel.evaluation.assume import assume_run
    from rampart_otel.evaluation.evaluators.algebra import Evaluator
    from rampart_otel.evaluation.evaluators.before import before
    from rampart_otel.evaluation.evaluators.counts import at_least, at_most, repeated
    from rampart_otel.evaluation.evaluators.flows import flows
    from rampart_otel.evaluation.evaluators.input_contains import input_contains
    from rampart_otel.evaluation.evaluators.judge import judge
    from rampart_otel.evaluation.evaluators.response_contains import response_contains
    from rampart_otel.evaluation.evaluators.side_effect import side_effect
    from rampart_otel.evaluation.evaluators.tool_called import tool_called
    from rampart_otel.evaluation.evaluators.tool_result import tool_result
    from rampart_otel.evaluation.expression import parse_detect
    from rampart_otel.evaluation.judge_endpoint import JudgeClient, JudgeConfig
    from rampart_otel.evaluation.matchers import (
        Matcher,
        contains,
        glob,
        ip_in,
        not_,
        not_in,
        one_of,
        path_under,
        regex,
        secret,
    )
    from rampart_otel.evaluation.outcome import EvalOutcome, EvalResult, Evidence
    from rampart_otel.evaluation.policy import Check, Policy, load_policy, parse_policy
    from rampart_otel.evaluation.population import (
        PopulationReport,
        PopulationSummary,
        Rate,
        Tally,
        summarize_population,
        wilson_interval,
    )
    from rampart_otel.evaluation.verdict import (
        CheckResult,
        SafetyStatus,
        evaluate_check,
        evaluate_policy,
        resolve,
    )

__all__ = [
    "Check",
    "CheckResult",
    "EvalOutcome",
    "EvalResult",
    "Evaluator",
    "Evidence",
    "JudgeClient",
    "JudgeConfig",
    "Matcher",
    "Policy",
    "PolicyError",
    "PopulationReport",
    "PopulationSummary",
    "Rate",
    "SafetyStatus",
    "Tally",
    "assume_run",
    "at_least",
    "at_most",
    "before",
    "channel_key_error",
    "contains",
    "evaluate_check",
    "evaluate_policy",
    "flows",
    "glob",
    "input_contains",
    "ip_in",
    "is_channel_key",
    "judge",
    "load_policy",
    "not_",
    "not_in",
    "one_of",
    "parse_detect",
    "parse_policy",
    "path_under",
    "regex",
    "repeated",
    "resolve",
    "response_contains",
    "secret",
    "side_effect",
    "summarize_population",
    "tool_called",
    "tool_result",
    "wilson_interval",
]

# Where each name of ``__all__`` lives, imported when first asked for.
_WHERE = {
    "channel_key_error": "rampart_otel.channels",
    "is_channel_key": "rampart_otel.channels",
    "PolicyError": "rampart_otel.errors",
    "assume_run": "rampart_otel.evaluation.assume",
    "Evaluator": "rampart_otel.evaluation.evaluators.algebra",
    "before": "rampart_otel.evaluation.evaluators.before",
    "at_least": "rampart_otel.evaluation.evaluators.counts",
    "at_most": "rampart_otel.evaluation.evaluators.counts",
    "repeated": "rampart_otel.evaluation.evaluators.counts",
    "flows": "rampart_otel.evaluation.evaluators.flows",
    "input_contains": "rampart_otel.evaluation.evaluators.input_contains",
    "judge": "rampart_otel.evaluation.evaluators.judge",
    "response_contains": "rampart_otel.evaluation.evaluators.response_contains",
    "side_effect": "rampart_otel.evaluation.evaluators.side_effect",
    "tool_called": "rampart_otel.evaluation.evaluators.tool_called",
    "tool_result": "rampart_otel.evaluation.evaluators.tool_result",
    "parse_detect": "rampart_otel.evaluation.expression",
    "JudgeClient": "rampart_otel.evaluation.judge_endpoint",
    "JudgeConfig": "rampart_otel.evaluation.judge_endpoint",
    "Matcher": "rampart_otel.evaluation.matchers",
    "contains": "rampart_otel.evaluation.matchers",
    "glob": "rampart_otel.evaluation.matchers",
    "ip_in": "rampart_otel.evaluation.matchers",
    "not_": "rampart_otel.evaluation.matchers",
    "not_in": "rampart_otel.evaluation.matchers",
    "one_of": "rampart_otel.evaluation.matchers",
    "path_under": "rampart_otel.evaluation.matchers",
    "regex": "rampart_otel.evaluation.matchers",
    "secret": "rampart_otel.evaluation.matchers",
    "EvalOutcome": "rampart_otel.evaluation.outcome",
    "EvalResult": "rampart_otel.evaluation.outcome",
    "Evidence": "rampart_otel.evaluation.outcome",
    "Check": "rampart_otel.evaluation.policy",
    "Policy": "rampart_otel.evaluation.policy",
    "load_policy": "rampart_otel.evaluation.policy",
    "parse_policy": "rampart_otel.evaluation.policy",
    "PopulationReport": "rampart_otel.evaluation.population",
    "PopulationSummary": "rampart_otel.evaluation.population",
    "Rate": "rampart_otel.evaluation.population",
    "Tally": "rampart_otel.evaluation.population",
    "summarize_population": "rampart_otel.evaluation.population",
    "wilson_interval": "rampart_otel.evaluation.population",
    "CheckResult": "rampart_otel.evaluation.verdict",
    "SafetyStatus": "rampart_otel.evaluation.verdict",
    "evaluate_check": "rampart_otel.evaluation.verdict",
    "evaluate_policy": "rampart_otel.evaluation.verdict",
    "resolve": "rampart_otel.evaluation.verdict",
}


def __getattr__(name: str) -> object:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})

"""The evaluation engine: evaluators, matchers, policies, verdicts and population statistics."""

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

"""The one way a run is scored, whatever the host: normalize → assume → evaluate.

Every host scores through ``pipeline.Pipeline``, whose ``score`` is the one call of it, so
a run gets the same verdicts from each. Nothing a run holds can cost a report: a run that
cannot be normalized, or a policy that fails on it, gives an ERROR result per check, with
the reason, and the other runs and policies are scored as usual.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from rampart_otel.errors import PolicyError
from rampart_otel.evaluation import (
    CheckResult,
    Policy,
    SafetyStatus,
    evaluate_policy,
    load_policy,
)
from rampart_otel.evaluation.plan import FULL_READING, ScoringPlan
from rampart_otel.model import AgentRun, Run
from rampart_otel.normalize import normalize
from rampart_otel.render import safe_text
from rampart_otel.vocabulary import channel_problem

# Scoring holds many spans open (the assembler's idle window, 50,000 by default; the
# collector's open traces) and allocates millions of small acyclic objects: at the default
# 700 the cyclic GC's young collections, and the full ones they set off, cost a tenth to a
# fifth of the CPU. Cycles are still collected.
GC_YOUNG_THRESHOLD = 50_000


@contextmanager
def fewer_young_collections(threshold: int = GC_YOUNG_THRESHOLD) -> Iterator[None]:
    """Collect the youngest generation less often while scoring (every ``threshold`` more
    objects held); never lowers the threshold."""
    saved = gc.get_threshold()
    gc.set_threshold(max(saved[0], threshold), *saved[1:])
    try:
        yield
    finally:
        gc.set_threshold(*saved)


def checked_assumptions(
    keys: Iterable[str], *, option: str, policies: Iterable[Policy] = ()
) -> list[str]:
    """``keys`` as given, each a channel the language knows or one of ``policies`` declares
    (``side_effect_kinds``); else a PolicyError naming ``option`` and the closest keys."""
    if isinstance(keys, str):  # not read letter by letter ('s' is no channel)
        raise PolicyError(option, None, None, f"a list of channel keys, not one string: [{keys!r}]")
    keys = list(keys)
    declared = [kind for policy in policies for kind in policy.side_effect_kinds]
    for key in keys:
        problem = channel_problem(key, declared)
        if problem:
            raise PolicyError(option, None, None, problem)
    return keys


def load_policies(paths: Sequence[Path]) -> list[Policy]:
    """Every policy file, parsed and checked; the first bad one raises its PolicyError."""
    return [load_policy(path) for path in paths]


def score_run(
    run: Run,
    policies: Sequence[Policy],
    *,
    assume: Iterable[str] = (),
    budget_seconds: float | None = None,
) -> list[CheckResult]:
    """Every check of every policy on ``run``; never raises.

    ``assume``: channel keys taken as observed on top of each policy's own (validate them
    first with :func:`checked_assumptions`; an invalid one gives ERROR results).
    ``budget_seconds``: checks not started within it are UNDETERMINED, with the reason.
    """
    return score_run_with_view(run, policies, assume=assume, budget_seconds=budget_seconds)[1]


def score_run_with_view(
    run: Run,
    policies: Sequence[Policy],
    *,
    assume: Iterable[str] = (),
    budget_seconds: float | None = None,
    plan: ScoringPlan = FULL_READING,
) -> tuple[AgentRun | None, list[CheckResult]]:
    """:func:`score_run`, and what the run did as the checks saw it (None: unreadable),
    for outputs that show the run beside its verdicts.

    ``plan``: how far to read the run (``evaluation.plan.scoring_plan`` of the same
    ``policies`` and ``assume``, for outputs that do not show a run's coverage); the full
    reading by default."""
    assume = list(assume)
    deadline = None if budget_seconds is None else time.monotonic() + budget_seconds
    try:
        agent_run = normalize(run, plan)
    except Exception as error:
        import logging  # startup: only when a run cannot be read

        logging.getLogger(__name__).exception(
            "normalize failed for run %s", safe_text(run.run_id, 80)
        )
        return None, [
            _error_result(run, policy, check, "Run could not be read", error)
            for policy in policies
            for check in policy.checks
        ]
    results: list[CheckResult] = []
    for policy in policies:
        try:
            results.extend(
                evaluate_policy(agent_run, policy, assume_coverage=assume, deadline=deadline)
            )
        except Exception as error:
            what = "Policy could not be applied"
            results.extend(
                _error_result(run, policy, check, what, error) for check in policy.checks
            )
    return agent_run, results


def _error_result(
    run: Run, policy: Policy, check: object, what: str, error: Exception
) -> CheckResult:
    described = f"{type(error).__name__}: {safe_text(error)}"
    return CheckResult(
        run_id=run.run_id,
        trace_ids=list(run.trace_ids),
        check_id=str(getattr(check, "id", "")),
        polarity=str(getattr(check, "polarity", "")),
        status=SafetyStatus.ERROR,
        summary=f"{what}: {described}",
        harm_category=getattr(check, "harm_category", None),
        service=run_service(run),
        sources=run.sources,
        error=described,
        policy=policy.name,
        policy_version=policy.version,
    )


def run_service(run: Run) -> str | None:
    """The first ``service.name`` among the run's spans (before normalize has read it)."""
    try:
        return next(filter(None, (span.resource.service_name for span in run.spans)), None)
    except Exception:  # the run could not be read: its service may not be readable either
        return None

"""What a policy adds to a run's coverage before it is evaluated: its ``tools:``
declarations and its ``assume_coverage``.

Declared tools are an overlay on the run's places (``places.side_effect_decisions`` with
an ``Overlay``): the side-effect channels are decided again from the places the run
carries, never by reading the run a second time. Taking a channel as observed is
``channels.assume``'s job; this validates the keys and hands the run's integrity findings
along, so they cap an assumed channel too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from rampart_otel.channels import (
    SIDE_EFFECT_PREFIX,
    Coverage,
    assume,
    channel_key_error,
    is_channel_key,
    observability_level,
)
from rampart_otel.model import AgentRun
from rampart_otel.places import Overlay, declared_by_policy, side_effect_decisions
from rampart_otel.wording import worded


def declare_run_tools(run: AgentRun, tools: Mapping[str, str]) -> AgentRun:
    """``run`` with the policy's ``tools:`` declarations: calls of a declared tool are not
    silent, and the side-effect channels are decided again from the run's places with the
    declarations laid over them (a new AgentRun; the input is unchanged)."""
    places = run.places
    if not tools or places is None:
        return run
    scopes = declared_by_policy(places.scopes, tools, places.calls)
    if list(scopes) == run.tool_scopes:
        return run
    decided = side_effect_decisions(places, Overlay(tools))
    channels = {
        key: channel
        for key, channel in run.coverage.channels.items()
        if not key.startswith(SIDE_EFFECT_PREFIX)
    }
    channels.update((key, worded(decision)) for key, decision in decided.items())
    coverage = Coverage(channels, observability_level(channels))
    return dataclasses.replace(run, tool_scopes=list(scopes), coverage=coverage)


def assume_run(run: AgentRun, keys: Iterable[str]) -> AgentRun:
    """``run`` with ``keys`` taken as observed (a new AgentRun; the input is unchanged).

    Raises ValueError for an invalid key.
    """
    keys = list(dict.fromkeys(keys))
    for key in keys:
        if not is_channel_key(key):
            raise ValueError(channel_key_error(key))
    if not keys:
        return run
    return dataclasses.replace(run, coverage=assume(run.coverage, keys, run.integrity))

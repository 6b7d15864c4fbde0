"""Applying ``assume_coverage`` to a run before it is evaluated.

Taking a channel as observed is ``channels.assume``'s job; this only validates the keys
and hands the run's integrity findings along, so they cap an assumed channel too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from rampart_otel.channels import assume, channel_key_error, is_channel_key
from rampart_otel.model import AgentRun
from rampart_otel.processors.coverage import scope_names, scoped
from rampart_otel.processors.scopes import declare_tools


def declare_run_tools(run: AgentRun, tools: Mapping[str, str]) -> AgentRun:
    """``run`` with the policy's ``tools:`` declarations: calls of a declared tool are not
    silent, and the side-effect channels they left unproven are judged again (a new
    AgentRun; the input is unchanged)."""
    if not tools or run.coverage_base is None:
        return run
    scopes = declare_tools(run.tool_scopes, tools, run.tool_calls)
    if scopes == run.tool_scopes:
        return run
    names = scope_names(run.run.spans)
    coverage = scoped(run.coverage_base, scopes, run.integrity, names)
    return dataclasses.replace(run, tool_scopes=scopes, coverage=coverage)


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

"""Applying ``assume_coverage`` to a run before it is evaluated.

Taking a channel as observed is ``channels.assume``'s job; this only validates the keys
and hands the run's integrity findings along, so they cap an assumed channel too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from rampart_otel.channels import assume, channel_key_error, is_channel_key
from rampart_otel.model import AgentRun


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

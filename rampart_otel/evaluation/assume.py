"""Channel keys, and applying ``assume_coverage`` to a run before it is evaluated.

Taking a channel as observed is the coverage processor's job (``processors.coverage.assume``):
that is the one place it happens, so an assumed channel is recorded as source ASSUMED and is
capped by the run's integrity findings exactly as inferred coverage is. This module only
validates keys and hands the run's findings along.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from rampart_otel.model import CHANNEL_KEYS_CORE, SIDE_EFFECT_PREFIX, AgentRun
from rampart_otel.processors.coverage import assume

SIDE_EFFECT_KIND = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def is_side_effect_kind(kind: object) -> bool:
    """A kind is an identifier, so ``side_effects.<kind>`` is an unambiguous channel key."""
    return isinstance(kind, str) and SIDE_EFFECT_KIND.fullmatch(kind) is not None


def is_channel_key(key: object) -> bool:
    """``response``, ``tool_calls``, ``tool_calls.arguments|results``, ``side_effects.<kind>``."""
    if not isinstance(key, str):
        return False
    if key in CHANNEL_KEYS_CORE:
        return True
    return key.startswith(SIDE_EFFECT_PREFIX) and is_side_effect_kind(
        key[len(SIDE_EFFECT_PREFIX) :]
    )


def channel_key_error(key: object) -> str:
    """Why ``key`` is not a channel key, for policy and command-line errors."""
    return (
        f"invalid channel key {key!r}: expected one of {', '.join(CHANNEL_KEYS_CORE)} "
        "or side_effects.<kind> with <kind> an identifier"
    )


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

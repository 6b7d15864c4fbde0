"""A policy's ``judge:`` block, apart from the client that asks it: a policy is read and
validated without loading HTTP, TLS, SQLite and threads (``judge_endpoint``), which only a
policy with a ``judge(...)`` check needs."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal, get_args

from pydantic_core import core_schema as cs

from rampart_otel.evaluation.validated import optional, required, validated

__all__ = ["JudgeConfig"]


def _key_is_set(name: str | None) -> str | None:
    if name is not None and not os.environ.get(name):
        raise ValueError(
            f"the environment variable {name!r} is not set: set it, or remove "
            "api_key_env for an endpoint that takes no key"
        )
    return name


_OPTIONAL_TEXT = cs.nullable_schema(cs.str_schema())
OnUnavailable = Literal["error", "undetermined"]


@validated(
    {
        "base_url": required(cs.str_schema(min_length=1)),
        "model": required(cs.str_schema(min_length=1)),
        "api_key_env": optional(
            cs.no_info_after_validator_function(_key_is_set, _OPTIONAL_TEXT), None
        ),
        "temperature": optional(cs.float_schema(ge=0.0, le=2.0), 0.0),
        "samples": optional(cs.int_schema(ge=1, le=15), 1),
        "timeout": optional(cs.float_schema(gt=0, le=600), 30.0),
        "max_concurrency": optional(cs.int_schema(ge=1, le=64), 4),
        "retries": optional(cs.int_schema(ge=0, le=10), 2),
        "cache": optional(_OPTIONAL_TEXT, None),
        "on_unavailable": optional(cs.literal_schema(list(get_args(OnUnavailable))), "error"),
    }
)
@dataclass(frozen=True, kw_only=True)
class JudgeConfig:
    """A policy's ``judge:`` block."""

    base_url: str
    model: str
    api_key_env: str | None = None  # the variable holding the key; None: no key sent
    temperature: float = 0.0
    samples: int = 1
    timeout: float = 30.0
    max_concurrency: int = 4
    retries: int = 2
    cache: str | None = None  # the cache file; "off" disables it
    # What a judge that cannot answer makes of its checks: ERROR (the default), or
    # UNDETERMINED when the policy says so.
    on_unavailable: OnUnavailable = "error"

    @property
    def deadline_seconds(self) -> float:
        """How long one check may wait for the judge, retries and Retry-After included."""
        return self.timeout * (self.retries + 1)

"""A policy's ``judge:`` block, apart from the client that asks it: a policy is read and
validated without loading HTTP, TLS, SQLite and threads (``judge_endpoint``), which only a
policy with a ``judge(...)`` check needs."""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["JudgeConfig"]


class JudgeConfig(BaseModel):
    """A policy's ``judge:`` block."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = Field(min_length=1)
    model: str = Field(min_length=1)
    api_key_env: str | None = None  # the variable holding the key; None: no key sent
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    samples: int = Field(default=1, ge=1, le=15)
    timeout: float = Field(default=30.0, gt=0, le=600)
    max_concurrency: int = Field(default=4, ge=1, le=64)
    retries: int = Field(default=2, ge=0, le=10)
    cache: str | None = None  # the cache file; "off" disables it
    # What a judge that cannot answer makes of its checks: ERROR (the default), or
    # UNDETERMINED when the policy says so.
    on_unavailable: Literal["error", "undetermined"] = "error"

    @field_validator("api_key_env")
    @classmethod
    def _key_is_set(cls, name: str | None) -> str | None:
        if name is not None and not os.environ.get(name):
            raise ValueError(
                f"the environment variable {name!r} is not set: set it, or remove "
                "api_key_env for an endpoint that takes no key"
            )
        return name

    @property
    def deadline_seconds(self) -> float:
        """How long one check may wait for the judge, retries and Retry-After included."""
        return self.timeout * (self.retries + 1)

"""The judge's endpoint: any OpenAI-compatible chat-completions server, through the official
``openai`` client, with samples and a vote, a concurrency bound, retries and a cache.

Nothing here decides a verdict's polarity or coverage: ``evaluators.judge`` asks a question
over text it has shown to be captured, and this module answers yes, no, not applicable, or
None with the reason it could not get a valid answer.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rampart_otel.evaluation.judge_prompt import SYSTEM_PROMPT, user_message

__all__ = ["JudgeAnswer", "JudgeClient", "JudgeConfig", "JudgeStats", "JudgeVerdict"]

Verdict = Literal["yes", "no", "not_applicable"]
DEFAULT_CACHE = Path.home() / ".cache" / "rampart-otel" / "judge.sqlite"

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["yes", "no", "not_applicable"]},
        "rationale": {"type": "string"},
        "evidence": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["verdict", "rationale", "evidence"],
    "additionalProperties": False,
}


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


class JudgeAnswer(BaseModel):
    """One sample's answer, as the schema asks for it."""

    model_config = ConfigDict(extra="ignore")

    verdict: Verdict
    rationale: str = ""
    evidence: list[str] = Field(default_factory=list)


@dataclass(slots=True)
class JudgeVerdict:
    """The vote over the samples: ``verdict`` None when there was no strict majority."""

    verdict: Verdict | None
    rationale: str
    evidence: list[str]
    reason: str = ""  # why there is no verdict
    votes: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class JudgeStats:
    calls: int = 0  # requests answered by the endpoint (retries by the client not counted)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = 0
    failures: int = 0  # requests that failed or answered out of format

    def as_dict(self) -> dict[str, int]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cache_hits": self.cache_hits,
            "failures": self.failures,
        }


class JudgeClient:
    """Asks one endpoint; safe to share between threads, and to fork before first use."""

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        self.stats = JudgeStats()
        self._lock = threading.Lock()
        self._gate = threading.BoundedSemaphore(config.max_concurrency)
        self._client: Any = None
        self._client_pid = -1  # a forked worker opens its own client and cache connection
        self._cache: sqlite3.Connection | None = None
        self._cache_pid = -1

    # -- asking ------------------------------------------------------------------------

    def ask(self, question: str, what: str, text: str) -> JudgeVerdict:
        """The vote of ``samples`` answers to ``question`` about ``text`` (``what`` it is)."""
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": user_message(question, what, text)},
        ]
        samples = self.config.samples
        if samples == 1:
            answers = [self._sample(messages, 0)]
        else:
            with ThreadPoolExecutor(max_workers=min(samples, self.config.max_concurrency)) as pool:
                answers = list(pool.map(lambda i: self._sample(messages, i), range(samples)))
        return vote(answers)

    def _sample(self, messages: list[dict[str, str]], index: int) -> JudgeAnswer | str:
        key = self._key(messages, index)
        cached = self._cached(key)
        if cached is not None:
            with self._lock:
                self.stats.cache_hits += 1
            return cached
        with self._gate:
            answer = self._request(messages)
        if isinstance(answer, JudgeAnswer):
            self._store(key, answer)
        return answer

    def _request(self, messages: list[dict[str, str]]) -> JudgeAnswer | str:
        import openai

        try:
            response = self._openai().chat.completions.create(
                model=self.config.model,
                messages=messages,
                temperature=self.config.temperature,
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": "verdict", "strict": True, "schema": ANSWER_SCHEMA},
                },
            )
        except openai.APITimeoutError:
            return self._failed(f"the judge timed out after {self.config.timeout:g} s")
        except openai.APIStatusError as error:
            return self._failed(f"the judge answered HTTP {error.status_code}")
        except openai.APIError as error:
            return self._failed(f"the judge could not be reached ({type(error).__name__})")
        with self._lock:
            self.stats.calls += 1
            usage = getattr(response, "usage", None)
            if usage is not None:
                self.stats.prompt_tokens += usage.prompt_tokens or 0
                self.stats.completion_tokens += usage.completion_tokens or 0
        try:
            content = response.choices[0].message.content or ""
            return JudgeAnswer.model_validate(json.loads(content))
        except (IndexError, AttributeError, ValueError, ValidationError):
            return self._failed("the judge answered out of format")

    def _failed(self, reason: str) -> str:
        with self._lock:
            self.stats.failures += 1
        return reason

    def _openai(self) -> Any:
        if self._client is None or self._client_pid != os.getpid():
            from openai import OpenAI

            key = os.environ.get(self.config.api_key_env or "", "") or "unused"
            self._client = OpenAI(
                base_url=self.config.base_url,
                api_key=key,
                timeout=self.config.timeout,
                max_retries=self.config.retries,
            )
            self._client_pid = os.getpid()
        return self._client

    # -- the cache -------------------------------------------------------------------------

    def _key(self, messages: list[dict[str, str]], index: int) -> str:
        c = self.config
        identity = json.dumps([c.base_url, c.model, c.temperature, index, messages])
        return hashlib.sha256(identity.encode()).hexdigest()

    def _db(self) -> sqlite3.Connection | None:
        if self.config.cache == "off":
            return None
        if self._cache is None or self._cache_pid != os.getpid():
            path = Path(self.config.cache) if self.config.cache else DEFAULT_CACHE
            try:
                # The answers quote the trace (rationale, evidence): the owner's alone, as
                # the collector's data directory is.
                path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
                db = sqlite3.connect(path, timeout=30, check_same_thread=False)
                db.execute(
                    "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, answer TEXT,"
                    " created REAL)"
                )
                db.commit()
            except (OSError, sqlite3.Error):
                return None  # no cache is slower, never wrong
            self._cache = db
            self._cache_pid = os.getpid()
        return self._cache

    def _cached(self, key: str) -> JudgeAnswer | None:
        db = self._db()
        if db is None:
            return None
        with self._lock:
            row = db.execute("SELECT answer FROM answers WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            return JudgeAnswer.model_validate_json(row[0])
        except ValueError:  # a damaged row is asked again, never trusted
            return None

    def _store(self, key: str, answer: JudgeAnswer) -> None:
        db = self._db()
        if db is None:
            return
        with self._lock:
            try:
                db.execute(
                    "INSERT OR REPLACE INTO answers VALUES (?, ?, ?)",
                    (key, answer.model_dump_json(), time.time()),
                )
                db.commit()
            except sqlite3.Error:
                pass


def vote(answers: list[JudgeAnswer | str]) -> JudgeVerdict:
    """A strict majority of the samples decides; a tie, or failed and out-of-format answers
    that leave no majority, give no verdict (as ASSERT counts them: undetermined)."""
    counted = Counter(a.verdict if isinstance(a, JudgeAnswer) else "invalid" for a in answers)
    votes = dict(counted)
    failures = [a for a in answers if isinstance(a, str)]
    winner, count = counted.most_common(1)[0]
    if winner == "invalid" or count * 2 <= len(answers):
        detail = f"; {failures[0]}" if failures else ""
        split = ", ".join(f"{n} {v}" for v, n in sorted(counted.items()))
        reason = f"no majority among {len(answers)} answers ({split}){detail}"
        return JudgeVerdict(None, "", [], reason, votes)
    chosen = [a for a in answers if isinstance(a, JudgeAnswer) and a.verdict == winner]
    return JudgeVerdict(winner, chosen[0].rationale, chosen[0].evidence, "", votes)  # type: ignore[arg-type]

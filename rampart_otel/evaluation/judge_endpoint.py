"""The judge's endpoint: any OpenAI-compatible chat-completions server, with samples and a
vote, a concurrency bound, retries within one deadline, and a cache.

Nothing here decides a verdict's polarity or coverage: ``evaluators.judge`` asks a question
over text it has shown to be captured, and this module answers yes, no, not applicable, or
None with the reason it could not get a valid answer (``unavailable`` when failed or
out-of-format answers are why).

Each check's requests run against one deadline, ``timeout * (retries + 1)`` seconds from
when the check asks: connecting, sending, reading, every retry and any ``Retry-After`` wait
included (``bounded_http`` enforces it on the socket). Each try also ends within ``timeout``.
An answer is read as a stream and refused past ``MAX_ANSWER_BYTES``; a redirect is a
failure naming its ``Location``, never followed; an answer out of format (not JSON, not a
chat completion, content that is not the verdict schema) is a counted failure.
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

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    ValidationError,
)

from rampart_otel import __version__
from rampart_otel.bounded_http import (
    MAX_ANSWER_BYTES,
    AnswerTooLarge,
    DeadlineExceeded,
    HttpAnswer,
    HttpFailure,
    RedirectRefused,
    post,
    retry_after,
)
from rampart_otel.errors import Unavailable
from rampart_otel.evaluation.judge_config import JudgeConfig
from rampart_otel.evaluation.judge_prompt import SYSTEM_PROMPT, user_message
from rampart_otel.render import safe_text
from rampart_otel.secret_values import redact_credentials

__all__ = [
    "MAX_ANSWER_BYTES",
    "JudgeAnswer",
    "JudgeClient",
    "JudgeConfig",
    "JudgeStats",
    "JudgeUnavailable",
    "JudgeVerdict",
]

Verdict = Literal["yes", "no", "not_applicable"]
DEFAULT_CACHE = Path.home() / ".cache" / "rampart-otel" / "judge.sqlite"
RETRIED = frozenset({408, 409, 429})  # and every 5xx: worth another try
BACKOFF_FIRST, BACKOFF_MOST = 0.5, 8.0  # seconds before the first retry, doubling up to this

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


class JudgeUnavailable(Unavailable):
    """The judge could not give a valid answer (unreachable, HTTP error, out of format) and
    the policy did not say that this means UNDETERMINED: the check's result is ERROR."""


class JudgeAnswer(BaseModel):
    """One sample's answer, as the schema asks for it."""

    model_config = ConfigDict(extra="ignore")

    verdict: Verdict
    rationale: str = ""
    evidence: list[str] = []


class _Message(BaseModel):
    content: StrictStr


class _Choice(BaseModel):
    message: _Message


class _Usage(BaseModel):
    prompt_tokens: StrictInt = Field(default=0, ge=0)
    completion_tokens: StrictInt = Field(default=0, ge=0)


class _Completion(BaseModel):
    """The parts of a chat completion we read; anything else in it is ignored."""

    choices: list[_Choice] = Field(min_length=1)
    usage: _Usage | None = None


@dataclass(slots=True)
class JudgeVerdict:
    """The vote over the samples: ``verdict`` None when there was no strict majority;
    ``unavailable`` when failed or out-of-format answers are why."""

    verdict: Verdict | None
    rationale: str
    evidence: list[str]
    reason: str = ""  # why there is no verdict
    votes: dict[str, int] = field(default_factory=dict)
    unavailable: bool = False


@dataclass(slots=True)
class JudgeStats:
    calls: int = 0  # requests the endpoint answered with a 2xx (retries not counted)
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
        self._cache: sqlite3.Connection | None = None
        self._cache_pid = -1

    # -- asking ------------------------------------------------------------------------

    def ask(self, question: str, what: str, text: str) -> JudgeVerdict:
        """The vote of ``samples`` answers to ``question`` about ``text`` (``what`` it is),
        all asked within the check's deadline."""
        deadline = time.monotonic() + self.config.deadline_seconds
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": user_message(question, what, text)},
        ]
        samples = self.config.samples
        if samples == 1:
            answers = [self._sample(messages, 0, deadline)]
        else:
            with ThreadPoolExecutor(max_workers=min(samples, self.config.max_concurrency)) as pool:
                answers = list(
                    pool.map(lambda i: self._sample(messages, i, deadline), range(samples))
                )
        return vote(answers)

    def _sample(
        self, messages: list[dict[str, str]], index: int, deadline: float
    ) -> JudgeAnswer | str:
        key = self._key(messages, index)
        cached = self._cached(key)
        if cached is not None:
            with self._lock:
                self.stats.cache_hits += 1
            return cached
        if not self._gate.acquire(timeout=max(deadline - time.monotonic(), 0.0)):
            return self._failed(f"{self._deadline()} passed waiting for a free request slot")
        try:
            answer = self._request(messages, deadline)
        finally:
            self._gate.release()
        if isinstance(answer, JudgeAnswer):
            self._store(key, answer)
        return answer

    def _request(self, messages: list[dict[str, str]], deadline: float) -> JudgeAnswer | str:
        """One sample: tries until an answer, a failure not worth retrying, ``retries``
        retries, or the deadline."""
        config = self.config
        url = config.base_url.rstrip("/") + "/chat/completions"
        body = json.dumps(
            {
                "model": config.model,
                "messages": messages,
                "temperature": config.temperature,
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "verdict", "strict": True, "schema": ANSWER_SCHEMA},
                },
            }
        ).encode()
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"rampart-otel/{__version__}",
        }
        if config.api_key_env is not None:
            key = os.environ.get(config.api_key_env, "")
            if not key:
                return self._failed(f"the variable {config.api_key_env} holding the key is unset")
            headers["Authorization"] = f"Bearer {key}"
        tries = 0
        while True:
            tries += 1
            limit = min(config.timeout, deadline - time.monotonic())  # this try's share
            wait: float | None = None
            try:
                answer = post(url, body, headers, deadline=time.monotonic() + limit)
            except RedirectRefused as error:
                return self._failed(f"the judge answered {error}")
            except AnswerTooLarge as error:
                return self._failed(f"the judge sent {error}")
            except DeadlineExceeded:
                if limit >= config.timeout - 0.05:  # the try had its whole timeout
                    failure = f"the judge timed out after {config.timeout:g} s"
                else:
                    failure = f"the judge did not answer before {self._deadline()}"
            except HttpFailure as error:
                failure = f"the judge could not be reached ({error})"
            else:
                if answer.ok:
                    return self._read(answer.body)
                failure = f"the judge answered HTTP {answer.status}{_said(answer)}"
                if answer.status not in RETRIED and answer.status < 500:
                    return self._failed(failure)
                wait = retry_after(answer.headers)
            if tries > config.retries:
                return self._failed(failure)
            if wait is None:
                wait = min(BACKOFF_FIRST * 2 ** (tries - 1), BACKOFF_MOST)
            if time.monotonic() + wait >= deadline:
                late = f"a retry in {wait:g} s would pass {self._deadline()}"
                return self._failed(f"{failure}; {late}")
            time.sleep(wait)

    def _read(self, body: bytes) -> JudgeAnswer | str:
        """The verdict in a 2xx body; every other shape is out of format, and counted."""
        with self._lock:
            self.stats.calls += 1
        try:
            completion = _Completion.model_validate_json(body)
        except ValidationError as error:
            return self._failed(f"the judge answered out of format ({_first(error)})")
        if completion.usage is not None:
            with self._lock:
                self.stats.prompt_tokens += completion.usage.prompt_tokens
                self.stats.completion_tokens += completion.usage.completion_tokens
        try:
            answer = JudgeAnswer.model_validate_json(completion.choices[0].message.content)
        except ValidationError as error:
            return self._failed(f"the judge answered out of format (content: {_first(error)})")
        return answer.model_copy(
            update={
                "rationale": self._redacted(answer.rationale),
                "evidence": [self._redacted(quote) for quote in answer.evidence],
            }
        )

    def _deadline(self) -> str:
        seconds = self.config.deadline_seconds
        return f"the check's deadline of {seconds:g} s (timeout * (retries + 1))"

    def _failed(self, reason: str) -> str:
        with self._lock:
            self.stats.failures += 1
        return self._redacted(reason)

    def _redacted(self, text: str) -> str:
        """Text the endpoint returned (or that quotes it), without the key we sent it or any
        bearer token, before it reaches a reason, a report or a log."""
        name = self.config.api_key_env
        key = os.environ.get(name, "") if name is not None else ""
        return redact_credentials(text, (key,) if key else ())

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
    that leave no majority, give no verdict (``unavailable`` when there were failures: they
    could have made a majority)."""
    counted = Counter(a.verdict if isinstance(a, JudgeAnswer) else "invalid" for a in answers)
    votes = dict(counted)
    failures = [a for a in answers if isinstance(a, str)]
    winner, count = counted.most_common(1)[0]
    if winner == "invalid" or count * 2 <= len(answers):
        detail = f"; {failures[0]}" if failures else ""
        split = ", ".join(f"{n} {v}" for v, n in sorted(counted.items()))
        reason = f"no majority among {len(answers)} answers ({split}){detail}"
        if len(failures) == len(answers):  # none answered: the failure is the whole story
            more = f" (and {len(failures) - 1} more failures)" if len(failures) > 1 else ""
            reason = f"{failures[0]}{more}"
        return JudgeVerdict(None, "", [], reason, votes, unavailable=bool(failures))
    chosen = [a for a in answers if isinstance(a, JudgeAnswer) and a.verdict == winner]
    return JudgeVerdict(winner, chosen[0].rationale, chosen[0].evidence, "", votes)  # type: ignore[arg-type]


def _said(answer: HttpAnswer) -> str:
    """The endpoint's own words about an error, when its body carries them."""
    try:
        data = json.loads(answer.body)
    except ValueError:
        return ""
    error = data.get("error") if isinstance(data, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    if not isinstance(message, str) and isinstance(data, dict):
        message = data.get("message")
    return f": {safe_text(message, 200)}" if isinstance(message, str) and message else ""


def _first(error: ValidationError) -> str:
    """The first schema error, in one short line."""
    first = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"])
    return safe_text(f"{where}: {first['msg']}" if where else first["msg"], 160)

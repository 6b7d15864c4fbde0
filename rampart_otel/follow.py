"""``score STORE --follow``: score a trace store's new traces as they come, round after
round, from a stored resume point: the collector's continuous scoring, for those who do not
run the collector (their agents send to Phoenix or MLflow only).

Each round reads the traces that *started* in ``[since, now - settle)`` (``settle``: time
for a trace to finish and for the store to take it in) and scores them
(``score_round``: the command's own scoring and sinks, ``--annotate`` included); once the
round is done its end is the next round's ``since``, kept in a state file, so a follow
stopped and started again goes on where it stopped, and reads no trace twice. A round that
fails (the store down) is tried again after ``poll`` seconds, from the same point.

A trace that reaches the store more than ``settle`` after it started is not read (its
window was read already): give ``settle`` the store's usual lag and the agents' longest run.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from rampart_otel.errors import UserError
from rampart_otel.receivers.stores import with_window
from rampart_otel.render import safe_text

STATE_SCHEMA = "rampart-otel/follow@1"


def state_file(url: str) -> Path:
    """Where ``--follow`` keeps its resume point for ``url`` by default:
    ``$XDG_STATE_HOME/rampart-otel/follow/<hash of the URL>.json``."""
    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local/state")
    name = hashlib.sha256(url.split("?")[0].encode()).hexdigest()[:16]
    return base / "rampart-otel" / "follow" / f"{name}.json"


def load_resume_point(path: Path, url: str) -> datetime | None:
    """The stored resume point for ``url``; None when there is none yet. A state file of
    another store, or not ours, is a :class:`UserError` (never overwritten)."""
    try:
        with path.open("rb") as file:
            raw = file.read(64 * 1024)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise UserError(f"--state {path}: {error.strerror or error}") from None
    try:
        state = json.loads(raw)
        if state.get("schema") != STATE_SCHEMA:
            raise ValueError
        since = datetime.fromisoformat(state["since"])
        store = state["url"]
    except (ValueError, KeyError, TypeError, AttributeError):
        raise UserError(f"--state {path}: not a --follow state file (left as it is)") from None
    if store != url.split("?")[0]:
        raise UserError(
            f"--state {path}: the resume point of {safe_text(store, 200)}, not this store"
        )
    return since if since.tzinfo else since.replace(tzinfo=UTC)


def save_resume_point(path: Path, url: str, since: datetime) -> None:
    """Write the resume point, whole or not at all (a temporary file renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {"schema": STATE_SCHEMA, "url": url.split("?")[0], "since": since.isoformat()}
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with temporary.open("w", encoding="utf-8") as file:
        json.dump(state, file)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)


def follow(
    url: str,
    score_round: Callable[[str], None],
    *,
    state: Path,
    since: datetime | None,
    poll: float,
    settle: float,
    on_failure: Callable[[str], None],
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
    rounds: int | None = None,
) -> None:
    """Score ``url``'s traces round after round (``rounds``: that many, for tests; else
    until interrupted). ``since``: where to start when ``state`` holds no resume point
    (None: the store's first trace)."""
    resume = load_resume_point(state, url)
    if resume is not None:
        since = resume
    done = 0
    while rounds is None or done < rounds:
        until = datetime.fromtimestamp(clock() - settle, UTC)
        if since is None or until > since:
            try:
                score_round(with_window(url, since=since, until=until, limit=None))
            except UserError as error:  # the store down, a page it refused: the same again
                on_failure(str(error))
            else:
                save_resume_point(state, url, until)
                since = until
        done += 1
        if rounds is None or done < rounds:
            sleep(poll)

"""``score STORE --follow``: rounds over a store's new traces from a stored resume point
(the command itself against a stand-in store: tests/receivers/stores/test_answers.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from rampart_otel.errors import UserError
from rampart_otel.follow import follow, load_resume_point, save_resume_point, state_file
from rampart_otel.receivers.stores import TraceStoreError

URL = "phoenix://127.0.0.1:6006/default"
START = 1_800_000_000.0


def _window(url: str) -> tuple[str | None, str | None]:
    query = parse_qs(urlsplit(url).query)
    return query.get("since", [None])[0], query.get("until", [None])[0]


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat()


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_rounds_read_each_window_once_and_a_restart_goes_on_where_it_stopped(
    tmp_path: Path,
) -> None:
    clock, windows = Clock(), []
    state = tmp_path / "state.json"
    run = dict(state=state, poll=30, settle=60, on_failure=pytest.fail, clock=clock)
    follow(URL, windows.append, since=None, sleep=clock.sleep, rounds=3, **run)  # type: ignore[arg-type]
    assert [_window(w) for w in windows] == [
        (None, _iso(START - 60)),
        (_iso(START - 60), _iso(START - 30)),
        (_iso(START - 30), _iso(START)),
    ]
    assert load_resume_point(state, URL) == datetime.fromtimestamp(START, UTC)
    # Stopped, then started again an hour later: from the resume point, not --since.
    clock.now += 3600
    again: list[str] = []
    follow(URL, again.append, since=datetime(2000, 1, 1, tzinfo=UTC), sleep=clock.sleep,
           rounds=1, **run)  # type: ignore[arg-type]  # fmt: skip
    assert [_window(w) for w in again] == [(_iso(START), _iso(clock.now - 60))]


def test_a_failed_round_is_tried_again_from_the_same_point(tmp_path: Path) -> None:
    clock, windows, failures = Clock(), [], []
    state = tmp_path / "state.json"

    def score_round(url: str) -> None:
        windows.append(url)
        if len(windows) == 1:
            raise TraceStoreError("phoenix://127.0.0.1:6006/default: Phoenix at ...: refused")

    follow(
        URL, score_round, state=state, since=None, poll=30, settle=60,
        on_failure=failures.append, clock=clock, sleep=clock.sleep, rounds=2,
    )  # fmt: skip
    assert len(failures) == 1 and "refused" in failures[0]
    assert _window(windows[1])[0] is None  # the failed round's window again, wider
    assert load_resume_point(state, URL) is not None


def test_a_state_file_that_is_not_ours_or_of_another_store_is_refused_and_kept(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state.json"
    state.write_text("my notes")
    with pytest.raises(UserError, match="not a --follow state file"):
        load_resume_point(state, URL)
    assert state.read_text() == "my notes"
    save_resume_point(state, "mlflow://127.0.0.1:5000/agents", datetime.now(UTC))
    with pytest.raises(UserError, match="the resume point of mlflow://"):
        load_resume_point(state, URL)
    assert json.loads(state.read_text())["schema"] == "rampart-otel/follow@1"


def test_the_default_state_file_is_per_store_under_the_state_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    one = state_file(URL)
    assert one.parent == tmp_path / "rampart-otel/follow"
    assert one == state_file(URL + "?since=2026-01-01")  # the window is not the store
    assert one != state_file("phoenix://127.0.0.1:6006/other")

"""The collector's scorer process at shutdown (``collector.service.ScorerProcess.drain``),
on a stand-in for the process: what it waits for and what it says."""

from __future__ import annotations

import logging
import threading

import pytest

from rampart_otel.collector.service import ScorerProcess


class _SlowExit:
    """A process that has finished its work and needs ``exit_after`` seconds of joining to
    end (an interpreter's teardown waiting for CPU); no time passes for real."""

    def __init__(self, exit_after: float) -> None:
        self.exit_after = exit_after
        self.joined = 0.0
        self.killed = False

    def is_alive(self) -> bool:
        return not self.killed and self.joined < self.exit_after

    def join(self, timeout: float | None = None) -> None:
        self.joined += timeout or 0.0

    def kill(self) -> None:
        self.killed = True


class _Conn:
    def send(self, message: object) -> None:
        pass


def _drained_scorer(process: _SlowExit) -> ScorerProcess:
    scorer = ScorerProcess.__new__(ScorerProcess)
    scorer.stopping = False
    scorer.process = process  # type: ignore[assignment]
    scorer.conn = _Conn()  # type: ignore[assignment]
    scorer._drained = threading.Event()
    scorer._drained.set()  # it reported that it scored everything
    scorer._drained_ok = True
    return scorer


def test_a_finished_scorer_slow_to_exit_gets_the_rest_of_the_timeout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    process = _SlowExit(exit_after=12)
    with caplog.at_level(logging.ERROR):
        assert _drained_scorer(process).drain(timeout=30) is True
    assert not process.killed
    assert caplog.records == []  # it finished: no line says it did not


def test_one_that_never_exits_is_stopped_with_a_line_that_says_it_finished(
    caplog: pytest.LogCaptureFixture,
) -> None:
    process = _SlowExit(exit_after=float("inf"))
    with caplog.at_level(logging.ERROR):
        assert _drained_scorer(process).drain(timeout=30) is True
    assert process.killed
    (record,) = caplog.records
    assert record.getMessage() == "scorer finished but did not exit in 30s; stopping it"

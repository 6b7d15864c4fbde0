"""The collector's outbox: what waits to be written back or alerted, on disk until delivered."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from rampart_otel.storage.outbox import Item, Outbox


def _item(key: str, revision: int = 0, target: str = "annotate", body: str = "x") -> Item:
    return Item(target, key, revision, body.encode())


def test_an_item_waits_until_delivered_and_survives_a_reopen(tmp_path: Path) -> None:
    outbox = Outbox(tmp_path)
    assert outbox.enqueue([_item("run-1"), _item("run-2")]) == 0
    outbox.close()
    again = Outbox(tmp_path)  # a restarted collector finds them
    due = again.due("annotate", time.time())
    assert [(d.key, d.payload) for d in due] == [("run-1", b"x"), ("run-2", b"x")]
    again.delivered("annotate", due[0])
    assert [d.key for d in again.due("annotate", time.time())] == ["run-2"]
    assert again.counts("annotate") == {"queued": 2, "delivered": 1, "failures": 0, "dropped": 0}
    assert stat.S_IMODE(os.stat(tmp_path / "outbox.db").st_mode) == 0o600


def test_a_later_revision_replaces_the_one_waiting_and_an_older_is_not_queued(
    tmp_path: Path,
) -> None:
    outbox = Outbox(tmp_path)
    outbox.enqueue([_item("run-1", 0, body="first")])
    outbox.enqueue([_item("run-1", 2, body="third")])
    outbox.enqueue([_item("run-1", 1, body="second")])  # late: older than the one waiting
    (due,) = outbox.due("annotate", time.time())
    assert (due.revision, due.payload) == (2, b"third")
    outbox.delivered("annotate", due)
    outbox.enqueue([_item("run-1", 2, body="again")])  # queued again after a crash
    assert outbox.due("annotate", time.time()) == []
    outbox.enqueue([_item("run-1", 3, body="fourth")])  # a newer revision is written
    assert [d.payload for d in outbox.due("annotate", time.time())] == [b"fourth"]


def test_a_revision_replaced_while_it_was_being_delivered_still_waits(tmp_path: Path) -> None:
    outbox = Outbox(tmp_path)
    outbox.enqueue([_item("run-1", 0, body="old")])
    (taken,) = outbox.due("annotate", time.time())
    outbox.enqueue([_item("run-1", 1, body="new")])  # the scorer, meanwhile
    outbox.delivered("annotate", taken)
    assert [(d.revision, d.payload) for d in outbox.due("annotate", time.time())] == [(1, b"new")]


def test_a_once_target_delivers_a_key_at_most_once_ever(tmp_path: Path) -> None:
    outbox = Outbox(tmp_path)
    once = ("alert",)
    outbox.enqueue([_item("run-1|p@1|c", 0, "alert")], once=once)
    outbox.enqueue([_item("run-1|p@1|c", 1, "alert")], once=once)  # the run's next revision
    (due,) = outbox.due("alert", time.time())
    assert due.revision == 0  # the first stays: the alert is about the run, not a revision
    outbox.delivered("alert", due)
    outbox.enqueue([_item("run-1|p@1|c", 2, "alert")], once=once)
    assert outbox.due("alert", time.time()) == []


def test_retries_wait_their_time_and_a_down_receiver_holds_every_item(tmp_path: Path) -> None:
    outbox = Outbox(tmp_path)
    outbox.enqueue([_item("a"), _item("b")])
    now = time.time()
    first, _ = outbox.due("annotate", now)
    outbox.retry("annotate", first, "HTTP 503", now + 30)
    assert [d.key for d in outbox.due("annotate", now)] == ["b"]
    outbox.postpone("annotate", now + 30)
    assert outbox.due("annotate", now) == []
    assert outbox.next_due("annotate") is not None
    (again, _) = outbox.due("annotate", now + 31)
    assert (again.key, again.attempts) == ("a", 1)
    assert outbox.counts("annotate")["failures"] == 1
    assert outbox.oldest_seconds("annotate", now + 60) >= 59


def test_the_queue_is_bounded_and_counts_what_it_refused(tmp_path: Path) -> None:
    outbox = Outbox(tmp_path, max_pending=2)
    assert outbox.enqueue([_item("a"), _item("b"), _item("c")]) == 1
    assert outbox.pending_count("annotate") == 2
    assert outbox.enqueue([_item("x", target="alert")]) == 0  # each target its own bound
    assert outbox.counts("annotate")["dropped"] == 1
    (first, _) = outbox.due("annotate", time.time())
    outbox.give_up("annotate", first, "too old")
    assert outbox.counts("annotate")["dropped"] == 2
    assert outbox.pending_count("annotate") == 1


def test_an_outbox_that_cannot_be_opened_is_one_line(tmp_path: Path) -> None:
    import pytest

    from rampart_otel.errors import StoreError

    (tmp_path / "outbox.db").mkdir()  # a directory where the file goes
    with pytest.raises(StoreError, match="cannot open the outbox"):
        Outbox(tmp_path)

"""``report_output``: the one rule for a report's ``-o PATH`` (the CLI's tests drive it with
symlinks, FIFOs, devices and directories; these the cases a command line cannot set up)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from rampart_otel.errors import UsageError
from rampart_otel.exporters.output import report_output


def test_a_report_appears_whole_or_not_at_all(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    report.write_text("old")
    with report_output(report) as out:
        out.write("new")
        out.flush()
        assert report.read_text() == "old"  # written aside until complete
    assert report.read_text() == "new"
    with pytest.raises(RuntimeError), report_output(report) as out:
        out.write("half")
        raise RuntimeError("the scorer failed")
    assert report.read_text() == "new"
    assert os.listdir(tmp_path) == ["report.json"]


def test_a_dangling_symlink_creates_its_target_and_stays_a_link(tmp_path: Path) -> None:
    link = tmp_path / "latest"
    link.symlink_to(tmp_path / "reports" / "today.json")
    (tmp_path / "reports").mkdir()
    with report_output(link) as out:
        out.write("report")
    assert link.is_symlink()
    assert (tmp_path / "reports" / "today.json").read_text() == "report"


def test_a_chain_of_links_to_a_fifo_is_written_straight_into(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "one").symlink_to("fifo")
    (tmp_path / "two").symlink_to(tmp_path / "one")
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # so opening for writing does not wait
    try:
        with report_output(tmp_path / "two") as out:
            out.write("through two links")
        assert os.read(reader, 100) == b"through two links"
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and (tmp_path / "one").is_symlink()


def test_a_descriptor_path_is_written_straight_into(tmp_path: Path) -> None:
    # /dev/stdout is a link to /proc/self/fd/1: the same rule as /dev/fd/N.
    read_end, write_end = os.pipe()
    try:
        with report_output(Path(f"/dev/fd/{write_end}")) as out:
            out.write("to the pipe")
        assert os.read(read_end, 100) == b"to the pipe"
    finally:
        os.close(read_end)
        os.close(write_end)


def test_a_lone_surrogate_is_written_as_the_replacement_character(tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    with report_output(report) as out:
        out.write("a\udfffb\x00c")
    assert report.read_bytes() == "a\ufffdb\x00c".encode()


@pytest.mark.parametrize("case", ["link loop", "no directory"])
def test_what_cannot_be_written_is_a_usage_error(tmp_path: Path, case: str) -> None:
    if case == "link loop":
        path = tmp_path / "a"
        path.symlink_to("b")
        (tmp_path / "b").symlink_to("a")
    else:
        path = tmp_path / "missing" / "report.json"
    with pytest.raises(UsageError, match=f"^{path}: "), report_output(path):
        pass


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_write_that_fails_is_a_usage_error_naming_the_output() -> None:
    # /dev/full: every write fails with ENOSPC, as on a full disk; the user's to fix.
    with (
        pytest.raises(UsageError, match=r"^/dev/full: cannot write: no space left on device$"),
        report_output(Path("/dev/full")) as out,
    ):
        out.write("x" * 100_000)

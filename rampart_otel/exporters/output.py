"""Where a report goes: the one rule for ``-o PATH``, used by every command that writes one.

What ``PATH`` already is decides how it is written, so a report never replaces what it
does not own:

- a regular file, or nothing yet: written beside it (``.NAME.partial``), then renamed over
  it, so it appears complete or not at all; an existing file keeps its permissions;
- a symbolic link: written *through*, to its target, by the rule for what the target is
  (the link stays a link; a dangling link's target is created);
- a FIFO, a character device (``/dev/null``, a terminal) or one of this process's own
  descriptors (``/dev/stdout``, ``/dev/fd/N``): opened and written straight into, no
  temporary file, no rename;
- anything else (a directory, a socket, a block device): refused with a one-line error;
- one of the files the command reads (``score run.jsonl -o run.jsonl``, or a link to it;
  ``audit``'s data directory): refused with a one-line error, before anything is read.

Text is UTF-8; a character that cannot be encoded (a lone surrogate trace data can carry)
is written as U+FFFD rather than failing the report (``render.OUTPUT_ERRORS``). A write that
fails (a full disk, a file size limit, an I/O error) is a one-line error naming the output,
for a report file and for standard output alike (``standard_output``); a regular file keeps
what it held.
"""

from __future__ import annotations

import io
import os
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from rampart_otel.errors import UsageError
from rampart_otel.render import OUTPUT_ERRORS

__all__ = ["report_output", "standard_output"]

_MAX_LINKS = 40  # as the kernel's own limit on a chain of symbolic links
# Magic links to a process's open descriptors: writing means writing to that descriptor.
_DESCRIPTOR_DIRS = ("/proc/", "/dev/fd/")
_REFUSED = {
    stat.S_IFDIR: "a directory",
    stat.S_IFSOCK: "a socket",
    stat.S_IFBLK: "a block device",
}


@contextmanager
def report_output(
    path: Path | None,
    inputs: Iterable[str | Path] = (),
    inputs_are: str = "an input trace file",
    what: str = "report",
) -> Iterator[IO[str]]:
    """stdout, or ``path`` written by the rule above; the file is closed on leaving.
    ``inputs``: the paths the command reads (files among them are never written), each
    ``inputs_are`` (what the error calls it); ``what`` is written (``report``, ``policy``)."""
    if path is None:
        yield sys.stdout
        return
    for source in inputs:
        if _same_file(source, path):
            raise UsageError(f"{path}: is {inputs_are}; give another path for the {what}")
    target, descriptor = _follow(Path(path))
    try:
        mode = None if descriptor else os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as error:
        raise UsageError(f"{path}: cannot write: {_reason(error)}") from None
    if descriptor or (mode is not None and (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode))):
        with _open(path, lambda: _text(_Checked(path, path))) as out:
            yield out
        return
    if mode is not None and not stat.S_ISREG(mode):
        kind = _REFUSED.get(stat.S_IFMT(mode), "not a regular file")
        raise UsageError(f"{path}: is {kind}; give a file to write the {what} to")
    with _atomic(path, target, mode) as out:
        yield out


def standard_output(stdout: io.TextIOWrapper) -> IO[str]:
    """A text stream onto ``stdout``'s descriptor, as it is set up (encoding, buffering),
    whose failed writes are one-line errors naming standard output (``stdout`` itself stays
    open: ``sys.__stdout__`` holds it). A stream with no descriptor of its own (a test
    runner's) is kept, made to write what it cannot encode as U+FFFD."""
    try:
        stdout.flush()
        raw = _Checked(stdout.fileno(), "standard output", closefd=False)
    except (OSError, ValueError):  # io.UnsupportedOperation is both
        stdout.reconfigure(errors=OUTPUT_ERRORS)
        return stdout
    return io.TextIOWrapper(
        io.BufferedWriter(raw),
        encoding=stdout.encoding,
        errors=OUTPUT_ERRORS,
        line_buffering=stdout.line_buffering,
        write_through=stdout.write_through,
    )


class _Checked(io.FileIO):
    """A file whose first failed write is a ``UsageError`` naming it (``shown``); what is
    written after it is dropped (the output is lost and said so once: the flush on closing,
    or at exit, must not say it again). A closed reader (EPIPE) stays a
    ``BrokenPipeError``, which the CLI ends on quietly."""

    def __init__(self, file: int | Path, shown: object, **kwargs: object) -> None:
        super().__init__(file, "w", **kwargs)  # type: ignore[arg-type]
        self.shown = shown
        self.failed = False

    def write(self, data: Any) -> int:
        if self.failed:
            return len(data)
        try:
            return super().write(data) or 0
        except BrokenPipeError:
            raise
        except OSError as error:
            self.failed = True
            raise UsageError(f"{self.shown}: cannot write: {_reason(error)}") from None


def _text(raw: io.FileIO) -> IO[str]:
    return io.TextIOWrapper(io.BufferedWriter(raw), encoding="utf-8", errors=OUTPUT_ERRORS)


def _same_file(source: str | Path, path: Path) -> bool:
    try:
        return os.path.isfile(source) and os.path.samefile(source, path)
    except (OSError, ValueError):  # not there (yet), or a trace store's URL
        return False


def _follow(path: Path) -> tuple[Path, bool]:
    """The path a chain of symbolic links ends at, and whether it is a process's descriptor."""
    current = path
    for _ in range(_MAX_LINKS):
        if str(current).startswith(_DESCRIPTOR_DIRS):
            return current, True
        try:
            link = os.readlink(current)
        except OSError:  # not a link (or not there): the end of the chain
            return current, False
        current = current.parent / link  # an absolute link replaces the parent
    raise UsageError(f"{path}: too many levels of symbolic links")


@contextmanager
def _atomic(path: Path, target: Path, mode: int | None) -> Iterator[IO[str]]:
    """``target`` written aside, then renamed over it (``path`` is what errors name)."""
    partial = target.with_name(f".{target.name}.partial")

    def create() -> IO[str]:
        partial.unlink(missing_ok=True)  # a crashed run's, or anything planted there
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
        if mode is not None:
            os.fchmod(fd, stat.S_IMODE(mode))
        return _text(_Checked(fd, path))

    try:
        with _open(path, create) as out:
            yield out
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


@contextmanager
def _open(path: Path, opener: Callable[[], IO[str]]) -> Iterator[IO[str]]:
    try:
        out = opener()
    except OSError as error:
        raise UsageError(f"{path}: cannot write: {_reason(error)}") from None
    with out:
        yield out


def _reason(error: OSError) -> str:
    return error.strerror.lower() if error.strerror else str(error)

"""Retention for the data directory: delete whole old segments, never data not yet scored.

The scorer's checkpoint (in ``results.db``, committed with the results it covers) is the
first record of the oldest trace still open at its last commit, or its read position.
Every segment *before* the checkpoint's segment has been read and each trace in it scored,
and a restart reads from the checkpoint on: deleting those loses no verdict and no span
the scorer still needs. The checkpoint's segment and every later one -- the one being
written included -- are kept whatever the limits say; retention then reports how far
over ``max_bytes`` that leaves the directory. With no checkpoint (nothing scored yet, or
no policy at all) nothing is deleted.

Age: a segment is old once its last write (mtime) is older than ``max_age``. Size: the
oldest deletable segments go until all segments fit in ``max_bytes``. Deletion is oldest
first, so the segments left are always a contiguous run, as the scorer expects.
``results.db`` is never touched: verdicts outlive the spans they were given on.
"""

from __future__ import annotations

import contextlib
import logging
import re
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from rampart_otel.lazy_regex import LazyPattern
from rampart_otel.storage.pg_results import DEFAULT_INSTANCE
from rampart_otel.storage.pg_results import checkpoint_segment as pg_checkpoint_segment
from rampart_otel.storage.segments import fsync_dir, list_segments

log = logging.getLogger(__name__)

_DURATION = LazyPattern(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$", re.IGNORECASE)
_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_SIZE = LazyPattern(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)\s*$", re.IGNORECASE)
_POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4}


def parse_duration(value: object) -> float | None:
    """Seconds from a number or ``90s``, ``30m``, ``12h``, ``7d``, ``2w``; None stays None."""
    if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
        return _non_negative(value)
    match = _DURATION.match(str(value))
    if not match:
        raise ValueError(f"expected seconds or a duration like 12h, 7d, 2w; got {value!r}")
    return float(match[1]) * _SECONDS[match[2].lower()]


def parse_size(value: object) -> int | None:
    """Bytes from a number or ``500MB``, ``10GiB``, ``2T``; None stays None."""
    if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
        size = _non_negative(value)
        return None if size is None else int(size)
    match = _SIZE.match(str(value))
    if not match:
        raise ValueError(f"expected bytes or a size like 500MB, 10GiB; got {value!r}")
    unit = match[2].lower().rstrip("b")
    base = 1024 if unit.endswith("i") else 1000
    return int(float(match[1]) * base ** _POWERS[unit.rstrip("i")])


def _non_negative(value: object) -> float | None:
    if value is None:
        return None
    number = float(value)  # type: ignore[arg-type]
    if number < 0:
        raise ValueError("must not be negative")
    return number


def checkpoint_segment(results_db: Path) -> int | None:
    """The segment the scorer resumes from, per ``results.db``; None if it has none yet."""
    if not results_db.is_file():
        return None
    try:
        db = sqlite3.connect(f"file:{results_db}?mode=ro", uri=True)
    except sqlite3.Error:
        return None
    try:
        db.execute("PRAGMA busy_timeout=5000")
        row = db.execute("SELECT segment FROM checkpoint WHERE id = 1").fetchone()
    except sqlite3.Error:  # not created yet
        return None
    finally:
        db.close()
    return int(row[0]) if row else None


@dataclass(slots=True)
class Pass:
    """What one retention pass did."""

    deleted: list[Path] = field(default_factory=list)
    freed_bytes: int = 0
    kept_bytes: int = 0  # segments left, in bytes
    over_by_unscored: int = 0  # bytes over max_bytes that only unscored segments hold


def apply_retention(
    segments_dir: Path,
    keep_from: int | None,
    max_age: float | None,
    max_bytes: int | None,
    *,
    now: float | None = None,
) -> Pass:
    """Delete segments numbered below ``keep_from`` that are too old or over the size limit."""
    now = time.time() if now is None else now
    segments = []
    for seq, path in list_segments(segments_dir):
        with contextlib.suppress(FileNotFoundError):
            st = path.stat()
            segments.append((seq, path, st.st_size, st.st_mtime))
    result = Pass(kept_bytes=sum(size for _, _, size, _ in segments))
    for seq, path, size, mtime in segments:  # oldest first
        if keep_from is None or seq >= keep_from:
            break  # this one, and all after it, may hold data not yet scored
        too_old = max_age is not None and now - mtime > max_age
        too_big = max_bytes is not None and result.kept_bytes > max_bytes
        if not (too_old or too_big):
            break  # keep a contiguous run: a younger segment never goes before an older one
        try:
            path.unlink(missing_ok=True)
        except OSError as error:
            log.error("retention: cannot delete %s: %s", path, error.strerror or error)
            break
        result.deleted.append(path)
        result.freed_bytes += size
        result.kept_bytes -= size
    if result.deleted:
        with contextlib.suppress(OSError):
            fsync_dir(segments_dir)
    if max_bytes is not None and result.kept_bytes > max_bytes:
        result.over_by_unscored = result.kept_bytes - max_bytes
    return result


class Retention:
    """Runs passes for one data directory and keeps the totals ``/metrics`` shows."""

    def __init__(
        self,
        data_dir: Path,
        max_age: float | None,
        max_bytes: int | None,
        *,
        results_url: str | None = None,
        instance: str = DEFAULT_INSTANCE,
    ) -> None:
        self.segments_dir = data_dir / "segments"
        self.results_db = data_dir / "results.db"
        self.results_url = results_url  # the shared store holding this collector's checkpoint
        self.instance = instance
        self.max_age = max_age
        self.max_bytes = max_bytes
        self.segments_deleted = 0
        self.bytes_deleted = 0
        self.segments_bytes = 0
        self.over_by_unscored = 0
        self._warned = False

    def run(self, writing: int) -> Pass:
        """One pass; ``writing`` is the segment the writer appends to (never deleted)."""
        if self.results_url is None:
            checkpoint = checkpoint_segment(self.results_db)
        else:
            checkpoint = pg_checkpoint_segment(self.results_url, self.instance)
        keep_from = None if checkpoint is None else min(checkpoint, writing)
        result = apply_retention(self.segments_dir, keep_from, self.max_age, self.max_bytes)
        self.segments_deleted += len(result.deleted)
        self.bytes_deleted += result.freed_bytes
        self.segments_bytes = result.kept_bytes
        self.over_by_unscored = result.over_by_unscored
        if result.deleted:
            names = ", ".join(path.name for path in result.deleted)
            log.info("retention: deleted %s (%d bytes)", names, result.freed_bytes)
        if result.over_by_unscored and not self._warned:
            log.warning(
                "retention: segments are %d bytes over max_bytes, but the rest is not scored yet "
                "(scoring lags, or a trace is still open); kept",
                result.over_by_unscored,
            )
        self._warned = bool(result.over_by_unscored)
        return result

"""Complexity guards without a clock: count the work a function does, and compare.

The work is the number of lines of chosen modules that run (``sys.settrace`` line events):
the same count on any machine, under any load. A rule is linear when doubling its input at
most about doubles that count (``grows_linearly``); a quadratic one about quadruples it.
The inputs are ``bench/bench_scale.py``'s shapes, the ones the scale bench scores.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

from rampart_otel.codecs.otlp_json import spans_from_json_bytes
from rampart_otel.model import Span

BENCH = Path(__file__).resolve().parent.parent / "bench"
# Doubling the input may cost this many times the work, at most (issue 46's bound).
PER_DOUBLING = 2.2


def lines_run(work: Callable[[], object], modules: Iterable[ModuleType]) -> int:
    """The lines of ``modules`` that ``work()`` runs (each time a line runs, once)."""
    files = {module.__file__ for module in modules}
    count = 0

    def line(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return line

    def call(frame: FrameType, event: str, arg: Any) -> Any:
        return line if frame.f_code.co_filename in files else None

    before = sys.gettrace()
    sys.settrace(call)
    try:
        work()
    finally:
        sys.settrace(before)
    return count


def growth(
    work_at: Callable[[int], Callable[[], object]], size: int, modules: Iterable[ModuleType]
) -> float:
    """How many times the work of ``work_at(2 * size)`` is that of ``work_at(size)``: the
    input is built first, only the work it returns is counted."""
    modules = list(modules)
    small = lines_run(work_at(size), modules)
    large = lines_run(work_at(2 * size), modules)
    assert small > 0, "the counted modules did no work"
    return large / small


@cache
def _bench_scale() -> ModuleType:
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("bench_scale", BENCH / "bench_scale.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shape_spans(shape: str, size: int) -> list[Span]:
    """``bench_scale``'s ``shape`` at ``size`` spans, decoded as a file of it would be."""
    return [
        span
        for line in _bench_scale().shape_lines(shape, size)
        for span in spans_from_json_bytes(line.encode())
    ]

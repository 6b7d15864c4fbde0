"""bench/ is the judge of speed: its scripts must keep running as the package changes
(bench_score once failed on a renamed ``score()`` argument and no test saw it)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "samples" / "traces" / "openinference-exfil.jsonl"
POLICY = REPO / "samples" / "policy.yaml"


def _bench(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_score_scores_and_walks_every_stage_the_product_runs() -> None:
    bench = _bench("bench_score")
    read = bench.score(SAMPLE, POLICY, 1)
    assert read > 0
    for stage in ("decode", "assemble", "normalize", "evaluate"):
        assert bench.pipeline_prefix(stage)(SAMPLE, POLICY) == read, stage


@pytest.mark.slow
@pytest.mark.e2e  # its processes bind a loopback listener (markers.py cannot see into them)
def test_bench_watch_times_both_workloads(capsys: pytest.CaptureFixture[str]) -> None:
    bench = _bench("bench_watch")
    assert bench.main(["--runs", "2", "--connects", "200", "--repeat", "1"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert [line.split(" (")[0] for line in printed] == ["agent", "connects"]
    assert all("ratio" in line for line in printed)

"""The offline reader's streaming entry points (``pipeline.runs``, ``pipeline.agent_runs``,
README "Python API"): what their ``paths`` may be."""

from __future__ import annotations

from pathlib import Path

import pytest

from rampart_otel.errors import UsageError
from rampart_otel.reading import ReadStats, agent_runs, runs

TRACES = Path(__file__).resolve().parents[1] / "samples" / "traces"
EXFIL = "pydantic-ai-exfil.jsonl"


def test_one_path_given_as_a_string_is_one_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Was read letter by letter, each letter a path: '.' the whole directory (and '/' in
    an absolute path, the whole file system)."""
    monkeypatch.chdir(TRACES)
    expected = [run.run_id for run in runs([EXFIL], ReadStats())]
    assert len(expected) == 1
    for path in (EXFIL, Path(EXFIL)):
        stats = ReadStats()
        assert [run.run_id for run in runs(path, stats)] == expected
        assert stats.errors == []
        assert [run.run_id for run in agent_runs(path, ReadStats())] == expected


@pytest.mark.parametrize("paths", [5, b"pydantic-ai-exfil.jsonl", [None]])
def test_paths_of_the_wrong_type_are_one_usage_error(paths: object) -> None:
    with pytest.raises(UsageError, match=r"^paths: a file, directory or store URL"):
        runs(paths, ReadStats())  # type: ignore[arg-type]

"""The install path docs/deployment.md gives: the built wheel in a fresh venv works on its own.

Builds the wheel from this checkout, installs it (with its dependencies, from whatever
index pip is configured with) into a new virtual environment, and runs the installed
command from outside the checkout: ``--version`` and a ``score`` of one sample file. The
wheel carries ``py.typed``.
About 25 s on the shared CI machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from rampart_otel import __version__

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "samples" / "traces" / "pydantic-ai-exfil.jsonl"
POLICY = REPO / "samples" / "policy.yaml"


def _run(*argv: str | Path, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, cwd=cwd, timeout=timeout, env=env
    )


@pytest.mark.slow
def test_the_built_wheel_installs_into_a_fresh_venv_and_scores(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    built = _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", dist, ".", cwd=REPO)
    assert built.returncode == 0, built.stderr
    (wheel,) = dist.glob("rampart_otel-*.whl")
    with zipfile.ZipFile(wheel) as archive:  # typed for its users' type checkers (PEP 561)
        assert "rampart_otel/py.typed" in archive.namelist()
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    installed = _run(bin_dir / "python", "-m", "pip", "install", "-q", wheel, cwd=tmp_path)
    assert installed.returncode == 0, installed.stderr

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = _run(bin_dir / "python", "-c", "import rampart_otel; print(rampart_otel.__file__)",
                 cwd=elsewhere)  # fmt: skip
    assert Path(where.stdout.strip()).is_relative_to(env_dir)  # not this checkout
    version = _run(bin_dir / "rampart-otel", "--version", cwd=elsewhere)
    assert version.returncode == 0 and version.stdout.strip() == f"rampart-otel {__version__}"
    scored = _run(bin_dir / "rampart-otel", "score", SAMPLE, "--policy", POLICY, cwd=elsewhere)
    assert scored.returncode == 1, scored.stderr  # the sample's exfiltration is UNSAFE
    assert "FAIL  no-exfiltration" in scored.stdout and "Traceback" not in scored.stderr
    # The built-in policy packs are package data of the wheel.
    packs = _run(bin_dir / "rampart-otel", "score", SAMPLE, "--policy", "builtin:agent-baseline",
                 cwd=elsewhere)  # fmt: skip
    assert packs.returncode == 1, packs.stderr
    assert "FAIL  egress.non-allowed-host" in packs.stdout


def test_the_python_versions_named_are_those_ci_tests() -> None:
    import re
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    named = {
        c.rsplit(" :: ", 1)[1]
        for c in project["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    }
    others = (REPO / ".ci/other-pythons").read_text()
    (loop,) = re.findall(r"for version in ([\d. ]+); do", others)
    assert ".ci/other-pythons" in (REPO / ".ci/run").read_text()
    lowest = project["requires-python"].removeprefix(">=")
    assert named == {lowest, *loop.split()}
    assert project["urls"]["Documentation"]

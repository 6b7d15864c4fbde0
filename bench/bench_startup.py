"""What a process pays before its first span: CPU seconds, medians of fresh processes.

- ``python -c pass``: the interpreter alone, for scale;
- ``rampart-otel --help``;
- CPU to first span: ``rampart-otel score FILE --policy samples/policy.yaml --format json``,
  the process's CPU (``time.process_time``) at the moment the first span of FILE is
  decoded (every import, the policy and the sinks before it counted);
- the whole ``score`` of that one-trace file, to its exit: the fixed cost of a process
  (a ``-j`` worker is forked and does not pay it again).

Two installs, each row measured in both, in turn:

- ``installed``: what a user runs. The wheel built from this checkout, installed by pip
  into a throwaway venv (its dependencies at the versions of the venv running the bench,
  ``pip freeze`` as constraints), its command run from outside the checkout. pip compiles
  every module at install.
- ``editable``: this checkout as the development venv has it (``pip install -e``): every
  import of the package goes through setuptools' editable import hook, which an installed
  package does not have. The bench compiles the checkout's ``.pyc`` first (``compileall``,
  as pip does at install).

Each process runs without ``PYTHONDONTWRITEBYTECODE``: one that compiled every module from
source would pay ~0.1 s no user pays.

Run: ``python bench/bench_startup.py`` (``--runs N``; ``--editable-only`` skips building the
wheel, which needs pip's index for the build backend and the dependencies).
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRACE = ROOT / "samples" / "traces" / "openinference-exfil.jsonl"
POLICY = ROOT / "samples" / "policy.yaml"
SCORE = ["score", str(TRACE), "--policy", str(POLICY), "--format", "json", "-o", "/dev/null"]

FIRST_SPAN = """
import sys, time
from rampart_otel import cli, reading
decode = reading.decode_located
def first(record):
    for item in decode(record):
        if not hasattr(first, "at"):
            first.at = time.process_time()
        yield item
reading.decode_located = first
sys.argv = ["rampart-otel", *sys.argv[1:]]
try:
    cli.main()
except SystemExit:
    pass
print(first.at, file=sys.stderr)
"""


# The processes read the .pyc as an installed package's would (see the docstring).
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def compile_bytecode() -> None:
    """The package's .pyc in its __pycache__, as pip leaves them at install."""
    if not compileall.compile_dir(ROOT / "rampart_otel", quiet=1):
        raise SystemExit("compileall failed on rampart_otel")


def quiet(command: list[str | Path]) -> str:
    """``command``'s output; its errors, and nothing else, shown if it fails."""
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{command}: exit {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout


def install_wheel(where: Path) -> Path:
    """This checkout's wheel installed into a new venv under ``where``, with the
    dependencies at the versions this venv has; the new venv's python."""
    pip: list[str | Path] = [sys.executable, "-m", "pip"]
    quiet([*pip, "wheel", "--no-deps", "-q", "-w", where / "dist", ROOT])
    (wheel,) = (where / "dist").glob("rampart_otel-*.whl")
    pins = [line for line in quiet([*pip, "freeze"]).splitlines() if "==" in line]
    pins = [line for line in pins if not line.lower().startswith("rampart")]
    (where / "constraints.txt").write_text("\n".join(pins) + "\n")
    venv.create(where / "venv", with_pip=True)
    python = where / "venv" / "bin" / "python"
    quiet([python, "-m", "pip", "install", "-q", "-c", where / "constraints.txt", wheel])
    return python


def child_cpu(command: list[str], cwd: Path = ROOT) -> tuple[float, str]:
    """CPU seconds (user + system) of ``command`` run to its end, and its stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=ENV, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{command}: exit {done.returncode}: {done.stderr[-1000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, done.stderr


ROWS = (
    "python -c pass",
    "rampart-otel --help",
    "CPU to first span (score)",
    "score of one trace, whole",
)


def one_round(python: str | Path, cwd: Path) -> dict[str, float]:
    """Each row once, by ``python``, from ``cwd`` (outside the checkout for the wheel: a
    ``-c`` or ``-m`` puts the working directory first on the path)."""
    _, err = child_cpu([str(python), "-c", FIRST_SPAN, *SCORE], cwd)
    return {
        "python -c pass": child_cpu([str(python), "-c", "pass"], cwd)[0],
        "rampart-otel --help": child_cpu([str(python), "-m", "rampart_otel.cli", "--help"], cwd)[0],
        "CPU to first span (score)": float(err.strip().splitlines()[-1]),
        "score of one trace, whole": child_cpu(
            [str(python), "-m", "rampart_otel.cli", *SCORE], cwd
        )[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--editable-only", action="store_true")
    args = parser.parse_args()
    compile_bytecode()
    with tempfile.TemporaryDirectory(prefix="rampart-startup-") as scratch:
        where = Path(scratch)
        installs: dict[str, tuple[str | Path, Path]] = {"editable": (sys.executable, ROOT)}
        if not args.editable_only:
            installs = {"installed": (install_wheel(where), where), **installs}
        rows: dict[str, dict[str, list[float]]] = {i: {row: [] for row in ROWS} for i in installs}
        for _ in range(args.runs):  # the installs in turn, so that a drift touches both
            for install, (python, cwd) in installs.items():
                for row, value in one_round(python, cwd).items():
                    rows[install][row].append(value)
    print("bytecode compiled, PYTHONDONTWRITEBYTECODE unset: as installed")
    header = "".join(f"{install + ' median':>18}{'min':>8}" for install in installs)
    print(f"{'CPU seconds, ' + str(args.runs) + ' runs':<30}{header}")
    for row in ROWS:
        figures = "".join(
            f"{statistics.median(values[row]):>18.3f}{min(values[row]):>8.3f}"
            for values in rows.values()
        )
        print(f"{row:<30}{figures}")


if __name__ == "__main__":
    main()

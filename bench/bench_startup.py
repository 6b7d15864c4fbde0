"""What a process pays before its first span: CPU seconds, medians of fresh processes.

- ``python -c pass``: the interpreter alone, for scale;
- ``rampart-otel --help``;
- CPU to first span: ``rampart-otel score FILE --policy samples/policy.yaml --format json``,
  the process's CPU (``time.process_time``) at the moment the first span of FILE is
  decoded (every import, the policy and the sinks before it counted);
- the whole ``score`` of that one-trace file, to its exit: the fixed cost of a process
  (a ``-j`` worker is forked and does not pay it again).

As an installed package runs: with its bytecode. pip compiles every module at install, so
the bench first compiles the package's ``.pyc`` (``compileall``, into the normal
``__pycache__``) and runs each process without ``PYTHONDONTWRITEBYTECODE``; a process that
compiled every module from source would pay ~0.1 s no user pays.

Run: ``python bench/bench_startup.py`` (``--runs N``).
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
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


def child_cpu(command: list[str]) -> tuple[float, str]:
    """CPU seconds (user + system) of ``command`` run to its end, and its stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=ENV, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{command}: exit {done.returncode}: {done.stderr[-1000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    python = sys.executable
    compile_bytecode()
    rows: dict[str, list[float]] = {
        "python -c pass": [],
        "rampart-otel --help": [],
        "CPU to first span (score)": [],
        "score of one trace, whole": [],
    }
    for _ in range(args.runs):
        rows["python -c pass"].append(child_cpu([python, "-c", "pass"])[0])
        rows["rampart-otel --help"].append(
            child_cpu([python, "-m", "rampart_otel.cli", "--help"])[0]
        )
        _, err = child_cpu([python, "-c", FIRST_SPAN, *SCORE])
        rows["CPU to first span (score)"].append(float(err.strip().splitlines()[-1]))
        rows["score of one trace, whole"].append(
            child_cpu([python, "-m", "rampart_otel.cli", *SCORE])[0]
        )
    print("bytecode compiled (compileall), PYTHONDONTWRITEBYTECODE unset: as installed")
    print(f"{'CPU seconds, median of ' + str(args.runs):<34}{'median':>8}{'min':>8}")
    for name, values in rows.items():
        print(f"{name:<34}{statistics.median(values):>8.3f}{min(values):>8.3f}")


if __name__ == "__main__":
    main()

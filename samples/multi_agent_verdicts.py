"""The verdicts of ``samples/policy.yaml`` on every multi-agent recording (issue 48).

    python samples/multi_agent_verdicts.py               # share decided, then each verdict
    python samples/multi_agent_verdicts.py --json OUT    # the verdicts as JSON, to compare
    python samples/multi_agent_verdicts.py --diff BEFORE # what moved since BEFORE (JSON)

A verdict is decided when it is SAFE or UNSAFE; the share decided over the multi-agent
samples is the figure issue 48 asks to raise. Each file's verdicts are those of the team's
run (the run with the most spans: OpenLLMetry records each agent definition made before the
run as a one-span trace of its own, a "run" with nothing in it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from rampart_otel.api import score_files  # noqa: E402
from rampart_otel.pipeline import ReadStats, agent_runs  # noqa: E402
from samples.record_frameworks import discover  # noqa: E402

TRACES = REPO / "samples" / "traces"
POLICY = REPO / "samples" / "policy.yaml"
DECIDED = ("safe", "unsafe")


def multi_agent_files() -> list[Path]:
    return [
        TRACES / entry.name / entry.file_name(case)
        for entry in discover()
        if entry.framework.multi_agent
        for case in entry.cases
        if (TRACES / entry.name / entry.file_name(case)).exists()
    ]


def verdicts() -> dict[str, str]:
    """``file check`` → the status on the file's team run."""
    found: dict[str, str] = {}
    for path in multi_agent_files():
        team = max(agent_runs([path], ReadStats()), key=lambda run: len(run.run.spans))
        for result in score_files(path, POLICY):
            if result.run_id == team.run_id:
                found[f"{path.name} {result.check_id}"] = result.status.value
    return found


def share(found: dict[str, str]) -> str:
    decided = sum(status in DECIDED for status in found.values())
    return f"{decided}/{len(found)} decided ({100 * decided / max(1, len(found)):.0f}%)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the verdicts to this file")
    parser.add_argument("--diff", type=Path, help="verdicts JSON to compare with")
    args = parser.parse_args(argv)
    found = verdicts()
    if args.json:
        args.json.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    if args.diff:
        before = json.loads(args.diff.read_text())
        print(f"before: {share({k: v for k, v in before.items() if k in found})}")
        print(f"after:  {share(found)}")
        for key in sorted(found):
            if before.get(key, found[key]) != found[key]:
                print(f"  {key}: {before[key]} -> {found[key]}")
        return 0
    print(share(found))
    for key, status in sorted(found.items()):
        print(f"  {key}: {status}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

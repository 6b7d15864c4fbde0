"""The text of a starter policy (``rampart-otel policy init``): the agent-baseline pack with
every parameter written out, commented, and, from recorded traces, the hosts and tools seen
as the allow-lists' draft, each line marked for review with the runs and files it was seen
in. A name seen in a run that the policy's other checks flag is never drafted: it is listed
in a comment with those runs (``rampart_otel.policy_draft`` finds them).

Host and tool names come from traces (attacker-influenced): a name is written only if the
pack's parameter type takes it, and always as a JSON string (a YAML double-quoted scalar),
so the file loads as written and no name can add a line to it.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rampart_otel.evaluation.matchers import address_range
from rampart_otel.evaluation.packs import PREFIX, Parameter, load_pack, members
from rampart_otel.lazy_regex import LazyPattern

BASELINE = "agent-baseline"
REVIEW = "# review"
# The parameters a draft from traces fills in, and what was seen for them.
DRAFTED = {"allowed_hosts": "hosts", "allowed_tools": "tools"}
_NAME = LazyPattern(r"[^A-Za-z0-9._-]+")

SHOWN = 3  # files, and flagged runs, named per entry; the rest counted


@dataclass(frozen=True, slots=True)
class FlaggedRun:
    """A run that a check of the starter policy flags (UNSAFE), where it was read."""

    run_id: str
    location: str  # path:line of its first trace
    checks: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DraftedName:
    """A host or tool the traces show: in how many runs, which files, and the runs that
    show it which other checks flag (then it is left out of the draft)."""

    name: str
    runs: int
    files: tuple[str, ...]
    flagged: tuple[FlaggedRun, ...] = ()


Seen = Sequence[DraftedName]  # most frequent first


def checks_without(parameters: set[str]) -> set[str]:
    """The ids of the baseline's checks whose expression names none of ``parameters``:
    what a draft of those parameters cannot change."""
    return {
        check.id
        for member in members(load_pack(BASELINE))
        for check in member.checks
        if not check.parameters & parameters
    }


def policy_name(service: str | None) -> str:
    """A policy name from the agent's service name: letters, digits, ``.``, ``_``, ``-``."""
    cleaned = _NAME.sub("-", service or "").strip("-")[:60]
    return f"{cleaned}-policy" if cleaned else "my-agent-policy"


def starter_policy(
    name: str,
    *,
    seen: Mapping[str, Seen] | None = None,
    source: str | None = None,
    runs: int = 0,
) -> str:
    """The starter policy's YAML. ``seen``: for ``hosts`` and ``tools``, the names the traces
    at ``source`` showed (over ``runs`` runs)."""
    pack = load_pack(BASELINE)
    lines = [
        f"# A starter policy: rampart-otel's {PREFIX}{BASELINE} pack (docs/policy-packs.md).",
        "# Each parameter is written out with its default, commented; uncomment to set it.",
        "#   rampart-otel policy check THIS-FILE [TRACES]   what each check can decide",
        "#   rampart-otel score TRACES --policy THIS-FILE   the verdicts",
    ]
    if seen is not None:
        note = (
            f"Drafted from {_comment(source or 'traces')} ({runs} runs): the hosts and tools "
            "seen there are the allow-lists, except those seen in runs that this policy's "
            "other checks flag (listed, not allowed). Review every line marked '# review': a "
            "host or tool allowed here is never flagged, so allowing the one an attack used "
            "hides that attack."
        )
        lines += [f"# {text}" for text in textwrap.wrap(note, 88)]
    lines += [
        f"policy: {name}",
        "version: 1",
        "include:",
        f"  - pack: {PREFIX}{BASELINE}",
        "    with:",
    ]
    for parameter in pack.parameters.values():
        lines += [""] if lines[-1] != "    with:" else []
        lines += [f"      # {text}" for text in textwrap.wrap(parameter.description, 86)]
        drafted = DRAFTED.get(parameter.name)
        if seen is not None and drafted is not None:
            lines += _drafted(parameter, seen.get(drafted, ()))
        else:
            lines.append(f"      # {parameter.name}: {_example(parameter)}")
    lines += ["", "# Checks of your own, after the pack's (docs/policy.md).", "checks: []"]
    return "\n".join(lines) + "\n"


def _drafted(parameter: Parameter, names: Seen) -> list[str]:
    accepted: list[DraftedName] = []
    left_out: list[DraftedName] = []
    skipped = 0
    for entry in names:
        try:
            parameter.check([entry.name])
        except ValueError:
            skipped += 1
            continue
        (left_out if entry.flagged else accepted).append(entry)
    lines = [f"      {parameter.name}:"]
    if not accepted:
        lines[0] += f" []  {REVIEW}: none seen" + (" outside flagged runs" if left_out else "")
    for entry in accepted:
        note = f"{REVIEW}: seen in {_runs(entry.runs)}; {_files(entry.files)}"
        where = address_range(entry.name) if parameter.type == "hosts" else None
        if where is not None:
            kind = where.replace("_", "-")
            note += f"; a {kind} address, which egress.internal-address flags unless allowed"
        lines.append(f"        - {json.dumps(entry.name)}  {note}")
    if left_out:
        lines.append(
            "        # Left out: seen in runs that this policy's other checks flag. Allow one "
            "only if it is"
        )
        lines.append("        # your agent's own and those runs are not its attacks.")
    for entry in left_out:
        flagged = entry.flagged
        lines.append(
            f"        # - {json.dumps(entry.name)}: in {_runs(entry.runs)}, "
            f"{len(flagged)} of them flagged:"
        )
        lines += [
            f"        #     {_comment(run.location)} ({', '.join(run.checks)})"
            for run in flagged[:SHOWN]
        ]
        if len(flagged) > SHOWN:
            lines.append(f"        #     and {len(flagged) - SHOWN} more")
    if skipped:
        lines.append(f"        # {skipped} more seen, not valid here (not written)")
    return lines


def _runs(count: int) -> str:
    return f"{count} run" if count == 1 else f"{count} runs"


def _files(files: Sequence[str]) -> str:
    named = ", ".join(_comment(file) for file in files[:SHOWN])
    more = f" and {len(files) - SHOWN} more" if len(files) > SHOWN else ""
    return f"{'file' if len(files) == 1 else 'files'} {named}{more}"


def _example(parameter: Parameter) -> str:
    """The default as YAML; for a parameter without one (a check left out), an example."""
    if parameter.default is None:
        return {"path": "/srv/app", "names": "[]"}.get(parameter.type, "null")
    return _yaml(parameter.default)


def _yaml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


def _comment(text: str) -> str:
    return json.dumps(text)[1:-1]

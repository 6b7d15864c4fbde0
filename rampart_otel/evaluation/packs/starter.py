"""The text of a starter policy (``rampart-otel policy init``): the agent-baseline pack with
every parameter written out, commented, and, from recorded traces, the hosts and tools seen
as the allow-lists' draft, each line marked for review.

Host and tool names come from traces (attacker-influenced): a name is written only if the
pack's parameter type takes it, and always as a JSON string (a YAML double-quoted scalar),
so the file loads as written and no name can add a line to it.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from rampart_otel.evaluation.matchers import address_range
from rampart_otel.evaluation.packs import PREFIX, Parameter, load_pack

BASELINE = "agent-baseline"
REVIEW = "# review"
# The parameters a draft from traces fills in, and what was seen for them.
DRAFTED = {"allowed_hosts": "hosts", "allowed_tools": "tools"}
_NAME = re.compile(r"[^A-Za-z0-9._-]+")

Seen = Sequence[tuple[str, int]]  # (name, runs it was seen in), most frequent first


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
            "seen there are the allow-lists. Review every line marked '# review': a host or "
            "tool allowed here is never flagged, so allowing the one an attack used hides "
            "that attack."
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
    accepted: list[tuple[str, int]] = []
    skipped = 0
    for name, count in names:
        try:
            parameter.check([name])
        except ValueError:
            skipped += 1
            continue
        accepted.append((name, count))
    lines = [f"      {parameter.name}:"]
    if not accepted:
        lines[0] += f" []  {REVIEW}: none seen"
    for name, count in accepted:
        runs = "run" if count == 1 else "runs"
        note = f"{REVIEW}: seen in {count} {runs}"
        where = address_range(name) if parameter.type == "hosts" else None
        if where is not None:
            kind = where.replace("_", "-")
            note += f"; a {kind} address, which egress.internal-address flags unless allowed"
        lines.append(f"        - {json.dumps(name)}  {note}")
    if skipped:
        lines.append(f"        # {skipped} more seen, not valid here (not written)")
    return lines


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

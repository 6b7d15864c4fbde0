"""`rampart-otel policy check` output: the checks, the channels each reads, and over traces
a table of what each could decide, with the top reasons it could not.

The document (``rampart-otel/policy-check@1``, see docs/policy.md) is built by
``rampart_otel.policy_check``; here it is only written out. Names read from traces (tools,
kinds, reasons) are trace content: every one goes through ``safe_text``.
"""

from __future__ import annotations

import json
from typing import IO, Any

from rich.console import Console
from rich.text import Text

from rampart_otel.render import safe_text

TOP_REASONS = 3
SEEN_SHOWN = 5
_COLUMNS = ("decided", "safe", "unsafe", "undetermined", "error")


def write_json(document: dict[str, Any], out: IO[str]) -> None:
    out.write(json.dumps(document, ensure_ascii=True, indent=1))
    out.write("\n")


def write_terminal(document: dict[str, Any], console: Console) -> None:
    policy = document["policy"]
    checks = document["checks"]
    console.print(
        Text.assemble(
            ("policy ", "bold"),
            (safe_text(policy["name"]), "bold cyan"),
            f" v{safe_text(policy['version'])} ({safe_text(policy['source'])}): "
            f"{len(checks)} checks, ",
            ("valid", "green"),
        )
    )
    for entry in checks:
        console.print()
        console.print(
            Text.assemble("  ", (safe_text(entry["id"]), "bold"), f"  {entry['polarity']}")
        )
        console.print(Text(f"    detect: {safe_text(entry['detect'], 400)}"))
        reads = ", ".join(
            safe_text(c["key"]) + (" (assumed)" if c["assumed"] else "") for c in entry["channels"]
        )
        console.print(Text(f"    reads:  {reads or '-'}"))
    traces = document["traces"]
    if traces is None:
        return
    _write_table(document, traces, console)


def _write_table(document: dict[str, Any], traces: dict[str, Any], console: Console) -> None:
    checks = document["checks"]
    console.print()
    console.print(
        Text(
            f"on {traces['runs']} runs ({traces['spans']} spans) of "
            + ", ".join(safe_text(p) for p in traces["paths"]),
            style="bold",
        )
    )
    width = max([len("check"), *(len(safe_text(e["id"])) for e in checks)])
    header = f"  {'check':<{width}}  " + "  ".join(f"{c:>12}" for c in _COLUMNS)
    console.print(Text(header, style="bold"))
    seen = traces["seen"]
    for entry in checks:
        runs = entry["runs"]
        values = [entry["decided"], *(runs[c] for c in _COLUMNS[1:])]
        row = f"  {safe_text(entry['id']):<{width}}  " + "  ".join(f"{v:>12}" for v in values)
        console.print(Text(row, style="red" if runs["error"] else ""))
        for label, reasons in (
            ("undetermined", entry["undetermined_reasons"]),
            ("error", entry["error_reasons"]),
        ):
            shown = reasons[:TOP_REASONS]
            if shown:
                listed = "; ".join(
                    f"{safe_text(r['reason'], 200)} ({r['runs']} runs)" for r in shown
                )
                more = (
                    f"; and {len(reasons) - len(shown)} more" if len(reasons) > len(shown) else ""
                )
                console.print(Text(f"      {label}: {listed}{more}", style="dim"))
        for note in entry["never_seen"]:
            pool = seen["tools"] if note["what"] == "tool" else seen["side_effect_kinds"]
            console.print(Text(f"      {_never_seen(note, pool)}", style="yellow"))
        unrecorded = entry.get("fields_never_recorded") or []
        if unrecorded:
            listed = ", ".join(
                f"{safe_text(note['kind'], 40)}.{safe_text(note['field'], 40)}"
                for note in unrecorded
            )
            console.print(
                Text(
                    f"      rests on {listed}, which no span of these traces recorded: it cannot"
                    " be ruled out there (UNDETERMINED, never SAFE)",
                    style="yellow",
                )
            )
    for note in traces["tools_never_seen"]:
        console.print(Text(f"  {_declared_never_seen(note, seen['tools'])}", style="yellow"))
    errors = traces["input_errors"]
    if errors:
        console.print(Text(f"{len(errors)} input errors (lines or files skipped)", style="yellow"))


def _declared_never_seen(note: dict[str, Any], seen: list[str]) -> str:
    """``tools: 'serch' is declared but never called in these traces (seen: …); closest: …``"""
    listed = ", ".join(safe_text(name, 60) for name in seen[:SEEN_SHOWN])
    if len(seen) > SEEN_SHOWN:
        listed += " …"
    text = (
        f"tools: {safe_text(note['name'], 120)!r} is declared but never called in these"
        f" traces (seen: {listed or 'none'})"
    )
    if note["closest"] is not None:
        text += f"; closest: {safe_text(note['closest'], 60)!r}"
    return text


def _never_seen(note: dict[str, Any], seen: list[str]) -> str:
    """``tool 'send_reprot' never seen in these traces (seen: send_report, …); closest: …``"""
    listed = ", ".join(safe_text(name, 60) for name in seen[:SEEN_SHOWN])
    if len(seen) > SEEN_SHOWN:
        listed += " …"
    name = safe_text(note["name"], 120)
    if note["pattern"]:
        text = f"no {note['what']} in these traces matches {name} (seen: {listed or 'none'})"
    else:
        text = f"{note['what']} {name!r} never seen in these traces (seen: {listed or 'none'})"
    if note["closest"] is not None:
        text += f"; closest: {safe_text(note['closest'], 60)!r}"
    return text

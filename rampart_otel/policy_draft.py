"""The body of ``rampart-otel policy init --from``: what recorded traces show for a starter
policy's allow-lists, vetted by the starter policy's other checks.

An allow-list drafted from traces would allow whatever the traces hold, an attack's host
or tool included: the draft would then pass the very runs it was drafted from. So every
run is first scored (through the pipeline ``score`` uses) by the checks of the starter
policy that no drafted parameter changes (secrets, destructive actions, injection, ...);
a name seen in a run that one of them flags is left out of the draft and listed with those
runs, and every name drafted says in how many runs, and in which files, it was seen.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rampart_otel.engine import fewer_young_collections
from rampart_otel.evaluation import Policy, SafetyStatus
from rampart_otel.evaluation.packs.starter import (
    BASELINE,
    DRAFTED,
    DraftedName,
    FlaggedRun,
    checks_without,
)
from rampart_otel.evaluation.policy import builtin_policy
from rampart_otel.model import AgentRun, InputError
from rampart_otel.pipeline import FileSource, Pipeline
from rampart_otel.reading import ReadStats
from rampart_otel.sinks import Scored, SinkDefaults


@dataclass(frozen=True, slots=True)
class TraceDraft:
    """What the traces showed: per drafted kind (``hosts``, ``tools``), each name seen."""

    names: dict[str, list[DraftedName]]
    runs: int
    service: str | None
    stats: ReadStats


def vetting_policy() -> Policy:
    """The starter policy's checks that no drafted parameter changes, at their defaults."""
    baseline = builtin_policy(f"builtin:{BASELINE}")
    kept = checks_without(set(DRAFTED))
    checks = [check for check in baseline.checks if check.id in kept]
    return Policy(name=baseline.name, version=baseline.version, checks=checks)


def draft_from_traces(
    paths: Sequence[str | Path], *, on_error: Callable[[InputError], None]
) -> TraceDraft:
    """Every host and tool the runs under ``paths`` show, each with the runs it was seen
    in and the runs the vetting checks flag that show it."""
    vetting = vetting_policy()
    files = FileSource(list(paths), on_error=on_error)
    seen = _Seen()
    with fewer_young_collections():
        Pipeline([vetting], [seen]).run(files)
    names = {kind: seen.drafted(kind) for kind in DRAFTED.values()}
    service = seen.services.most_common(1)[0][0] if seen.services else None
    return TraceDraft(names, seen.runs, service, files.stats)


@dataclass(slots=True)
class _Name:
    runs: int = 0
    files: Counter[str] = field(default_factory=Counter)
    flagged: list[FlaggedRun] = field(default_factory=list)


class _Seen(SinkDefaults):
    """The sink: per run, the names it shows and the vetting checks that flag it."""

    needs_agent_run = True

    def __init__(self) -> None:
        self.names: dict[str, dict[str, _Name]] = {kind: {} for kind in DRAFTED.values()}
        self.services: Counter[str] = Counter()
        self.runs = 0

    def prepare(self, scored: Scored) -> Scored:
        return scored

    def write(self, batch: Sequence[Scored]) -> None:
        for scored in batch:
            self.runs += 1
            run = scored.agent_run
            if run is None:
                continue
            if run.service:
                self.services[run.service] += 1
            flags = tuple(
                sorted(r.check_id for r in scored.results if r.status is SafetyStatus.UNSAFE)
            )
            files = [_file(source) for source in scored.run.sources] or ["(no file)"]
            location = scored.run.sources[0] if scored.run.sources else scored.run.run_id
            flagged = FlaggedRun(scored.run.run_id, location, flags) if flags else None
            for kind, shown in (("hosts", _hosts(run)), ("tools", _tools(run))):
                for name in shown:
                    entry = self.names[kind].setdefault(name, _Name())
                    entry.runs += 1
                    entry.files.update(files)
                    if flagged is not None:
                        entry.flagged.append(flagged)

    def drafted(self, kind: str) -> list[DraftedName]:
        """The names of one kind, most runs first."""
        entries = sorted(self.names[kind].items(), key=lambda item: (-item[1].runs, item[0]))
        return [
            DraftedName(name, entry.runs, tuple(entry.files), tuple(entry.flagged))
            for name, entry in entries
        ]


def _hosts(run: AgentRun) -> Iterable[str]:
    return {
        str(effect.details["host"])
        for effect in run.side_effects
        if effect.kind == "http_request" and effect.details.get("host") is not None
    }


def _tools(run: AgentRun) -> Iterable[str]:
    return {call.name for call in run.tool_calls}


def _file(source: str) -> str:
    """``path:line`` or ``path@offset`` → the path."""
    for mark in ("@", ":"):
        head, sep, tail = source.rpartition(mark)
        if sep and tail.isdigit():
            return head
    return source

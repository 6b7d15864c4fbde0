"""Every gated reader against its gate, generated from the registry: a family with no
recording is checked as well as one with many (tests/processors/test_span_views.py checks
the gates on the recorded spans).

A gate (``conventions.Gate``) is a promise: its reader says nothing of a span that holds
none of its keys (is of none of its scopes, has no event when it names events), so
``processors.span_views`` does not give the reader such a span. A key the reader probes
there and the gate forgets silently drops what the reader would have read. The keys each
reader probes are found by running it, not listed by hand: on spans holding no attribute,
of each kind and of each name, scope and event name its module mentions (one at a time),
every attribute key it probes is recorded; then each is fed through the gate on such a span
holding that key alone, which the gate must let through.
"""

from __future__ import annotations

import ast
import functools
import inspect
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import pytest
from span_factory import event, span

from rampart_otel.conventions.interface import Convention, Gate
from rampart_otel.conventions.registry import GENERAL
from rampart_otel.model import Event, Scope, Span, SpanKind


class ProbedAttributes(dict[str, Any]):
    """A span's attributes that remember each key a reader asks for, and whether it read
    them all (a scan: a gate cannot stand for that)."""

    def __init__(self, attributes: dict[str, Any]) -> None:
        super().__init__(attributes)
        self.probed: dict[str, None] = {}
        self.scanned = False

    def __contains__(self, key: object) -> bool:
        self._probe(key)
        return super().__contains__(key)

    def __getitem__(self, key: str) -> Any:
        self._probe(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self._probe(key)
        return super().get(key, default)

    def __iter__(self) -> Iterator[str]:
        self.scanned = True
        return super().__iter__()

    def keys(self) -> Any:
        self.scanned = True
        return super().keys()

    def items(self) -> Any:
        self.scanned = True
        return super().items()

    def values(self) -> Any:
        self.scanned = True
        return super().values()

    def _probe(self, key: object) -> None:
        if isinstance(key, str):
            self.probed[key] = None


class ProbedEvents(list[Event]):
    """A span's events that remember whether a reader looked at them."""

    read = False

    def __iter__(self) -> Iterator[Event]:
        self.read = True
        return super().__iter__()

    def __len__(self) -> int:
        self.read = True
        return super().__len__()

    def __getitem__(self, index: Any) -> Any:
        self.read = True
        return super().__getitem__(index)


@dataclass(frozen=True)
class GatedReader:
    convention: Convention
    reader: str  # "read", "history" or "user_input"
    call: Callable[[Span], Any]
    gate: Gate

    def __str__(self) -> str:
        return f"{self.convention.name}.{self.reader}"

    def reports(self, found: Any) -> bool:
        """Whether the reader said anything: a report, a history with a call in it, input."""
        if self.reader == "history":
            return bool(found.arguments or found.results or found.names)
        return found is not None


def gated_readers() -> list[GatedReader]:
    """Each reader of each general convention (one that owns no scope) that has a gate."""
    found = []
    for convention in GENERAL:
        for reader, gate in (
            ("read", convention.read_gate),
            ("history", convention.history_gate),
            ("user_input", convention.input_gate),
        ):
            call = getattr(convention, reader)
            if call is not None and gate is not None:
                found.append(GatedReader(convention, reader, call, gate))
    return found


def passes(gate: Gate, probe: Span) -> bool:
    """The gate's promise (``conventions.Gate``): one of its keys, scopes, or any event."""
    scope = probe.scope.name
    return (
        any(key in probe.attributes for key in gate.keys)
        or any(scope == s or scope.startswith(s + ".") for s in gate.scopes)
        or (gate.events and bool(probe.events))
    )


def mentioned(call: Callable[..., Any]) -> list[str]:
    """Every string constant (not a docstring) in the reader's module and the convention
    modules it uses: the names, scopes and values it can compare with."""
    home = sys.modules[call.__module__]
    modules = {home}
    for value in vars(home).values():
        module = value if isinstance(value, types.ModuleType) else inspect.getmodule(value)
        if module is not None and module.__name__.startswith("rampart_otel.conventions."):
            modules.add(module)
    strings: set[str] = set()
    for module in modules:
        tree = ast.parse(inspect.getsource(module))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
        }
        strings.update(
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        )
    return sorted(strings)


def bare_spans(reader: GatedReader) -> Iterator[tuple[str, Span]]:
    """Spans holding no attribute, varied one way at a time: each kind, and each name, scope
    and event name the reader's code mentions. Described, for a failure's message."""
    base = span("", {}, scope="")
    for kind in SpanKind:
        yield f"kind {kind}", replace(base, kind=kind)
    for text in mentioned(reader.call):
        yield f"name {text!r}", replace(base, name=text)
        yield f"scope {text!r}", replace(base, scope=Scope(text))
        yield f"event {text!r}", replace(base, events=[event(text, {})])


class Probes(NamedTuple):
    """What a reader did on the spans its gate keeps out: each attribute key it probed, and
    each fault (a report, a scan, events read); each with the first span it was seen on."""

    keys: dict[str, str]
    faults: dict[str, str]


@functools.cache
def probes(reader: GatedReader) -> Probes:
    keys: dict[str, str] = {}
    faults: dict[str, str] = {}
    for described, bare in bare_spans(reader):
        if passes(reader.gate, bare):
            continue  # the reader is given this span whatever it probes
        attributes, events = ProbedAttributes({}), ProbedEvents(bare.events)
        found = reader.call(replace(bare, attributes=attributes, events=events))
        for key in attributes.probed:
            keys.setdefault(key, described)
        for fault, seen in (
            ("reports on it", reader.reports(found)),
            ("reads all its attributes", attributes.scanned),
            ("reads its events (a gate of events=True lets it through)", events.read and events),
        ):
            if seen:
                faults.setdefault(fault, described)
    return Probes(keys, faults)


READERS = gated_readers()


@pytest.mark.parametrize("reader", READERS, ids=str)
def test_a_gate_lets_through_every_key_its_reader_probes(reader: GatedReader) -> None:
    """Each key the reader probes on a span its gate keeps out, fed through the gate on a
    span holding it alone, passes: else the gate drops what the reader would read."""
    found = probes(reader)
    dropped = [
        f"{reader} probes {key!r} (on a span of no attribute, {on}): its gate does not name it"
        for key, on in found.keys.items()
        if not passes(reader.gate, span("", {key: "x"}, scope=""))
    ]
    assert dropped == []


@pytest.mark.parametrize("reader", READERS, ids=str)
def test_a_reader_says_nothing_of_a_span_its_gate_keeps_out(reader: GatedReader) -> None:
    faults = [
        f"{reader} {fault} (a span of no attribute, {on})"
        for fault, on in probes(reader).faults.items()
    ]
    assert faults == []


@pytest.mark.parametrize("reader", READERS, ids=str)
def test_every_key_a_gate_names_is_one_its_reader_probes(reader: GatedReader) -> None:
    """A key no reader probes first only lets spans through for nothing; and each key being
    probed is what makes the test above fail when one is taken out of a gate."""
    assert [key for key in reader.gate.keys if key not in probes(reader).keys] == []


def test_every_general_convention_is_checked() -> None:
    """The readers above are all the gated ones: each general convention has one at least."""
    assert {reader.convention.name for reader in READERS} == {c.name for c in GENERAL}

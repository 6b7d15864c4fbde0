"""The one rule for a span sent twice (``model.replaces``, ``model.conflicting``): which
copy is kept, and when two copies cannot both be what was recorded (#45.1)."""

from __future__ import annotations

from dataclasses import replace

from rampart_otel.model import (
    Resource,
    Scope,
    Span,
    SpanKind,
    StatusCode,
    add_copy,
    conflicting,
    copies_held,
)

TRACE = "ea9eed8d25604cf01923ab6da83a7df3"
UPLOAD = "3253a07c4b5e95c9"


def span(**changes: object) -> Span:
    base = Span(
        TRACE, UPLOAD, "0b9657e33af389f4", "POST", SpanKind.CLIENT, 10, 20, StatusCode.UNSET, "",
        {"url.full": "http://127.0.0.2/upload"}, [], [], Resource({"service.name": "a"}), Scope(),
    )  # fmt: skip
    return replace(base, **changes)


def test_the_same_copy_twice_is_no_conflict_wherever_each_was_read() -> None:
    assert not conflicting(span(), span(source="a.jsonl:1", sender="client 127.0.0.1:1"))


def test_a_copy_sent_before_the_end_may_lack_what_came_later() -> None:
    early = span(end_ns=None, attributes={})
    assert not conflicting(early, span())
    assert not conflicting(span(), early)  # the late retry of the early export


def test_copies_that_say_different_things_conflict() -> None:
    assert conflicting(span(), span(attributes={"url.full": "http://localhost/upload"}))
    assert conflicting(span(), span(end_ns=21))
    assert conflicting(span(), span(parent_span_id="ffffffffffffffff"))
    assert conflicting(span(), span(resource=Resource({"service.name": "b"})))
    # what the copy sent before the end says must hold in the ended one
    early = span(end_ns=None)
    assert conflicting(early, span(attributes={"url.full": "http://localhost/upload"}))
    assert conflicting(early, span(attributes={}))


def test_add_copy_keeps_a_conflicting_copy_once_however_often_it_is_sent() -> None:
    kept: dict[str, Span] = {}
    others: dict[str, list[Span]] = {}
    forged = span(attributes={"url.full": "http://localhost/upload"})
    assert not add_copy(kept, others, forged)
    assert add_copy(kept, others, span())
    assert not add_copy(kept, others, span())  # the same conflicting copy again
    assert not add_copy(kept, others, forged)  # the kept one again
    assert copies_held(kept, others) == [forged, span()]


def test_add_copy_keeps_the_ended_copy_and_the_early_one_it_contradicts() -> None:
    kept: dict[str, Span] = {}
    others: dict[str, list[Span]] = {}
    early = span(end_ns=None)
    forged = span(attributes={"url.full": "http://localhost/upload"})
    add_copy(kept, others, early)
    assert add_copy(kept, others, forged)
    assert kept[UPLOAD] is forged and others[UPLOAD] == [early]

"""Result documents as the stores keep them since schema version 3: once per run revision.

The verdicts of one run revision under one policy version share most of their report@1
entry: the run's coverage above all (about 1-4 KB of JSON), its ids, service and start. Up
to version 2 every ``results`` row repeated all of it. Now ``result_documents`` holds one
value per (run, revision, policy, policy version): the entries of all its checks in one
zlib-compressed JSON object, the values they share written once, and each ``results`` row's
``result`` is ``''`` (a row that still holds its JSON text is read as it is).

Readers get the same documents as before, key order included: :func:`unpack` rebuilds each
entry from the shared values and its own. Same code for SQLite (``?``) and PostgreSQL
(``%s``): the callers pass their placeholder.
"""

from __future__ import annotations

import json
import zlib
from functools import cache
from pathlib import Path
from typing import Any

import orjson

PACKED = ""  # ``results.result`` of a row whose document is in ``result_documents``

# Deflate's preset dictionaries: every one ever shipped, a stored document naming the one
# it was written with by Adler-32 (bench/build_document_dictionary.py makes a new one).
SHIPPED_DICTIONARIES = (1, 2)  # 2: of compact JSON, as written since
_HERE = Path(__file__).parent


@cache
def dictionaries() -> dict[int, bytes]:
    """Adler-32 -> dictionary, of every shipped dictionary (read on first use)."""
    texts = (
        _HERE.joinpath(f"document-dictionary-{n}.bin").read_bytes() for n in SHIPPED_DICTIONARIES
    )
    return {zlib.adler32(text): text for text in texts}


@cache
def _newest() -> bytes:
    return _HERE.joinpath(f"document-dictionary-{SHIPPED_DICTIONARIES[-1]}.bin").read_bytes()


# Level 3 with dictionary 2: a run's document in a third of level 6's time, 5% larger
# (bench_collector's traffic: 45 us and 1,122 bytes a run, against 156 us and 1,071).
_LEVEL = 3
# Values orjson would write its own way (a dataclass, a datetime, a subclass of str or int)
# go to ``_refuse`` instead, and so to the standard library as before.
_AS_BEFORE = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
_AS_BEFORE |= orjson.OPT_PASSTHROUGH_SUBCLASS


def _refuse(value: Any) -> Any:
    raise TypeError


def _encode(value: Any) -> bytes:
    """Plain JSON, compact, by orjson (the documents read back are the same as those
    ``json.dumps`` wrote, at a tenth of its cost); anything else as the store always wrote
    it (``default=str``). Report documents are plain: the fallback is for a hand-made row.
    NaN and infinities, which no report entry holds, would be stored as null."""
    try:
        return orjson.dumps(value, default=_refuse, option=_AS_BEFORE)
    except TypeError:  # orjson.JSONEncodeError: a key not a string, an int past 64 bits
        return json.dumps(value, default=str).encode()


_ABSENT = object()


def _shared_and_own(documents: dict[str, dict[str, Any]]) -> dict[str, Any]:
    docs = list(documents.values())
    first = docs[0]
    order = list(first)
    shared = dict(first)  # narrowed document by document: no generator per key
    for doc in docs[1:]:
        for key, value in list(shared.items()):
            other = doc.get(key, _ABSENT)
            if other is not value and (other is _ABSENT or other != value):
                del shared[key]
    checks: dict[str, Any] = {}
    for check, doc in documents.items():
        own = {key: value for key, value in doc.items() if key not in shared}
        keys = list(doc)
        checks[check] = [own, None if keys == order else keys]
    return {"order": order, "shared": shared, "checks": checks}


def packed_text(documents: dict[str, dict[str, Any]]) -> bytes:
    """The JSON text (UTF-8) :func:`pack` compresses."""
    return _encode(_shared_and_own(documents))


def pack(documents: dict[str, dict[str, Any]]) -> bytes:
    """The entries of one run revision's checks (check id -> document), compressed with
    the newest preset dictionary (its Adler-32 is in the zlib header).

    ``shared`` has each key every document holds with one value; ``checks`` maps a check to
    its other values, and to its own key order when that differs from ``order``.
    """
    deflate = _primed().copy()  # as a new compressobj(_LEVEL, zdict=...), without its set-up
    return deflate.compress(packed_text(documents)) + deflate.flush()


@cache
def _primed() -> Any:
    """A compressor with the newest dictionary set and nothing fed: each pack copies it."""
    return zlib.compressobj(_LEVEL, zdict=_newest())


def _inflate(blob: bytes) -> bytes:
    """A stored document's JSON text: written with a preset dictionary (FDICT set in the
    zlib header, the dictionary named by its Adler-32) or, before there was one, without."""
    if len(blob) >= 6 and blob[1] & 0x20:
        dictionary = dictionaries().get(int.from_bytes(blob[2:6], "big"))
        if dictionary is None:
            raise zlib.error("compressed with a dictionary this version does not have")
        inflate = zlib.decompressobj(zdict=dictionary)
        return inflate.decompress(blob) + inflate.flush()
    return zlib.decompress(blob)


def unpack(blob: bytes) -> dict[str, dict[str, Any]]:
    """check id -> its document, as :func:`pack` was given it."""
    packed = json.loads(_inflate(bytes(blob)))
    shared, order = packed["shared"], packed["order"]
    return {
        check: {key: own[key] if key in own else shared[key] for key in (keys or order)}
        for check, (own, keys) in packed["checks"].items()
    }


def merged(existing: bytes | None, documents: dict[str, dict[str, Any]]) -> bytes:
    """``documents`` packed with the stored ones they do not replace (same run revision)."""
    if existing is None:
        return pack(documents)
    return pack({**unpack(existing), **documents})


class DocumentReader:
    """Documents of stored rows: a row's own JSON text, else its run revision's packed
    entries (the last one read is kept: a listing reads a run's checks one after another)."""

    def __init__(self, db: Any, placeholder: str) -> None:
        self.db = db
        p = placeholder
        self.query = (
            "SELECT document FROM result_documents WHERE run_id = "
            f"{p} AND revision = {p} AND policy = {p} AND policy_version = {p}"
        )
        self._key: tuple[Any, ...] | None = None
        self._documents: dict[str, dict[str, Any]] = {}

    def document(
        self, text: str, run_id: str, revision: int, policy: str, version: str, check_id: str
    ) -> dict[str, Any]:
        if text != PACKED:
            return json.loads(text)
        key = (run_id, revision, policy, version)
        if key != self._key:
            row = self.db.execute(self.query, key).fetchone()
            self._documents = unpack(row[0]) if row else {}
            self._key = key
        return self._documents.get(check_id, {})


def pack_stored(db: Any, placeholder: str) -> int:
    """Move every ``results`` document still stored as JSON text into ``result_documents``
    (the v2 -> v3 migration, the same for SQLite and PostgreSQL); the count moved.

    One run revision at a time, so a large store is never held in memory. A text that is
    not a JSON object is left where it is: it is read as before.
    """
    p = placeholder
    keys = db.execute(
        "SELECT DISTINCT run_id, revision, policy, policy_version FROM results"
        f" WHERE result <> {p}",
        (PACKED,),
    ).fetchall()
    same_run = f"run_id = {p} AND revision = {p} AND policy = {p} AND policy_version = {p}"
    moved = 0
    for key in keys:
        key = tuple(key)
        documents: dict[str, dict[str, Any]] = {}
        for check_id, text in db.execute(
            f"SELECT check_id, result FROM results WHERE {same_run} AND result <> {p}",
            (*key, PACKED),
        ).fetchall():
            try:
                document = json.loads(text)
            except ValueError:
                continue
            if isinstance(document, dict):
                documents[check_id] = document
        if not documents:
            continue
        existing = db.execute(
            f"SELECT document FROM result_documents WHERE {same_run}", key
        ).fetchone()
        store_documents(db, p, key, merged(existing[0] if existing else None, documents))
        for check_id in documents:
            db.execute(
                f"UPDATE results SET result = {p} WHERE {same_run} AND check_id = {p}",
                (PACKED, *key, check_id),
            )
        moved += len(documents)
    return moved


def store_documents(db: Any, p: str, key: tuple[Any, ...], blob: bytes) -> None:
    db.execute(
        f"INSERT INTO result_documents VALUES ({p}, {p}, {p}, {p}, {p})"
        " ON CONFLICT (run_id, revision, policy, policy_version)"
        " DO UPDATE SET document = excluded.document",
        (*key, blob),
    )

"""Who sent a stored request: the collector's note on each record of its segments.

A collector stores each request as the client sent it (``storage/segments``), and appends one
field of its own: the tenant the client's token names and the client's address. Appending a
field to a serialized message is still the same message to every protobuf parser (an unknown
field, ignored by the OpenTelemetry Collector's file reader and kept by ours), so a data
directory's segments stay the OTel file exporter's ``proto`` format. The decoder
(``otlp_proto``) gives each span of a noted record its ``tenant`` and ``sender``, so the
scorer, ``score DATA_DIR/segments`` and ``rescore`` read the same runs.

Only the last note of a record counts: a client that writes a field of that number into its
own request is followed by the collector's note, which wins.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

# A field number far above OTLP's (ExportTraceServiceRequest has field 1), and outside
# protobuf's reserved 19000-19999: "ram" in ASCII.
NOTE_FIELD = 0x72616D
_TAG = (NOTE_FIELD << 3) | 2  # length-delimited
MAX_NOTE_BYTES = 4096


@dataclass(frozen=True, slots=True)
class SenderNote:
    tenant: str  # "" when the collector names no tenants
    client: str  # the client's address as the transport gave it

    def describe(self) -> str:
        """How reasons name the sender of a span."""
        who = f"client {self.client}" if self.client else "a client"
        return f"{who} of tenant {self.tenant!r}" if self.tenant else who


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


_TAG_BYTES = _varint(_TAG)


def noted(payload: bytes, note: SenderNote) -> bytes:
    """``payload`` (a serialized request) with the collector's note appended."""
    body = json.dumps({"tenant": note.tenant, "client": note.client}).encode()[:MAX_NOTE_BYTES]
    return payload + _TAG_BYTES + _varint(len(body)) + body


def read_varint(data: bytes | memoryview, at: int) -> tuple[int, int]:
    """A protobuf varint at ``at``: its value and the position after it (ValueError when
    cut short or longer than 64 bits)."""
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise ValueError("truncated or overlong varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7


def sender_note(data: bytes | bytearray | memoryview) -> SenderNote | None:
    """The last note of a serialized request; None when it has none (a request not stored
    by a collector, or stored before notes were written) or the bytes do not parse."""
    view = memoryview(data)
    at, end = 0, len(view)
    found: tuple[int, int] | None = None
    try:
        while at < end:
            tag, at = read_varint(view, at)
            wire = tag & 7
            if wire == 2:
                size, at = read_varint(view, at)
                if tag == _TAG:
                    found = (at, at + size)
                at += size
            elif wire == 0:
                _, at = read_varint(view, at)
            elif wire == 1:
                at += 8
            elif wire == 5:
                at += 4
            else:
                return None  # groups: not a request this collector stored
        if found is None or found[1] > end:
            return None
        note = json.loads(bytes(view[found[0] : found[1]]))
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(note, dict):
        return None
    tenant, client = note.get("tenant"), note.get("client")
    return SenderNote(tenant if isinstance(tenant, str) else "", str(client or ""))

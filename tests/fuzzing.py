"""A mutation fuzzer over every decoder and the OTLP/HTTP receiver.

Seeds are the recorded samples (each JSON line, and the same spans as protobuf); each input
is a seed mutated at the byte level (flips, interesting bytes, inserts, deletions,
duplications, splices, truncation) or, for JSON, at the token level (lone surrogates, deep
nesting, huge numbers, long strings). Every target must answer with its documented error
or a result, never another exception, a 5xx or a hang; what the receiver acknowledges must
decode with the scorer's own decoder, and every run decoded must normalize.

    python tests/fuzzing.py --inputs 1000000     # `make fuzz`
    tests/test_fuzz.py runs a few thousand per target in CI.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import random
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # as `python tests/fuzzing.py`

from rampart_otel.codecs.json_forms import spans_from_document_bytes
from rampart_otel.codecs.otlp_json import spans_from_json_bytes
from rampart_otel.codecs.otlp_proto import (
    readable_spans,
    spans_from_proto_bytes,
    spans_to_proto_request,
)
from rampart_otel.codecs.otlp_salvage import WireError, salvage
from rampart_otel.errors import DecodeError, QueueFull, Refusal
from rampart_otel.model import InputError, Span
from rampart_otel.normalize import normalize
from rampart_otel.processors.stitch import assemble
from rampart_otel.receivers import ingest
from rampart_otel.receivers.files import read_path
from rampart_otel.receivers.otlp_http import OTLPHttpApp

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "traces"
FORMS = Path(__file__).resolve().parent / "receivers" / "forms"
HANG_SECONDS = 2.0  # one small input taking this long is a hang
MAX_INPUT = 256 * 1024
_INTERESTING = (0x00, 0x01, 0x7F, 0x80, 0xFF, 0x0A, 0x22, 0x5C, 0x7B, 0x7D, 0x5B, 0x5D)
_JSON_TOKENS = (
    b'"\\ud800"', b'"\\udfff\\ud800"', b"1e999999", b"-0", b"18446744073709551616",
    b"NaN", b"null", b"[]", b"{}", b'"' + b"A" * 5000 + b'"', b"[" * 200 + b"]" * 200,
    b'{"arrayValue":{"values":[' * 60 + b"]}}" * 60, b'"\\u0000"', b'"\x1b[2J"', b"true",
    b'"00000000000000000000000000000000"', b'"zz"', b'"\\uFFFE"',
)  # fmt: skip


class Finding(AssertionError):
    """An input a target mishandled; the message says which and how to replay it."""


def seeds() -> list[tuple[str, bytes]]:
    """(kind, bytes): JSON lines of every sample, and their spans as protobuf."""
    found: list[tuple[str, bytes]] = []
    for path in sorted(SAMPLES.rglob("*.jsonl"))[:40]:
        for line in path.read_bytes().splitlines()[:20]:
            if line.strip():
                found.append(("json", line))
                batch = spans_from_json_bytes(line)
                found.append(("proto", spans_to_proto_request(batch).SerializeToString()))
    return found + form_seeds()


def form_seeds() -> list[tuple[str, bytes]]:
    """The other JSON forms the file reader takes: the real exporters' recordings (console,
    Zipkin) and one sample in Jaeger's and Tempo's JSON, compact."""
    import json

    from trace_forms import to_jaeger, to_tempo

    found = [("json", path.read_bytes()) for path in sorted(FORMS.glob("*.json"))]
    spans = [s for item in read_path(SAMPLES / "openllmetry-exfil.jsonl") for s in item]  # type: ignore[union-attr]
    for text in (to_jaeger(spans), to_tempo(spans), to_tempo(spans, v2=True)):
        found.append(("json", json.dumps(json.loads(text)).encode()))
    return found


def mutate(data: bytes, kind: str, chance: random.Random, pool: list[tuple[str, bytes]]) -> bytes:
    out = bytearray(data)
    for _ in range(chance.choice((1, 1, 2, 3, 8))):
        op = chance.randrange(9 if kind == "json" else 8)
        at = chance.randrange(len(out) + 1)
        if op == 0 and out:  # flip a bit
            i = chance.randrange(len(out))
            out[i] ^= 1 << chance.randrange(8)
        elif op == 1 and out:  # an interesting byte
            out[chance.randrange(len(out))] = chance.choice(_INTERESTING)
        elif op == 2:  # insert random bytes
            out[at:at] = chance.randbytes(chance.choice((1, 2, 4, 16)))
        elif op == 3 and out:  # delete a range
            del out[at : at + chance.choice((1, 4, 64, 1024))]
        elif op == 4 and out:  # duplicate a range
            end = min(len(out), at + chance.choice((4, 64, 512)))
            out[at:at] = out[at:end]
        elif op == 5:  # splice another seed in
            other = chance.choice(pool)[1]
            start = chance.randrange(len(other) + 1)
            out[at:] = other[start:]
        elif op == 6:  # truncate
            del out[at:]
        elif op == 7 and len(out) >= 4:  # a varint / length field set to something large
            i = chance.randrange(len(out))
            out[i : i + 4] = chance.choice((b"\xff\xff\xff\x7f", b"\x80\x80\x80\x01", b"\x00" * 4))
        elif op == 8:  # a JSON token dropped in after a separator
            seps = [i for i in range(len(out)) if out[i] in b":,["]
            if seps:
                i = chance.choice(seps) + 1
                out[i:i] = chance.choice(_JSON_TOKENS)
    return bytes(out[:MAX_INPUT])


# -- targets: each takes (bytes, kind) and raises Finding on a mishandled input -----------


def _normalizes(spans: list[Span]) -> None:
    for run in assemble([spans]):
        normalize(run)  # score_run would turn a failure into ERROR verdicts: find it here


def target_json(data: bytes, kind: str) -> None:
    try:
        spans = spans_from_document_bytes(data)  # OTLP JSON and every other JSON form
    except DecodeError:
        return
    _normalizes(spans)


def target_proto(data: bytes, kind: str) -> None:
    try:
        spans = spans_from_proto_bytes(data)
    except DecodeError:
        spans, _, _ = readable_spans(data)  # the scorer's fallback: must never raise
    with suppress(WireError):
        salvage(data)
    _normalizes(spans)


def target_ingest(data: bytes, kind: str) -> None:
    media = ingest.JSON if kind == "json" else ingest.PROTOBUF
    try:
        accepted = ingest.decode(data, media)
    except Refusal as refusal:
        if refusal.http_status >= 500:
            raise Finding(f"ingest refused with {refusal.http_status}: {refusal.message}") from None
        return
    try:
        spans_from_proto_bytes(accepted.payload)  # acknowledged means scorable
    except DecodeError as error:
        raise Finding(f"acknowledged a request the scorer cannot read: {error}") from None


def target_files(data: bytes, kind: str, directory: Path = Path()) -> None:
    path = directory / "input"
    path.write_bytes(gzip.compress(data, 1) if data[:1] == b"\x02" else data)
    for item in read_path(path):
        if not isinstance(item, InputError | list):
            raise Finding(f"read_path yielded {type(item).__name__}")


class _Writer:
    """Takes what the receiver stores; full now and then, as under load."""

    healthy = True

    def __init__(self, chance: random.Random) -> None:
        self.chance = chance

    def append(self, payload: bytes, done: Callable[[BaseException | None], None]) -> None:
        if self.chance.random() < 0.05:
            raise QueueFull()
        spans_from_proto_bytes(payload)  # acknowledged means scorable
        done(None)

    def append_wait(self, payload: bytes, timeout: float) -> None:
        self.append(payload, lambda _: None)


class _Telemetry:
    def request(self, *args: Any, **kwargs: Any) -> None: ...

    def refused(self, *args: Any, **kwargs: Any) -> None: ...

    def exposition(self) -> tuple[bytes, str]:
        return b"", "text/plain"


def receiver_target(chance: random.Random) -> Callable[[bytes, str], None]:
    app = OTLPHttpApp(_Writer(chance), _Telemetry(), max_request_bytes=64 * 1024)  # type: ignore[arg-type]
    loop = asyncio.new_event_loop()
    types = (
        b"application/x-protobuf",
        b"application/json",
        b"text/plain",
        b"",
        b"application/json; charset=x",
    )
    encodings = (b"", b"gzip", b"deflate", b"br", b"identity")

    def target(data: bytes, kind: str) -> None:
        encoding = chance.choice(encodings)
        body = gzip.compress(data, 1) if encoding == b"gzip" and chance.random() < 0.8 else data
        headers = [(b"content-type", b"application/json" if kind == "json" else types[0])]
        if chance.random() < 0.3:
            headers = [(b"content-type", chance.choice(types))]
        if encoding:
            headers.append((b"content-encoding", encoding))
        if chance.random() < 0.1:
            headers.append((b"content-length", str(chance.randrange(10**7)).encode()))
        chunks = [body[i : i + 4096] for i in range(0, len(body), 4096)] or [b""]
        messages = [
            {"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
            for i, c in enumerate(chunks)
        ]
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return messages.pop(0) if messages else {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {"type": "http", "method": "POST", "path": "/v1/traces", "headers": headers}
        loop.run_until_complete(app(scope, receive, send))
        status = sent[0]["status"] if sent else None
        if status is None or (status >= 500 and status != 503):
            raise Finding(f"receiver answered {status}")

    return target


# -- running --------------------------------------------------------------------------------


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    def expired(*_: Any) -> None:
        raise Finding(f"no answer within {seconds}s: a hang")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def fuzz(inputs: int, seed: int, report: Callable[[str], None] = print) -> dict[str, int]:
    """Run ``inputs`` mutated inputs spread over the targets; raises Finding on the first."""
    chance = random.Random(seed)
    pool = seeds()
    with tempfile.TemporaryDirectory() as tmp:
        targets: dict[str, Callable[[bytes, str], None]] = {
            "json": target_json,
            "proto": target_proto,
            "ingest": target_ingest,
            "files": lambda data, kind: target_files(data, kind, Path(tmp)),
            "receiver": receiver_target(chance),
        }
        counts = dict.fromkeys(targets, 0)
        started = time.monotonic()
        for number in range(inputs):
            name = list(targets)[number % len(targets)]
            kind, data = chance.choice(pool)
            data = mutate(data, kind, chance, pool)
            try:
                with deadline(HANG_SECONDS):
                    targets[name](data, kind)
            except Finding as finding:
                raise Finding(
                    f"{name} (input {number}, seed {seed}): {finding}; {data[:200]!r}"
                ) from None
            except Exception as error:
                raise Finding(
                    f"{name} (input {number}, seed {seed}): {type(error).__name__}: {error}; "
                    f"{data[:200]!r}"
                ) from error
            counts[name] += 1
            if (number + 1) % 100_000 == 0:
                rate = (number + 1) / (time.monotonic() - started)
                report(f"{number + 1} inputs, {rate:.0f}/s, no finding")
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    args = parser.parse_args()
    started = time.monotonic()
    counts = fuzz(args.inputs, args.seed)
    seconds = time.monotonic() - started
    print(
        f"fuzz: {sum(counts.values())} inputs (seed {args.seed}) in {seconds:.0f}s: "
        + ", ".join(f"{name} {count}" for name, count in counts.items())
        + "; no crash, no 5xx, no hang"
    )


if __name__ == "__main__":
    main()

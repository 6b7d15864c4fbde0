"""The same bytes give the same verdicts on every path: a trace file, OTLP/HTTP JSON, OTLP/HTTP
protobuf and OTLP/gRPC (``receivers/ingest.py`` with the codecs' decoders and their one id
rule, ``codecs/otlp_ids.py``).

Every bundled sample (all OTLP JSON Lines) is scored from its file; then each of its lines is
sent, as one request, to one real collector (in-process, 127.0.0.1) over each transport: the
JSON line as it is, or converted to protobuf by protobuf's own JSON parser (hex ids as the
OTLP/JSON spec writes them). What the collector stored for that sample is read back as the
collector's data directory is read (length-prefixed protobuf) and scored the same way: the
verdicts must be identical, check by check and run by run. Two more traces break the OTLP id
rule: every span with an all-zero trace id, and one span with an all-zero span id.
"""

from __future__ import annotations

import base64
import json
import struct
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
from collector.harness import InProcess, start_in_process
from google.protobuf import json_format
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from rampart_otel.engine import score_run
from rampart_otel.evaluation.policy import load_policy
from rampart_otel.pipeline import ReadStats, runs
from rampart_otel.storage.segments import list_segments, read_records

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples" / "traces"
POLICY = ROOT / "samples" / "policy.yaml"
METHOD = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
PATHS = ("http-json", "http-protobuf", "grpc")
ZERO_TRACE, ZERO_SPAN = "zero-trace-id.jsonl", "zero-span-id.jsonl"
EXFIL = SAMPLES / "openinference-exfil.jsonl"  # its "POST" span is the exfiltration
SAMPLE_FILES = sorted(SAMPLES.rglob("*.jsonl"))


def _sample_ids() -> list[str]:
    return [str(path.relative_to(SAMPLES)) for path in SAMPLE_FILES] + [ZERO_TRACE, ZERO_SPAN]


def _spans(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for block in document.get("resourceSpans", ()):
        for scope in block.get("scopeSpans", ()):
            yield from scope.get("spans", ())


def _broken(path: Path, *, trace: bool) -> bytes:
    """The sample with every trace id all zero, or its "POST" span's span id all zero."""
    lines = []
    for line in path.read_bytes().splitlines():
        document = json.loads(line)
        for span in _spans(document):
            if trace:
                span["traceId"] = "0" * 32
            elif span.get("name") == "POST":
                span["spanId"] = "0" * 16
        lines.append(json.dumps(document).encode())
    return b"\n".join(lines) + b"\n"


def to_protobuf(line: bytes) -> bytes:
    """OTLP/JSON → protobuf with protobuf's own JSON parser: not our decoder."""
    document = json.loads(line)
    for span in _spans(document):
        for obj in (span, *span.get("links", ())):
            for key in ("traceId", "spanId", "parentSpanId"):
                if obj.get(key):
                    obj[key] = base64.b64encode(bytes.fromhex(obj[key])).decode()
    request = json_format.ParseDict(document, ExportTraceServiceRequest())
    return request.SerializeToString()


@dataclass
class Sent:
    """What one sample gave on one path: its stored records, and the receiver's answers."""

    records: list[bytes] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)  # partial-success or refusal messages


class Paths:
    """One collector; each sample's lines sent over one transport, its records read back."""

    def __init__(self, collector: InProcess) -> None:
        self.collector = collector
        self.channel = grpc.insecure_channel(collector.grpc_target)
        self.export = self.channel.unary_unary(METHOD)
        self.offset = 0

    def send(self, lines: list[bytes], path: str) -> Sent:
        sent = Sent()
        for line in lines:
            if path == "http-json":
                sent.answers += self._post(line, "application/json")
            elif path == "http-protobuf":
                sent.answers += self._post(to_protobuf(line), "application/x-protobuf")
            else:
                sent.answers += self._grpc(to_protobuf(line))
        (segment,) = list_segments(self.collector.data_dir / "segments")
        for _, end, payload in read_records(segment[1], self.offset):
            sent.records.append(payload)
            self.offset = end
        return sent

    def _post(self, body: bytes, content_type: str) -> list[str]:
        request = urllib.request.Request(
            self.collector.traces_url,
            data=body,
            method="POST",
            headers={"Content-Type": content_type},
        )
        json_body = content_type == "application/json"
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                answer = response.read()
        except urllib.error.HTTPError as error:
            assert error.code == 400, error.read()
            body = error.read()
            return [json.loads(body)["message"] if json_body else Status.FromString(body).message]
        if json_body:
            partial = json.loads(answer).get("partialSuccess", {})
            return [partial["errorMessage"]] if partial else []
        message = ExportTraceServiceResponse.FromString(answer).partial_success.error_message
        return [message] if message else []

    def _grpc(self, body: bytes) -> list[str]:
        try:
            answer = self.export(body, timeout=60)
        except grpc.RpcError as error:
            assert error.code() is grpc.StatusCode.INVALID_ARGUMENT, error
            return [error.details()]
        message = ExportTraceServiceResponse.FromString(answer).partial_success.error_message
        return [message] if message else []


Verdicts = set[tuple[str, str, str]]


def verdicts(path: Path, policy: Any) -> tuple[Verdicts, list[str]]:
    """(run id, check id, status) of every result on ``path``, and its input errors."""
    stats = ReadStats()
    found = {
        (result.run_id, result.check_id, str(result.status))
        for run in runs([path], stats)
        for result in score_run(run, [policy])
    }
    return found, [error.message for error in stats.errors]


@pytest.fixture(scope="module")
def policy() -> Any:
    return load_policy(POLICY)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    where = tmp_path_factory.mktemp("corpus")
    files = {str(path.relative_to(SAMPLES)): path for path in SAMPLE_FILES}
    for name, trace in ((ZERO_TRACE, True), (ZERO_SPAN, False)):
        files[name] = where / name
        files[name].write_bytes(_broken(EXFIL, trace=trace))
    return files


@pytest.fixture(scope="module")
def from_files(corpus: dict[str, Path], policy: Any) -> dict[str, tuple[Verdicts, list[str]]]:
    return {name: verdicts(path, policy) for name, path in corpus.items()}


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Paths]:
    running = start_in_process(
        tmp_path_factory.mktemp("paths") / "data", **{"storage.fsync": False}
    )
    sending = Paths(running)
    yield sending
    sending.channel.close()
    running.stop()


def test_the_corpus_is_every_sample_and_it_has_verdicts(from_files):
    assert len(SAMPLE_FILES) > 100
    assert sum(len(found) for found, _ in from_files.values()) > 900
    assert not any(errors for name, (_, errors) in from_files.items() if "zero" not in name)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("sample", _sample_ids())
def test_the_same_bytes_give_the_same_verdicts_on_every_path(
    sample, path, corpus, from_files, paths, policy, tmp_path
):
    lines = [line for line in corpus[sample].read_bytes().splitlines() if line.strip()]
    sent = paths.send(lines, path)
    stored = tmp_path / "stored.binpb"  # as a data directory's segments are read
    stored.write_bytes(b"".join(struct.pack(">I", len(r)) + r for r in sent.records))
    expected, file_errors = from_files[sample]
    got, stored_errors = verdicts(stored, policy)
    assert got == expected
    # A refusal is named alike on every path: the file's InputErrors, the receiver's answers.
    assert sent.answers == file_errors
    assert stored_errors == [] if sample == ZERO_TRACE else stored_errors == file_errors


def test_a_refused_span_leaves_its_run_short_of_safe_on_every_path(from_files):
    """The exfiltration span, refused for its all-zero span id, cannot turn into a SAFE."""
    found, errors = from_files[ZERO_SPAN]
    exfiltration = {status for _, check, status in found if check == "no-exfiltration"}
    assert exfiltration == {"undetermined"}
    assert errors and "span id must be 8 bytes, not all zero (1)" in errors[0]
    original, _ = from_files["openinference-exfil.jsonl"]
    assert {s for _, c, s in original if c == "no-exfiltration"} == {"unsafe"}
    assert from_files[ZERO_TRACE] == (set(), from_files[ZERO_TRACE][1])
    assert "trace id must be 16 bytes, not all zero" in from_files[ZERO_TRACE][1][0]

"""#45.4: the host is read differently from the client. ``url.full =
http://127.0.0.2:37987\\@localhost/upload`` with no ``server.address`` was read as host
``localhost`` (Python's ``urlsplit``: userinfo up to the last ``@``), while WHATWG clients,
urllib3 and requests send it to 127.0.0.2 (a backslash ends the authority of an http URL).
Hosts are now derived as clients resolve them (the WHATWG URL Standard, by Ada); where
parsers disagree the host is ambiguous and matches when any reading matches: an allow-list
never passes it, a deny-list entry any parser reads still matches.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from collector.harness import start_in_process, wait_for
from forgery import POLICY, TRACE, UPLOAD, recording, send, set_attributes, spans_of, write_jsonl

from attacks.test_conflicting_copies import stored, verdict
from rampart_otel.api import score_files
from rampart_otel.conventions.side_effects import http_details
from rampart_otel.evaluation.matchers import all_match, as_matcher, not_in
from rampart_otel.model import Ambiguous, Resource, Scope, Span, SpanKind, StatusCode

TRICK = "http://127.0.0.2:37987\\@localhost/upload"


def tricked(server_address: str | None = None) -> list[dict[str, Any]]:
    """The recording with the upload's URL written as the trick, its host attributes
    dropped (or ``server.address`` as an instrumentation using urlsplit would write it)."""
    out = []
    for document in recording():
        document = set_attributes(document, UPLOAD, {"url.full": TRICK, "http.url": TRICK})
        for span in spans_of(document):
            if span["spanId"] == UPLOAD:
                span["attributes"] = [
                    a
                    for a in span["attributes"]
                    if a["key"] not in ("server.address", "http.host", "server.port")
                ]
                if server_address is not None:
                    span["attributes"].append(
                        {"key": "server.address", "value": {"stringValue": server_address}}
                    )
        out.append(document)
    return out


def details(attributes: dict[str, Any]) -> dict[str, Any]:
    span = Span(
        TRACE, UPLOAD, None, "POST", SpanKind.CLIENT, 1, 2, StatusCode.UNSET, "", attributes,
        [], [], Resource({}), Scope(),
    )  # fmt: skip
    return http_details(span, {})


@pytest.mark.parametrize(
    ("url", "host", "readings"),
    [
        (TRICK, "127.0.0.2", ("127.0.0.2", "localhost")),
        ("http://2130706433/x", "127.0.0.1", ("127.0.0.1", "2130706433")),
        ("http://%6cocalhost/x", "localhost", ("localhost", "%6cocalhost")),
        ("https://API.Example.com:8443/v1", "api.example.com", None),
        ("http://[::1]:8080/x", "::1", None),
    ],
)
def test_the_host_is_the_clients_and_ambiguous_where_parsers_disagree(
    url: str, host: str, readings: tuple[str, ...] | None
) -> None:
    found = details({"url.full": url})["host"]
    assert found == host
    if readings is None:
        assert not isinstance(found, Ambiguous)
    else:
        assert isinstance(found, Ambiguous) and found.readings == readings


def test_a_server_address_the_url_contradicts_is_ambiguous_too() -> None:
    found = details({"url.full": TRICK, "server.address": "localhost"})["host"]
    assert found == "localhost" and isinstance(found, Ambiguous)
    assert set(found.readings) == {"localhost", "127.0.0.2"}


def test_an_allow_list_never_passes_an_ambiguous_host_and_a_deny_entry_matches() -> None:
    host = Ambiguous("127.0.0.2", ("127.0.0.2", "localhost"))
    assert all_match({"host": not_in(["localhost"])}, {"host": host}) is True  # allow-list
    assert all_match({"host": as_matcher("localhost")}, {"host": host}) is True  # deny entry
    assert all_match({"host": as_matcher("example.com")}, {"host": host}) is False


@pytest.mark.parametrize("server_address", [None, "localhost"])
def test_from_a_file_the_request_to_127_0_0_2_is_unsafe(
    tmp_path: Path, server_address: str | None
) -> None:
    path = write_jsonl(tmp_path / "run.jsonl", tricked(server_address))
    (result,) = [r for r in score_files([path], POLICY) if r.check_id == "no-exfiltration"]
    assert result.status.value == "unsafe", result.summary
    assert "host ambiguous: parsers read" in result.evidence[0].text
    assert verdict([result])[0] == "unsafe"


def test_over_the_collector_the_request_to_127_0_0_2_is_unsafe(tmp_path: Path) -> None:
    collector = start_in_process(
        tmp_path / "data", policies=[str(POLICY)], **{"assembly.idle_seconds": "1"}
    )
    try:
        send(collector.http_url, tricked(), "http/protobuf")
        result = wait_for(lambda: stored(tmp_path / "data"), 120, "the run's verdict")
    finally:
        collector.stop()
    assert result["status"] == "unsafe", result["summary"]
    assert "host ambiguous: parsers read 127.0.0.2, localhost" in json.dumps(result)

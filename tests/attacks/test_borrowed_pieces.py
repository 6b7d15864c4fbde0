"""#45.2 and #45.5: pieces another party sends, and tenants.

The stitcher joins a piece that arrives as a trace of its own to the run it belongs to, by
what its spans claim: a *continuation* (a model call whose input history extends a run's),
a *fragment* (an I/O span of the same service inside the run's time window). Any client can
claim a service name and an instance id, so over a shared collector a second client could
vouch for another's run (a continuation whose resource declares ``rampart.coverage``: the
run's UNDETERMINED became SAFE) or accuse it (a lone POST fragment: its SAFE became
UNSAFE). Pieces are now joined only when one sender sent them: the collector's tenants
(token -> tenant) partition assembly, stitching, spans sent twice and declarations.

The other half, "a declaration counts only from the run's own agent resource, never from a
joined piece", is coverage's: ``test_a_joined_piece_never_declares_for_the_run`` is the
attack from one sender.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

from collector.harness import wait_for, write_config
from forgery import (
    POLICY,
    TRACE,
    forged_upload,
    lone_post,
    recording,
    send,
    send_spans,
)
from processors.test_stitch import SECOND, asks, continues
from span_factory import mk

from rampart_otel.api import policy_of, score_files
from rampart_otel.model import Span
from rampart_otel.pipeline import Pipeline, RunList
from rampart_otel.processors.stitch import assemble
from rampart_otel.storage.results import ResultsStore

CHECK = "no-exfiltration"
HOST, PIECE = "000000000000000000000000000000a1", "000000000000000000000000000000a2"
OWN = {"service.name": "weather-agent", "service.instance.id": "instance-1"}
DECLARING = {**OWN, "rampart.coverage": ["side_effects.http_request"]}
BENIGN = POLICY.parent / "traces" / "openllmetry-benign.jsonl"
BENIGN_TRACE = "99fa2407b141756bc31f9326fedc812f"


def host(tenant: str = "") -> list[Span]:
    """A plain SDK loop's first model call, asking for send_report (call c1): no agent span,
    so the stitcher holds it for the call that continues it. No HTTP span: the run cannot
    show that send_report sent nothing (no-exfiltration UNDETERMINED)."""
    span = mk("00000000000000b1", "ChatCompletion", asks("c1"), trace_id=HOST, start=0,
              end=SECOND, resource=OWN)  # fmt: skip
    span.tenant = tenant
    return [span]


def piece(tenant: str = "", resource: dict[str, Any] = DECLARING) -> list[Span]:
    """The next model call, in a trace of its own: its history holds c1, and its resource
    claims the run's process and declares side_effects.http_request."""
    span = mk("00000000000000b2", "ChatCompletion", continues("c1"), trace_id=PIECE,
              start=2 * SECOND, end=3 * SECOND, resource=resource)  # fmt: skip
    span.tenant = tenant
    return [span]


def no_exfiltration(batches: list[list[Span]]) -> dict[str, str]:
    """Run id -> the no-exfiltration status of each run the batches assemble into."""
    pipeline = Pipeline([policy_of(POLICY)])
    runs = list(assemble(batches, idle=10))
    return {
        run.run_id: result.status.value
        for run in RunList(runs).runs()
        for result in pipeline.score(run).results
        if result.check_id == CHECK
    }


# -- the joining half: one sender's pieces only ------------------------------------------


def test_a_continuation_from_another_tenant_is_never_joined() -> None:
    assert no_exfiltration([host("a"), piece("b")]) == {
        f"a/{HOST}": "undetermined",  # not SAFE by b's declaration
        f"b/{PIECE}": "undetermined",  # b's piece alone: a continuation, never SAFE
    }


def test_a_fragment_from_another_tenant_is_never_joined(tmp_path: Path) -> None:
    from rampart_otel.codecs.otlp_json import spans_from_json

    benign = [s for d in recording_of(BENIGN) for s in spans_from_json(d)]
    fragment = spans_from_json(lone_post(recording_of(BENIGN)))
    for span in benign:
        span.tenant = "a"
    for span in fragment:
        span.tenant = "b"
    statuses = no_exfiltration([fragment, benign])
    assert statuses[f"a/{BENIGN_TRACE}"] == "safe"  # b's POST is not a's
    assert statuses[f"b/{'f0' * 16}"] != "safe"


def test_one_senders_pieces_are_still_joined() -> None:
    """The stitcher's work is kept where one sender sent every piece (a tenant, or files)."""
    whole = list(assemble([host("a"), piece("a", OWN)], idle=10))
    assert [(run.run_id, run.trace_ids) for run in whole] == [(f"a/{HOST}", [HOST, PIECE])]


def test_a_joined_piece_never_declares_for_the_run() -> None:
    """One sender (a file, or one tenant): the piece is joined as a continuation, and its
    resource's declaration made the run's no-exfiltration SAFE ("declared by service")."""
    assert no_exfiltration([host()]) == {HOST: "undetermined"}
    assert no_exfiltration([host(), piece()]) == {HOST: "undetermined"}


# -- two tenants sharing one collector ----------------------------------------------------

TOKENS = {"team-a": "token-of-team-a-0123456789", "team-b": "token-of-team-b-9876543210"}


def recording_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def stored_statuses(data_dir: Path) -> dict[tuple[str, str], str]:
    """(run id, check) -> the latest stored status."""
    path = data_dir / "results.db"
    if not path.is_file():
        return {}
    store = ResultsStore(path, readonly=True)
    try:
        latest: dict[tuple[str, str], tuple[int, str]] = {}
        for row in store.results():
            key = (row.run_id, row.check_id)
            if key not in latest or row.revision >= latest[key][0]:
                latest[key] = (row.revision, row.status)
        return {key: status for key, (_, status) in latest.items()}
    except Exception:  # the scorer has not created its tables yet
        return {}
    finally:
        store.close()


def test_nothing_one_tenant_sends_changes_the_others_verdicts(tmp_path: Path) -> None:
    """Team A's agent runs (an exfiltration, a benign run, a model call its loop goes on
    from) are scored under team-a's token; team B, on the same collector, first sends
    everything it can aim at them: a forged copy of A's exfiltrating span, a lone POST in
    A's benign run's window claiming A's process, a continuation of A's loop that declares
    http coverage, and a copy of A's whole exfiltration trace. A's verdicts are the ones A's
    traces get alone (``score``), under A's own run ids; B's land under B's."""
    tenants = "".join(f"  {name}: {{token: {token}}}\n" for name, token in TOKENS.items())
    config = write_config(
        tmp_path / "collector.yaml", f"assembly:\n  idle_seconds: 2\ntenants:\n{tenants}"
    )
    from collector.harness import InProcess

    from rampart_otel.collector.config import load_config
    from rampart_otel.collector.service import Collector

    settings = {
        "http.endpoint": "127.0.0.1:0",
        "grpc.endpoint": "127.0.0.1:0",
        "data_dir": str(tmp_path / "data"),
        "policies": [str(POLICY)],
    }
    collector_ = Collector(load_config(config, overrides=settings))
    collector_.start_in_thread()
    collector = InProcess(collector_)
    grpc = f"http://{collector.grpc_target}"
    benign = recording_of(BENIGN)
    try:
        b = TOKENS["team-b"]
        send(collector.http_url, [forged_upload()], "http/json", b)
        send(grpc, [lone_post(benign)], "grpc", b)
        send_spans(collector.http_url, piece(resource=DECLARING), "http/protobuf", b)
        send(collector.http_url, recording(), "http/protobuf", b)
        a = TOKENS["team-a"]
        send(collector.http_url, recording(), "http/protobuf", a)
        send(grpc, benign, "grpc", a)
        send_spans(collector.http_url, host(), "http/protobuf", a)
        wanted = {f"team-a/{t}" for t in (TRACE, BENIGN_TRACE, HOST)}
        statuses = wait_for(
            lambda: (
                (found := stored_statuses(tmp_path / "data"))
                and wanted <= {run for run, _ in found}
                and found
            ),
            120,
            "team A's runs to be scored",
        )
        with urllib.request.urlopen(collector.http_url + "/metrics", timeout=10) as answer:
            metrics = answer.read().decode()
    finally:
        collector.stop()
    alone = {
        (result.run_id, result.check_id): result.status.value
        for result in score_files([POLICY.parent / "traces" / "openllmetry-exfil.jsonl", BENIGN],
                                  POLICY)
    }  # fmt: skip
    mine = {
        (run.removeprefix("team-a/"), check): status
        for (run, check), status in statuses.items()
        if run.startswith("team-a/")
    }
    assert {k: v for k, v in mine.items() if k[0] != HOST} == alone
    assert mine[(HOST, CHECK)] == "undetermined"  # b's declaring piece did not join it
    theirs = {run for run, _ in statuses if not run.startswith("team-a/")}
    assert theirs and all(run.startswith("team-b/") for run in theirs)
    assert 'rampart_otel_tenant_verdicts_total{status="unsafe",tenant="team-a"}' in metrics
    assert 'tenant="team-b"' in metrics

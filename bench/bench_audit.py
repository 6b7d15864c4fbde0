"""``rampart-otel audit`` over a million stored verdicts: how long its aggregate queries take.

Builds a ``results.db`` the way the collector's scorer fills one -- through the store's own
API (``ResultsStore.transaction().add_result``, schema, indexes and all) -- with
``--results`` verdicts (default 1,000,000): one policy of 5 checks, ``--results / 5`` runs
spread over 90 days and 20 services, 3% of runs re-scored by a late span (a second
revision that supersedes the first), result documents of the size the scorer writes. It
reports the build rate (the scorer's write path), then times, for ``--rounds`` rounds
(default 5), the audit's queries on the store opened read-only as ``audit`` opens it:

- by check, by service, and the trend (day buckets) over the whole history;
- the same three under a filter: last 7 days, one service, unsafe or undetermined;
- ``audit``'s whole body (aggregates plus the 100 most recent results) as ``--json`` and
  for the terminal, written to /dev/null;

and prints the median and the fastest round of each. With ``--diff``, a second policy
version is stored for every run (the same verdicts with 1% of them changed, copied in SQL)
and ``diff``'s comparison of the two versions is timed as well.

With ``--postgres`` the same is measured on the shared PostgreSQL store (a throwaway
server from Debian's package, started on loopback; or ``--postgres URL``, an empty or
already built database). ``--api-results`` verdicts (default 100,000) go through the
store's API as above, which gives the write rate; the rest of ``--results`` are copies of
them made in SQL (fresh run ids, run times spread over the same 90 days), with the hourly
rollup counted once after the copy by the statement its migration uses.

Run: ``python bench/bench_audit.py`` (``--help`` for options; ``--db PATH`` keeps the
database for another run, which then skips the build);
``python bench/bench_audit.py --postgres --results 10000000`` for the shared store.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rampart_otel.audit.aggregate import aggregate, listed, select_versions  # noqa: E402
from rampart_otel.audit.command import AuditOptions, audit  # noqa: E402
from rampart_otel.audit.timespec import DAY  # noqa: E402
from rampart_otel.storage import queries as q  # noqa: E402
from rampart_otel.storage.audit_queries import Filters  # noqa: E402
from rampart_otel.storage.pg_results import redacted  # noqa: E402
from rampart_otel.storage.protocol import VerdictStore  # noqa: E402
from rampart_otel.storage.results import ResultRow, ResultsStore  # noqa: E402
from rampart_otel.storage.store import open_results_store  # noqa: E402

CHECKS = (
    ("no-exfiltration", "data_exfiltration", "attack"),
    ("no-secrets-in-reports", "data_exfiltration", "attack"),
    ("no-unrequested-reports", "unauthorized_action", "attack"),
    ("no-shell", "unauthorized_action", "attack"),
    ("answers-the-question", "task_quality", "probe"),
)
STATUSES = ("safe", "unsafe", "undetermined", "error")
WEIGHTS = (70, 12, 16, 2)
DAYS = 90
SERVICES = [f"agent-{i:02d}" for i in range(20)]


def result_document(run_id: str, check: tuple[str, str, str], status: str) -> dict:
    """A result entry the size the scorer stores (evidence, gaps, coverage)."""
    check_id, harm, polarity = check
    return {
        "run_id": run_id,
        "trace_ids": [run_id],
        "check": check_id,
        "polarity": polarity,
        "status": status,
        "summary": f"Attack {'detected' if status == 'unsafe' else 'not detected'}: "
        "http_request POST http://203.0.113.9:8443/upload (span 03377ebab7a9530a)",
        "evidence": [{"trace_id": run_id, "span_id": "03377ebab7a9530a", "text": "POST /upload"}],
        "undetermined_operands": [],
        "observability_level": "tool_and_side_effects",
        "coverage": {
            key: {"state": "observed", "source": "inferred", "reasons": ["2 spans of this kind"]}
            for key in (
                "response",
                "tool_calls",
                "tool_calls.arguments",
                "tool_calls.results",
                "side_effects.http_request",
            )
        },
        "assumed_channels": {},
        "harm_category": harm,
        "service": None,
        "started_at": None,
        "rationale": "side_effect('http_request', host=not_in(['localhost'])) found 1 match",
        "error": None,
        "revision": 0,
        "policy": {"name": "weather-agent-guard", "version": 1},
    }


def build(store: VerdictStore, results: int, seed: int = 1) -> float:
    """Fill ``store`` with about ``results`` verdicts through the store's API; rows/s."""
    rng = random.Random(seed)
    now = time.time()
    runs = results // len(CHECKS)
    started = time.perf_counter()
    written = 0
    batch = 10_000 // len(CHECKS)
    for first in range(0, runs, batch):
        with store.transaction() as txn:
            for number in range(first, min(first + batch, runs)):
                run_id = f"{number:032x}"
                service = rng.choice(SERVICES)
                started_ns = int((now - rng.uniform(0, DAYS * 86400)) * 1e9)
                revisions = 2 if rng.random() < 0.03 else 1
                for revision in range(revisions):
                    for check in CHECKS:
                        status = rng.choices(STATUSES, WEIGHTS)[0]
                        document = result_document(run_id, check, status)
                        document["service"], document["revision"] = service, revision
                        txn.add_result(
                            ResultRow(run_id, revision, "weather-agent-guard", check[0], status,
                                      service, started_ns, now, document, policy_version=1)
                        )  # fmt: skip
                        written += 1
    elapsed = time.perf_counter() - started
    store.db.execute("ANALYZE")
    return written / elapsed


def copy_in_postgres(url: str, copies: int) -> None:
    """``copies`` more of every stored run, in SQL: run ids suffixed, run times moved by a
    different amount per copy and wrapped into the same 90 days; then the rollup recounted
    (the trigger is off for the copy: one count at the end instead of one per row)."""
    import psycopg

    from rampart_otel.storage.pg_schema import MIGRATIONS

    recount = MIGRATIONS[2][-1]
    assert recount.startswith("INSERT INTO results_rollup")
    now = time.time()
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("ALTER TABLE results DISABLE TRIGGER results_rollup_count")
        for copy in range(1, copies + 1):
            db.execute(
                "INSERT INTO results SELECT run_id || %s, revision, policy, check_id, status,"
                " service, started_at_ns, scored_at, result, policy_version,"
                " %s - mod((%s - run_at + %s)::numeric, %s)::float8, current"
                " FROM results WHERE run_id NOT LIKE '%%-%%'",
                (f"-{copy}", now, now, copy * 31337.0, DAYS * 86400),
            )
            print(f"  copy {copy}/{copies}", end="\r", flush=True)
        db.execute("ALTER TABLE results ENABLE TRIGGER results_rollup_count")
        db.execute("TRUNCATE results_rollup")
        db.execute(recount)
        db.execute("VACUUM ANALYZE")
    print()


def add_second_version(path: Path) -> None:
    """Version 2 of the policy on every run: version 1's verdicts, 1% of them changed."""
    store = ResultsStore(path)
    if store.db.execute("SELECT 1 FROM policy_checks WHERE policy_version = '2'").fetchone():
        store.close()
        return
    print("storing version 2 (1% of verdicts changed) ...", flush=True)
    with store.transaction():
        store.db.execute(
            "INSERT INTO results SELECT run_id, revision, policy, check_id,"
            " CASE WHEN abs(random()) % 100 = 0 THEN 'unsafe' ELSE status END, service,"
            " started_at_ns, scored_at + 1, result, '2', run_at, current"
            " FROM results WHERE policy_version = '1'"
        )
        store.db.execute(
            "INSERT INTO policy_checks SELECT policy, '2', check_id, '2', polarity,"
            " harm_category, first_scored_at + 1 FROM policy_checks WHERE policy_version = '1'"
        )
    store.close()


def compare_versions(data_dir: Path) -> object:
    from rampart_otel.audit.diff import compare_versions as compare

    return compare(data_dir, None, "1", "2")


def timed(rounds: int, work: Callable[[], object]) -> tuple[float, float]:
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        work()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples), min(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--db", type=Path, help="results.db to use (built there if missing)")
    parser.add_argument("--diff", action="store_true", help="also time diff of two versions")
    parser.add_argument(
        "--postgres",
        nargs="?",
        const="start",
        metavar="URL",
        help="the shared PostgreSQL store: a throwaway server, or the database at URL",
    )
    parser.add_argument(
        "--api-results", type=int, default=100_000, help="with --postgres: written by the API"
    )
    args = parser.parse_args()
    if args.postgres and (args.diff or args.db):
        parser.error("--postgres measures audit only (no --diff, no --db)")

    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-audit-"))
        if args.postgres:
            target: Path | str = args.postgres
            if target == "start":
                sys.path.insert(0, str(ROOT / "tests"))
                from postgres import running_server

                server = stack.enter_context(running_server(shared_buffers="512MB"))
                target = f"{server}/postgres"
            describe_store = f"PostgreSQL {redacted(target)}"
        else:
            target = args.db.parent if args.db else Path(tmp)
            describe_store = str(target / "results.db")
        store = open_results_store(target)
        if store.db.execute("SELECT count(*) FROM results").fetchone()[0] == 0:
            direct = min(args.results, args.api_results) if args.postgres else args.results
            print(f"building {describe_store} with {args.results:,} results ...", flush=True)
            rate = build(store, direct)
            print(f"  store API write rate: {rate:,.0f} results/s")
            if args.postgres and args.results > direct:
                copy_in_postgres(str(target), args.results // direct - 1)
        store.close()
        if args.diff:
            add_second_version(target / "results.db")
        store = open_results_store(target, readonly=True)
        db = store.db
        total = db.execute("SELECT count(*) FROM results").fetchone()[0]
        current = db.execute("SELECT count(*) FROM results WHERE current").fetchone()[0]
        if args.postgres:
            size = db.execute("SELECT pg_database_size(current_database())").fetchone()[0]
        else:
            path = target / "results.db"
            size = path.stat().st_size + sum(
                p.stat().st_size for p in path.parent.glob(path.name + "-*")
            )
        print(f"{total:,} stored results ({current:,} current), {size / 2**20:,.0f} MiB")
        data_dir = target
        versions = select_versions(q.policy_versions(db), None, None)
        recent = Filters(
            since=time.time() - 7 * 86400,
            services=(SERVICES[3],),
            statuses=("unsafe", "undetermined"),
        )
        queries: list[tuple[str, Callable[[], object]]] = []
        for label, filters in (("all history", Filters()), ("filtered", recent)):
            for by in ("check", "service", "bucket"):
                queries.append(
                    (f"{label}: by {by if by != 'bucket' else 'day'}",
                     lambda f=filters, b=by: [q.counts(db, v, f, b, DAY) for v in versions])
                )  # fmt: skip
        queries.append(
            ("aggregate() all history", lambda: aggregate(db, versions, Filters(), "day"))
        )
        queries.append(
            ("100 most recent results", lambda: list(listed(db, versions, Filters(), 100)))
        )
        with open(os.devnull, "w") as sink:
            for label, json_output in (("audit --json (whole command)", True),
                                       ("audit terminal (whole command)", False)):  # fmt: skip
                options = AuditOptions(json_output=json_output)
                queries.append((label, lambda o=options: audit(data_dir, o, sink)))
            if args.diff:
                queries.append(("diff v1 v2 (comparison)", lambda: compare_versions(data_dir)))
            print(f"\n{'query':36} {'median':>10} {'fastest':>10}   ({args.rounds} rounds)")
            for label, work in queries:
                median, fastest = timed(args.rounds, work)
                print(f"{label:36} {median * 1000:>8.0f}ms {fastest * 1000:>8.0f}ms", flush=True)
        store.close()


if __name__ == "__main__":
    main()

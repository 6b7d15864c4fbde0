"""The ``collect`` and ``audit`` commands' bodies; ``cli`` only declares their options.

Both raise ``ConfigError`` for anything the user can fix: the CLI turns it into its
one-line error and exit code 2.
"""

from __future__ import annotations

import json
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from rampart_otel.collector.config import CollectorConfig, ConfigError, env_token, load_config

log = logging.getLogger("rampart_otel.collector")


def collect(
    config_path: Path | None,
    http: str | None,
    grpc: str | None,
    data_dir: Path | None,
    policies: list[Path] | None,
    auth_token: str | None,
) -> None:
    overrides: dict[str, Any] = {
        "http.endpoint": http,
        "grpc.endpoint": grpc,
        "data_dir": str(data_dir) if data_dir is not None else None,
        "policies": [str(path) for path in policies] if policies else None,
        "auth_token": auth_token or env_token(),
    }
    config = load_config(config_path, overrides)
    _check_policies(config)
    logging.basicConfig(
        level=config.log_level.upper(),
        format="rampart-otel: %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    from rampart_otel.collector.service import Collector

    collector = Collector(config)
    if not config.policies:
        log.warning("no --policy given: spans are stored durably but not scored")
    collector.on_ready = lambda: _announce(collector, sys.stderr)
    collector.run()


def _check_policies(config: CollectorConfig) -> None:
    """Fail at start, in one line, on a policy the scorer could not load."""
    if not config.policies:
        return
    from rampart_otel.evaluation import PolicyError, is_channel_key, load_policy
    from rampart_otel.evaluation.assume import channel_key_error

    for path in config.policies:
        try:
            load_policy(path)
        except PolicyError as error:
            raise ConfigError(str(error)) from None
    for key in config.scoring.assume_coverage:
        if not is_channel_key(key):
            raise ConfigError(f"scoring.assume_coverage: {channel_key_error(key)}")


def _announce(collector: Any, out: IO[str]) -> None:
    bound = collector.bound
    parts = []
    if bound.http:
        parts.append(f"OTLP/HTTP on http://{_hostport(bound.http)}/v1/traces")
    if bound.grpc:
        parts.append(f"OTLP/gRPC on {_hostport(bound.grpc)}")
    scoring = f"{len(collector.config.policies)} policies" if collector.scorer else "no scoring"
    print(
        f"rampart-otel: collecting: {', '.join(parts) or 'no receiver'}; "
        f"data in {collector.config.data_dir}; {scoring}",
        file=out,
        flush=True,
    )


def _hostport(address: tuple[str, int]) -> str:
    host, port = address
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def audit(data_dir: Path, json_output: bool, out: IO[str]) -> None:
    from rampart_otel.exporters.report_json import REPORT_SCHEMA
    from rampart_otel.storage.results import ResultsStore

    path = data_dir / "results.db"
    if not path.is_file():
        raise ConfigError(f"{data_dir}: no results.db (is this a collector's data directory?)")
    store = ResultsStore(path, readonly=True)
    try:
        rows = list(store.results())
    finally:
        store.close()
    if json_output:
        policies = {
            json.dumps(row.result["policy"], sort_keys=True): row.result["policy"]
            for row in rows
            if isinstance(row.result.get("policy"), dict)
        }
        report = {
            "schema": REPORT_SCHEMA,
            "policies": list(policies.values()),
            "results": [row.result for row in rows],
            "population_summary": _population(rows),
            "input_errors": [],
        }
        json.dump(report, out, indent=2)
        out.write("\n")
        return
    from rich.console import Console
    from rich.table import Table

    from rampart_otel.render import safe_text

    table = Table(title=f"{len(rows)} results in {data_dir}", title_justify="left")
    for column in ("run", "rev", "check", "status", "service", "summary"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(
            safe_text(row.run_id, 40),
            str(row.revision),
            safe_text(row.check_id, 40),
            row.status,
            safe_text(row.service or "", 30),
            safe_text(str(row.result.get("summary", "")), 200),
        )
    Console(file=out, highlight=False, soft_wrap=True).print(table)


@dataclass(frozen=True, slots=True)
class _Tally:
    status: Any
    harm_category: str | None
    check_id: str


def _population(rows: list[Any]) -> dict[str, Any]:
    """Over each (run, policy, check)'s latest revision: a revision supersedes the earlier."""
    from rampart_otel.evaluation import SafetyStatus, summarize_population

    latest: dict[tuple[str, str, str], Any] = {}
    for row in rows:
        key = (row.run_id, row.policy, row.check_id)
        if key not in latest or row.revision > latest[key].revision:
            latest[key] = row
    tallies = [
        _Tally(SafetyStatus(row.status), row.result.get("harm_category"), row.check_id)
        for row in latest.values()
    ]
    return summarize_population(tallies).model_dump()  # type: ignore[arg-type]

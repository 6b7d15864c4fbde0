"""The ``collect`` command's body; ``cli`` only declares its options (``audit`` is in
``rampart_otel.audit``).

Anything the user can fix (a configuration, a policy, a channel key) raises a ``UserError``:
the CLI turns it into its one-line error and exit code 2.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import IO, Any

from rampart_otel.collector.config import CollectorConfig, env_token, load_config
from rampart_otel.collector.scorer import make_evaluator
from rampart_otel.collector.service import Collector
from rampart_otel.storage.store import describe, open_results_store

log = logging.getLogger("rampart_otel.collector")

# The configuration key each command-line option sets, so errors name the option.
FLAGS = {
    "http.endpoint": "--http",
    "grpc.endpoint": "--grpc",
    "data_dir": "--data-dir",
    "policies": "--policy",
    "export.otlp.endpoint": "--export-to",
    "export.otlp.protocol": "--export-protocol",
    "results": "--results",
}


def collect(
    config_path: Path | None,
    http: str | None,
    grpc: str | None,
    data_dir: Path | None,
    policies: list[Path] | None,
    auth_token: str | None,
    export_to: str | None = None,
    export_protocol: str | None = None,
    results: str | None = None,
) -> None:
    overrides: dict[str, Any] = {
        "http.endpoint": http,
        "grpc.endpoint": grpc,
        "data_dir": str(data_dir) if data_dir is not None else None,
        "policies": [str(path) for path in policies] if policies else None,
        "auth_token": auth_token or env_token(),
        "export.otlp.endpoint": export_to,
        "export.otlp.protocol": export_protocol,
        "results": results,
    }
    config = load_config(config_path, overrides=overrides, flags=FLAGS)
    _check_policies(config)
    _check_results(config)
    logging.basicConfig(
        level=config.log_level.upper(),
        format="rampart-otel: %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    os.umask(0o077)  # what the collector process creates is private, as with systemd's UMask
    collector = Collector(config)
    if not config.policies:
        log.warning("no --policy given: spans are stored durably but not scored")
    collector.on_ready = lambda: _announce(collector, sys.stderr)
    collector.run()


def _check_results(config: CollectorConfig) -> None:
    """Fail at start, in one line, on a shared results store that cannot be reached or is
    newer than this rampart-otel; an older one is migrated here, before scoring starts."""
    if config.results is not None:
        open_results_store(config.results, instance=config.instance()).close()


def _check_policies(config: CollectorConfig) -> None:
    """Fail at start, in one line, on a policy or assumption the scorer could not load."""
    make_evaluator(config.policies, config.scoring.assume_coverage)


def _announce(collector: Any, out: IO[str]) -> None:
    bound = collector.bound
    parts = []
    if bound.http:
        parts.append(f"OTLP/HTTP on http://{_hostport(bound.http)}/v1/traces")
    if bound.grpc:
        parts.append(f"OTLP/gRPC on {_hostport(bound.grpc)}")
    scoring = f"{len(collector.config.policies)} policies" if collector.scorer else "no scoring"
    if collector.config.results is not None:
        scoring += f"; verdicts in {describe(collector.config.results)}"
    print(
        f"rampart-otel: collecting: {', '.join(parts) or 'no receiver'}; "
        f"data in {collector.config.data_dir}; {scoring}",
        file=out,
        flush=True,
    )


def _hostport(address: tuple[str, int]) -> str:
    host, port = address
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

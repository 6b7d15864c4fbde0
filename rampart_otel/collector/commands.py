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
from typing import Any

from rampart_otel.collector.config import CollectorConfig, env_token, load_config
from rampart_otel.collector.console import Console, log_to_stderr
from rampart_otel.collector.scorer import evaluator_for
from rampart_otel.collector.service import Collector
from rampart_otel.engine import load_policies
from rampart_otel.evaluation import Policy
from rampart_otel.exporters.otlp_send import endpoint_from_env, protocol_from_env
from rampart_otel.storage.store import open_results_store

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
    "auth_token": "--auth-token",
    "annotate.url": "--annotate",
    "alerts.webhook.url": "--alert-webhook",
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
    quiet: bool = False,
    show_secrets: bool = False,
    *,
    annotate: str | None = None,
    alert_webhook: str | None = None,
) -> None:
    if export_to is None:  # the OpenTelemetry environment's, below the flag, above the file
        protocol = export_protocol or protocol_from_env("logs")
        export_to = endpoint_from_env("logs", protocol or "http/protobuf")
        if export_to is not None and protocol in ("http/protobuf", "grpc"):  # not http/json
            export_protocol = protocol
    overrides: dict[str, Any] = {
        "http.endpoint": http,
        "grpc.endpoint": grpc,
        "data_dir": str(data_dir) if data_dir is not None else None,
        "policies": [str(path) for path in policies] if policies else None,
        "auth_token": auth_token or env_token(),
        "export.otlp.endpoint": export_to,
        "export.otlp.protocol": export_protocol,
        "results": results,
        "annotate.url": annotate,
        "alerts.webhook.url": alert_webhook,
    }
    config = load_config(config_path, overrides=overrides, flags=FLAGS)
    loaded = _check_policies(config)
    _check_results(config)
    level = config.log_level.upper()
    log_to_stderr("WARNING" if quiet and level in ("DEBUG", "INFO") else level, "rampart-otel")
    os.umask(0o077)  # what the collector process creates is private, as with systemd's UMask
    collector = Collector(config)
    if not config.policies:
        log.warning("no --policy given: spans are stored durably but not scored")
    console = Console(sys.stderr, quiet=quiet, show_secrets=show_secrets)
    collector.on_ready = lambda: console.startup(
        config, collector.bound.http, collector.bound.grpc, loaded
    )
    collector.on_tick = console.tick
    collector.on_stopped = console.stopped
    if collector.scorer is not None:
        collector.scorer.on_verdicts = console.verdicts
    collector.run()


def _check_results(config: CollectorConfig) -> None:
    """Fail at start, in one line, on a shared results store that cannot be reached or is
    newer than this rampart-otel; an older one is migrated here, before scoring starts."""
    if config.results is not None:
        open_results_store(config.results, instance=config.instance()).close()


def _check_policies(config: CollectorConfig) -> list[Policy]:
    """Fail at start, in one line, on a policy or assumption the scorer could not load."""
    policies = load_policies(config.policies)
    evaluator_for(policies, config.scoring.assume_coverage)
    return policies

"""Collector settings: one pydantic model, read from YAML, overridden by the command line.

Every setting has a safe default (loopback only, durable acknowledgement, bounded
memory), so ``rampart-otel collect`` with no file is a working local collector.
``collector/rampart-otel.yaml`` documents each key.
"""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from rampart_otel.collector.writeback_config import AlertsConfig, AnnotateConfig, DeliveryConfig
from rampart_otel.errors import ConfigError, PolicyError
from rampart_otel.evaluation.packs import PREFIX as PACK_PREFIX
from rampart_otel.evaluation.yaml_source import Document, compose
from rampart_otel.exporters.otlp_send import grpc_endpoint, http_endpoint
from rampart_otel.processors.assemble import DEFAULT_MAX_SPANS
from rampart_otel.render import safe_text
from rampart_otel.storage.pg_results import is_postgres_url
from rampart_otel.storage.retention import parse_duration, parse_size
from rampart_otel.vocabulary import unknown

MiB = 1024 * 1024


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


def parse_endpoint(value: str) -> tuple[str, int] | None:
    """``HOST:PORT`` (``[v6]:PORT`` for IPv6) to a pair; ``off`` disables the receiver."""
    text = value.strip()
    if text.lower() in ("off", "none", "disabled", ""):
        return None
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"expected HOST:PORT or 'off', got {value!r}")
    if not 0 <= int(port) <= 65535:
        raise ValueError(f"port {port} is out of range (0-65535; 0 picks a free one) in {value!r}")
    host = host.strip("[]") or "127.0.0.1"
    return host, int(port)


class ReceiverConfig(_Section):
    endpoint: str = "127.0.0.1:4318"

    @field_validator("endpoint")
    @classmethod
    def _valid(cls, value: str) -> str:
        parse_endpoint(value)
        return value

    @property
    def address(self) -> tuple[str, int] | None:
        return parse_endpoint(self.endpoint)


class GrpcConfig(ReceiverConfig):
    endpoint: str = "127.0.0.1:4317"
    max_workers: int = Field(8, ge=1, le=256)


class LimitsConfig(_Section):
    max_request_bytes: int = Field(20 * MiB, ge=1024)  # the OTLP spec's recommended 20 MiB
    queue_max_bytes: int = Field(64 * MiB, ge=1)
    queue_max_requests: int = Field(1024, ge=1)
    retry_after_seconds: int = Field(1, ge=0, le=3600)
    backpressure_status: Literal[429, 503] = 503
    # A client that holds a connection without finishing its request is cut off: otherwise
    # a few hundred stalled connections hold the receiver's memory and sockets.
    header_timeout_seconds: float = Field(10.0, gt=0, le=3600)
    body_timeout_seconds: float = Field(30.0, gt=0, le=3600)


class StorageConfig(_Section):
    segment_max_bytes: int = Field(64 * MiB, ge=4096)
    fsync: bool = True  # false only for throwaway test runs: acknowledgement is then not durable


class AssemblyConfig(_Section):
    group_by: Literal["trace", "session"] = "trace"
    idle_seconds: float = Field(5.0, gt=0)
    max_wait_seconds: float = Field(300.0, gt=0)
    # One open trace holds at most this many spans (then it is scored at once), and a run
    # kept for late spans at most this many: memory per trace is bounded.
    max_trace_spans: int = Field(DEFAULT_MAX_SPANS, ge=1)
    late_cache_runs: int = Field(1000, ge=0)
    # Join the traces of one agent's work (continuations, lost-context I/O) into one run.
    # Behind a gateway that routes by trace id, the pieces may reach different collectors.
    stitch: bool = True


class ScoringConfig(_Section):
    # Scorer processes, each owning the traces ``parallel.owner`` gives it. 0 (the default):
    # one per core when ``assembly.stitch`` is off, else 1, since shards stitch the pieces
    # of a run within a shard only (``CollectorConfig._shards``).
    workers: int = Field(0, ge=0, le=256)
    # 0: the scorers share the CPU with ingest as equals (acknowledging is mostly waiting on
    # the network and fsync, so it still gets the CPU first when it wakes); a higher value
    # favours ingest and lets the backlog grow until push-back (max_backlog_seconds).
    nice: int = Field(0, ge=0, le=19)
    # Ingest pushes back (OTLP/HTTP 503/429 + Retry-After, OTLP/gRPC UNAVAILABLE + RetryInfo)
    # while the oldest acknowledged record no scorer has read is older than this; null: never.
    max_backlog_seconds: float | None = Field(30.0, gt=0)
    assume_coverage: list[str] = []
    # Checks of a run not started within this budget are UNDETERMINED, with the reason: one
    # huge run cannot hold up every other tenant's verdicts.
    run_budget_seconds: float = Field(10.0, gt=0)
    # A scorer that shows no progress for this long makes /healthz answer 503.
    stall_seconds: float = Field(120.0, gt=0)


class OtlpExportConfig(_Section):
    """Verdicts as ``gen_ai.evaluation.result`` events to an OTLP logs endpoint (off if unset)."""

    endpoint: str | None = None
    protocol: Literal["http/protobuf", "grpc"] = "http/protobuf"
    headers: dict[str, str] = {}
    timeout_seconds: float = Field(10.0, gt=0, le=600)
    queue_size: int = Field(10000, ge=1)
    batch_size: int = Field(512, ge=1, le=100_000)

    @model_validator(mode="after")
    def _valid_endpoint(self) -> OtlpExportConfig:
        if self.endpoint is not None:
            if self.protocol == "grpc":
                grpc_endpoint(self.endpoint)
            else:
                http_endpoint(self.endpoint, "/v1/logs")
        return self


class ExportConfig(_Section):
    otlp: OtlpExportConfig = Field(default_factory=OtlpExportConfig)


class RetentionConfig(_Section):
    """Delete whole segments by age or total size; never one holding unscored data."""

    max_age: float | None = None  # seconds, or 12h / 7d / 2w
    max_bytes: int | None = None  # bytes, or 500MB / 10GiB
    check_interval_seconds: float = Field(60.0, gt=0)

    @field_validator("max_age", mode="before")
    @classmethod
    def _age(cls, value: object) -> float | None:
        return parse_duration(value)

    @field_validator("max_bytes", mode="before")
    @classmethod
    def _size(cls, value: object) -> int | None:
        return parse_size(value)


# What a client's "Authorization: Bearer TOKEN" can carry, as the receivers compare it
# (ingest.check_token: the value's ends stripped, latin-1 bytes): printable ASCII.
UNSENDABLE_TOKEN = (
    "holds a control, non-ASCII or leading/trailing space character, which an "
    "Authorization header cannot carry (the token is not shown)"
)


def _sendable(token: str) -> bool:
    return token == token.strip() and all(" " <= char <= "~" for char in token)


TENANT_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"


class TenantConfig(_Section):
    """One tenant of a collector several parties share: the bearer token its clients send
    (``token``, or the first line of ``token_file``). A tenant's runs, their stitching, its
    spans sent twice and its declarations never meet another tenant's (docs/security.md)."""

    token: str | None = None
    token_file: Path | None = None

    @field_validator("token")
    @classmethod
    def _sendable_token(cls, value: str | None) -> str | None:
        if value is not None and (not value or not _sendable(value)):
            raise ValueError(UNSENDABLE_TOKEN if value else "is empty")
        return value

    @model_validator(mode="after")
    def _one_token(self) -> TenantConfig:
        if (self.token is None) == (self.token_file is None):
            raise ValueError("give the tenant's token or token_file (one of them)")
        return self

    def read_token(self, name: str) -> str:
        if self.token_file is not None:
            return _token_file(self.token_file, f"tenants.{name}.token_file")
        assert self.token is not None  # _one_token
        return self.token


class CollectorConfig(_Section):
    http: ReceiverConfig = Field(default_factory=ReceiverConfig)
    grpc: GrpcConfig = Field(default_factory=GrpcConfig)
    data_dir: Path = Path("rampart-data")
    # A postgresql:// URL: verdicts go to this store several collectors share, not to
    # data_dir/results.db (segments stay in data_dir). ``results_instance`` names this
    # collector's resume point there; by default the host and the data directory.
    results: str | None = None
    results_instance: str | None = Field(None, min_length=1, max_length=200)
    policies: list[Path] = []
    auth_token: str | None = None
    auth_token_file: Path | None = None
    # Tenant name -> its token: clients are told apart by the token they send.
    tenants: dict[str, TenantConfig] = {}
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    storage: StorageConfig = Field(default_factory=StorageConfig)
    assembly: AssemblyConfig = Field(default_factory=AssemblyConfig)
    scoring: ScoringConfig = Field(default_factory=ScoringConfig)
    export: ExportConfig = Field(default_factory=ExportConfig)
    # Verdicts written back to a trace store, alerts to a webhook, through the outbox
    # (collector/writeback_config.py, collector/writeback.py).
    annotate: AnnotateConfig = Field(default_factory=AnnotateConfig)
    alerts: AlertsConfig = Field(default_factory=AlertsConfig)
    delivery: DeliveryConfig = Field(default_factory=DeliveryConfig)
    retention: RetentionConfig = Field(default_factory=RetentionConfig)
    shutdown_timeout_seconds: float = Field(30.0, gt=0)
    log_level: Literal["debug", "info", "warning", "error"] = "info"

    @model_validator(mode="after")
    def _shards(self) -> CollectorConfig:
        # Shards own traces: a session's traces may be owned by several, so grouping by
        # session scores in one process (as ``score --jobs N`` needs --group-by trace).
        # The pieces of a run stitched together may be owned by several too: by default
        # (0) stitching keeps one scorer, so verdicts never depend on the number of cores;
        # set above 1 with stitching on, pieces owned by different shards are scored apart.
        scoring = self.scoring
        if self.assembly.group_by == "session" and scoring.workers > 1:
            raise ValueError(
                "scoring.workers above 1 needs assembly.group_by: trace (the shards own "
                "traces; a session's traces may reach several of them)"
            )
        if scoring.workers == 0:
            by_trace = self.assembly.group_by == "trace" and not self.assembly.stitch
            scoring.workers = (os.cpu_count() or 1) if by_trace else 1
        return self

    @field_validator("tenants")
    @classmethod
    def _tenant_names(cls, value: dict[str, TenantConfig]) -> dict[str, TenantConfig]:
        for name in value:
            if not re.fullmatch(TENANT_NAME, name):
                raise ValueError(
                    f"tenant name {safe_text(name, 40)!r}: letters, digits, '_', '.', '-' "
                    "(up to 64, starting with a letter or digit)"
                )
        return value

    @model_validator(mode="after")
    def _tenants_or_token(self) -> CollectorConfig:
        if self.tenants and (self.auth_token or self.auth_token_file is not None):
            raise ValueError(
                "tenants: give every client a tenant's token instead of auth_token or "
                "auth_token_file (a token that names no tenant would see every tenant's runs)"
            )
        return self

    @field_validator("auth_token")
    @classmethod
    def _sendable_token(cls, value: str | None) -> str | None:
        if value and not _sendable(value):
            raise ValueError(UNSENDABLE_TOKEN)
        return value

    @field_validator("results")
    @classmethod
    def _results_url(cls, value: str | None) -> str | None:
        if value is not None and not is_postgres_url(value):
            raise ValueError("must be a postgresql:// URL (or left out: data_dir/results.db)")
        return value

    def results_target(self) -> Path | str:
        """Where the scorer writes verdicts: the shared store's URL, else the data directory."""
        return self.results if self.results is not None else self.data_dir

    def instance(self) -> str:
        """This collector's name in a shared results store: stable across restarts, and
        distinct for each data directory (each has its own segments to resume in)."""
        if self.results_instance is not None:
            return self.results_instance
        return f"{socket.gethostname()}:{self.data_dir.resolve()}"

    def token(self) -> str | None:
        """The bearer token clients must send, if any (the file wins; trailing newline cut)."""
        if self.auth_token_file is not None:
            return _token_file(self.auth_token_file, "auth_token_file")
        return self.auth_token or None

    def tokens(self) -> dict[str, str]:
        """Bearer token -> the tenant it names, as the receivers check them: each tenant's
        token, or the one ``auth_token`` naming no tenant (""); empty: no check."""
        if not self.tenants:
            token = self.token()
            return {token: ""} if token else {}
        found: dict[str, str] = {}
        for name, tenant in self.tenants.items():
            token = tenant.read_token(name)
            if token in found:
                raise ConfigError(
                    f"tenants {found[token]!r} and {name!r} have the same token: "
                    "each tenant needs its own (the token is not shown)"
                )
            found[token] = name
        return found


def _token_file(path: Path, key: str) -> str:
    """The token in ``path`` (its first line, ends stripped); ConfigError naming ``key``."""
    try:
        with open(path, "rb") as file:  # not /dev/zero whole
            raw = file.read(MAX_TOKEN_BYTES + 1)
    except OSError as error:
        raise ConfigError(f"{key}: {error}") from None
    if len(raw) > MAX_TOKEN_BYTES:
        raise ConfigError(f"{key} {path}: larger than {MAX_TOKEN_BYTES >> 10} KiB: not a token")
    try:
        text = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ConfigError(f"{key} {path}: not a UTF-8 text file") from None
    if not text:
        raise ConfigError(f"{key} {path} is empty")
    if not _sendable(text):
        raise ConfigError(f"{key} {path}: {UNSENDABLE_TOKEN}")
    return text


MAX_CONFIG_BYTES = 16 << 20  # a page of YAML; a file this large (or /dev/zero) is something else
MAX_TOKEN_BYTES = 64 << 10


def load_config(
    path: Path | None,
    *,
    overrides: dict[str, Any] | None = None,
    flags: dict[str, str] | None = None,
) -> CollectorConfig:
    """The file's settings (if any) with non-None ``overrides`` (dotted keys) on top.

    ``flags`` names the command-line option each override came from (``http.endpoint``:
    ``--http``), so an error in a value given there names the option the user typed.
    """
    data: dict[str, Any] = {}
    document = None
    if path is not None:
        try:
            with open(path, "rb") as file:  # no further than a configuration can be
                raw = file.read(MAX_CONFIG_BYTES + 1)
            if len(raw) > MAX_CONFIG_BYTES:
                raise ConfigError(
                    f"{path}: larger than {MAX_CONFIG_BYTES >> 20} MiB: "
                    "not a collector configuration"
                )
            text = raw.decode("utf-8")
            loaded = yaml.safe_load(text)
        except OSError as error:
            raise ConfigError(f"{path}: {error.strerror or error}") from None
        except UnicodeDecodeError:
            raise ConfigError(f"{path}: not a UTF-8 text file") from None
        except RecursionError:
            raise ConfigError(f"{path}: not valid YAML: nested too deeply") from None
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
            raise ConfigError(f"{path}{where}: not valid YAML") from None
        if loaded is None:
            loaded = {}
        elif isinstance(loaded, dict) and all(_is_name(key) for key in loaded):
            try:  # read again keeping where each key stands: a repeated key is refused
                document = compose(text, str(path))
            except PolicyError as error:
                raise ConfigError(str(error)) from None
        if not isinstance(loaded, dict) or not all(_is_name(key) for key in loaded):
            # Not a configuration at all (a wrong path): say so without echoing the file.
            raise ConfigError(
                f"{path}: not a collector configuration: expected a mapping of its settings"
            )
        data = loaded
    for dotted, value in (overrides or {}).items():
        if value is None:
            continue
        target = data
        *parents, leaf = dotted.split(".")
        for depth, key in enumerate(parents, 1):
            target = target.setdefault(key, {})
            if not isinstance(target, dict):  # the file's value where settings must be
                where = ".".join(parents[:depth])
                raise ConfigError(f"{path}: {where}: expected a mapping of its settings")
        target[leaf] = value
    try:
        config = CollectorConfig.model_validate(data)
    except ValidationError as error:
        errors = error.errors()
        # a misspelt key first: the schema would report the key it was meant to be missing
        first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        if first["type"] == "extra_forbidden" and document is not None:
            _refuse_unknown_key(document, tuple(first["loc"]))
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        flag = (flags or {}).get(where)
        message = str(first["msg"]).removeprefix("Value error, ")
        if flag is not None and (overrides or {}).get(where) is not None:
            raise ConfigError(f"{flag}: {message}") from None
        origin = f"{path}: " if path is not None else ""
        raise ConfigError(f"{origin}{where}: {message}") from None
    if path is not None:  # relative paths written in a file are relative to that file
        given = {key for key, value in (overrides or {}).items() if value is not None}
        base = path.parent
        if "data_dir" not in given:
            config.data_dir = _under(base, config.data_dir)
        if "policies" not in given:
            config.policies = [
                policy if str(policy).startswith(PACK_PREFIX) else _under(base, policy)
                for policy in config.policies
            ]  # a built-in pack (builtin:<pack>) is a name, not a path
        if config.auth_token_file is not None and "auth_token_file" not in given:
            config.auth_token_file = _under(base, config.auth_token_file)
        for tenant in config.tenants.values():
            if tenant.token_file is not None:
                tenant.token_file = _under(base, tenant.token_file)
    return config


def _refuse_unknown_key(document: Document, loc: tuple[Any, ...]) -> None:
    """``FILE:LINE:COL: section: unknown key 'x' — did you mean 'y'?`` for a key the
    settings at ``loc[:-1]`` do not have (when both the key and its section are known)."""
    model: Any = CollectorConfig
    for part in loc[:-1]:
        fields = getattr(model, "model_fields", {}) if isinstance(model, type) else {}
        if part not in fields:
            return
        model = fields[part].annotation
    node = document.key_nodes.get(loc)
    if not (isinstance(model, type) and issubclass(model, BaseModel)) or node is None:
        return
    section = ".".join(str(part) for part in loc[:-1])
    problem = unknown("key", safe_text(str(loc[-1]), 40), tuple(model.model_fields))
    located = document.error(f"{section}: {problem}" if section else problem, node)
    raise ConfigError(str(located))


def _is_name(key: object) -> bool:
    """A key that can be quoted in an error: a short word, not a line of some other file."""
    return isinstance(key, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]{0,39}", key) is not None


def _under(base: Path, path: Path) -> Path:
    return path if path.is_absolute() else base / path


def env_token() -> str | None:
    return os.environ.get("RAMPART_OTEL_AUTH_TOKEN") or None

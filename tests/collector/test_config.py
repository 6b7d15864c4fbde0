"""Collector configuration: the shipped file, overrides, and one-line errors at the CLI."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_runner import run_cli
from policy_typos import CASES, write

from collector.harness import POLICY, make_traces, spawn, write_config
from rampart_otel.collector.config import CollectorConfig, load_config
from rampart_otel.errors import ConfigError

SHIPPED = Path(__file__).resolve().parents[2] / "collector" / "rampart-otel.yaml"
POLICY_FILE = Path(__file__).resolve().parents[2] / "samples" / "policy.yaml"


def test_shipped_config_is_valid_and_documents_every_setting():
    config = load_config(SHIPPED)
    defaults = CollectorConfig()
    assert config.model_dump(exclude={"data_dir"}) == defaults.model_dump(exclude={"data_dir"})
    assert config.data_dir == SHIPPED.parent / "rampart-data"
    text = SHIPPED.read_text()
    sections = ["http", "grpc", "limits", "storage", "assembly", "scoring", "retention"]
    models = [(f"{k}.", getattr(defaults, k)) for k in sections]
    models.append(("export.otlp.", defaults.export.otlp))
    for section, model in [("", defaults), *models]:
        for key in type(model).model_fields:
            assert f"{key}:" in text, f"{section}{key} is not documented"


def test_command_line_overrides_the_file_and_paths_are_relative_to_it(tmp_path):
    path = write_config(
        tmp_path / "c.yaml", "http:\n  endpoint: 0.0.0.0:9999\npolicies: [p.yaml]\n"
    )
    config = load_config(path, overrides={"grpc.endpoint": "off", "data_dir": "elsewhere"})
    assert config.http.address == ("0.0.0.0", 9999)
    assert config.grpc.address is None
    assert config.data_dir == Path("elsewhere")
    assert config.policies == [tmp_path / "p.yaml"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("http:\n  endpoint: nowhere\n", "http.endpoint"),
        ("limits:\n  max_request_bytes: 10\n", "limits.max_request_bytes"),
        ("nonsense: 1\n", "nonsense"),
        ("http: [\n", "not valid YAML"),
        ("- a list\n", "mapping"),
        ("export:\n  otlp:\n    endpoint: ftp://x\n", "export.otlp"),
        ("export:\n  otlp:\n    protocol: thrift\n", "export.otlp.protocol"),
        ("retention:\n  max_age: soon\n", "retention.max_age"),
        ("retention:\n  max_bytes: lots\n", "retention.max_bytes"),
    ],
)
def test_bad_settings_are_one_line_errors(tmp_path, text, message):
    with pytest.raises(ConfigError) as raised:
        load_config(write_config(tmp_path / "c.yaml", text))
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x1f\x8b\x08\x00\xff\xfe binary", "not a UTF-8 text file"),
        (b"http: " + b"[" * 50_000 + b"]" * 50_000 + b"\n", "not valid YAML: nested too deeply"),
    ],
    ids=["binary", "deep"],
)
def test_a_file_no_yaml_parser_can_read_is_one_line(tmp_path, content, message):
    path = tmp_path / "c.yaml"
    path.write_bytes(content)
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert str(raised.value) == f"{path}: {message}"


def test_an_option_over_a_setting_that_is_no_mapping_names_the_setting(tmp_path):
    # --http sets http.endpoint: the file's http is a list, not the settings it must be.
    path = write_config(tmp_path / "c.yaml", "http: [1, 2]\n")
    with pytest.raises(ConfigError) as raised:
        load_config(path, overrides={"http.endpoint": "127.0.0.1:0"})
    assert str(raised.value) == f"{path}: http: expected a mapping of its settings"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # the first list was dropped in silence, the collector scored with the second only
        (
            "policies: [a.yaml]\npolicies: [b.yaml]\n",
            "c.yaml:2:1: duplicate key 'policies' (first at line 1)",
        ),
        (
            "scoring:\n  assume_coveage: [response]\n",
            "c.yaml:2:3: scoring: unknown key 'assume_coveage' — did you mean 'assume_coverage'?",
        ),
        ("policy: [a.yaml]\n", "c.yaml:1:1: unknown key 'policy' — did you mean 'policies'?"),
    ],
)
def test_a_repeated_or_misspelt_setting_is_named_where_it_stands(tmp_path, text, message):
    path = write_config(tmp_path / "c.yaml", text)
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert str(raised.value) == f"{path.parent}/{message}"


SHADOW = "root:$6$saltsalt$hashhashhash:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n"


def test_a_file_that_is_no_configuration_is_not_echoed(tmp_path):
    with pytest.raises(ConfigError) as raised:
        load_config(write_config(tmp_path / "shadow", SHADOW))
    assert "not a collector configuration" in str(raised.value)
    assert "hashhash" not in str(raised.value) and "saltsalt" not in str(raised.value)


def test_collect_with_a_bad_config_or_policy_exits_2_in_one_line(tmp_path):
    bad = write_config(tmp_path / "c.yaml", "grpc:\n  max_workers: 0\n")
    result = run_cli("collect", "--config", str(bad))
    assert result.returncode == 2
    assert result.stderr.startswith("rampart-otel: error: ")
    assert "grpc.max_workers" in result.stderr and "Traceback" not in result.stderr
    policy = write_config(tmp_path / "p.yaml", "policy: x\nchecks:\n  - id: a\n")
    result = run_cli("collect", "--policy", str(policy), "--data-dir", str(tmp_path / "d"))
    assert result.returncode == 2
    assert result.stderr.startswith("rampart-otel: error: ")
    result = run_cli("collect", "--export-to", "ftp://x", "--data-dir", str(tmp_path / "d"))
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "export.otlp" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(("text", "where", "message"), CASES)
def test_collect_refuses_to_start_on_a_wrong_word_in_a_policy(tmp_path, text, where, message):
    policy = write(tmp_path, text)
    data = tmp_path / "d"
    result = run_cli("collect", "--policy", policy, "--data-dir", data, "--http", "127.0.0.1:0",
                     "--grpc", "off", timeout=60)  # fmt: skip
    assert result.returncode == 2
    assert result.stderr == f"rampart-otel: error: {policy}:{where}: {message}\n"


def test_collect_refuses_an_assumed_channel_no_span_can_feed(tmp_path):
    config = write_config(tmp_path / "c.yaml", "scoring:\n  assume_coverage: [side_effects.http]\n")
    result = run_cli("collect", "--config", config, "--policy", POLICY_FILE,
                     "--data-dir", tmp_path / "d", "--http", "127.0.0.1:0", "--grpc", "off",
                     timeout=60)  # fmt: skip
    assert result.returncode == 2
    assert result.stderr == (
        "rampart-otel: error: scoring.assume_coverage: unknown channel 'side_effects.http' — "
        "did you mean 'side_effects.http_request'?\n"
    )


def test_a_data_directory_serves_one_collector(tmp_path):
    running = spawn(tmp_path / "data")
    try:
        result = run_cli("collect", "--data-dir", str(tmp_path / "data"), "--http", "127.0.0.1:0",
                         "--grpc", "127.0.0.1:0")  # fmt: skip
        assert result.returncode == 2
        assert "another collector" in result.stderr
    finally:
        assert running.terminate() == 0


def test_audit_lists_stored_verdicts_as_a_report(tmp_path):
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    from collector.harness import wait_for

    write_config(tmp_path / "policy.yaml", POLICY)
    settings = write_config(
        tmp_path / "c.yaml", "policies: [policy.yaml]\nassembly:\n  idle_seconds: 0.2\n"
    )
    running = spawn(tmp_path / "data", settings)
    try:
        OTLPSpanExporter(endpoint=running.traces_url, timeout=30).export(
            make_traces(2, tool="delete_file")
        )
        wait_for(
            lambda: running.metrics().get("rampart_otel_runs_scored_total", 0) >= 2, 90, "scores"
        )
    finally:
        assert running.terminate() == 0
    result = run_cli("audit", "--data-dir", str(tmp_path / "data"), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["schema"] == "rampart-otel/report@1"
    assert sorted(r["status"] for r in report["results"]) == ["undetermined"] * 2 + ["unsafe"] * 2
    assert report["population_summary"]["overall"]["unsafe"] == 2
    terminal = run_cli("audit", "--data-dir", str(tmp_path / "data"))
    assert terminal.returncode == 0 and "unsafe" in terminal.stdout
    missing = run_cli("audit", "--data-dir", str(tmp_path / "nothing"))
    assert missing.returncode == 2 and "results.db" in missing.stderr


@pytest.mark.parametrize("flag", ["--http", "--grpc"])
def test_a_port_in_use_is_one_line_with_nothing_started_and_nothing_left_behind(tmp_path, flag):
    import socket

    write_config(tmp_path / "policy.yaml", POLICY)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = f"127.0.0.1:{holder.getsockname()[1]}"
        other = "--grpc" if flag == "--http" else "--http"
        data = tmp_path / "new" / "data"
        result = run_cli(
            "collect", flag, taken, other, "127.0.0.1:0", "--data-dir", str(data),
            "--policy", str(tmp_path / "policy.yaml"), timeout=120,
        )  # fmt: skip
    assert result.returncode == 2
    receiver = {"--http": "OTLP/HTTP", "--grpc": "OTLP/gRPC"}[flag]
    assert result.stderr.splitlines() == [
        f"rampart-otel: error: cannot listen on {taken} ({receiver}): "
        f"the port is already in use (another collector?); choose another with {flag} "
        f"HOST:PORT, or {flag} off"
    ], result.stderr  # no "scorer finished", no gRPC core log line
    assert not (tmp_path / "new").exists()  # the directories it made are gone


def test_an_existing_data_directory_stays_when_a_port_is_in_use(tmp_path):
    import socket

    data = tmp_path / "data"
    data.mkdir()
    (data / "keep").write_text("mine")
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = f"127.0.0.1:{holder.getsockname()[1]}"
        result = run_cli("collect", "--http", taken, "--grpc", "off", "--data-dir", str(data))
    assert result.returncode == 2 and "already in use" in result.stderr
    assert (data / "keep").read_text() == "mine"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--http", "127.0.0.1:99999"], "--http: port 99999 is out of range"),
        (["--grpc", "localhost"], "--grpc: expected HOST:PORT or 'off', got 'localhost'"),
    ],
)
def test_a_bad_address_on_the_command_line_names_the_flag(tmp_path, args, message):
    result = run_cli("collect", *args, "--data-dir", str(tmp_path / "d"))
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"rampart-otel: error: {message}"), result.stderr
    assert "endpoint" not in result.stderr
    assert not (tmp_path / "d").exists()


def test_a_built_in_pack_in_the_file_is_a_name_not_a_path(tmp_path):
    path = write_config(tmp_path / "c.yaml", "policies: [builtin:agent-baseline, p.yaml]\n")
    config = load_config(path)
    assert config.policies == [Path("builtin:agent-baseline"), tmp_path / "p.yaml"]
    from rampart_otel.engine import load_policies

    (policy,) = load_policies(config.policies[:1])
    assert policy.name == "builtin:agent-baseline"


def test_scorer_shards_default_to_the_cores_without_stitching_and_to_one_with_it(tmp_path):
    import os

    assert load_config(None).scoring.workers == 1  # stitching joins pieces across traces
    unstitched = load_config(None, overrides={"assembly.stitch": False})
    assert unstitched.scoring.workers == (os.cpu_count() or 1)
    assert load_config(None, overrides={"scoring.workers": 3}).scoring.workers == 3
    with pytest.raises(ConfigError, match=r"scoring\.workers above 1 needs assembly\.group_by"):
        load_config(None, overrides={"assembly.group_by": "session", "scoring.workers": 2})
    unbounded = write_config(tmp_path / "c.yaml", "scoring:\n  max_backlog_seconds: null\n")
    assert load_config(unbounded).scoring.max_backlog_seconds is None  # never push back
    assert load_config(None).scoring.max_backlog_seconds == 30


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_an_endless_file_is_read_no_further_than_a_configuration_can_be(tmp_path):
    with pytest.raises(ConfigError) as raised:
        load_config(Path("/dev/zero"))
    assert str(raised.value) == ("/dev/zero: larger than 16 MiB: not a collector configuration")
    config = load_config(None, overrides={"auth_token_file": "/dev/zero"})
    with pytest.raises(ConfigError) as raised:
        config.token()
    assert str(raised.value) == "auth_token_file /dev/zero: larger than 64 KiB: not a token"


@pytest.mark.parametrize("token", ["tok\nen", "tok\x1b[31men", "tökén", " token"])
def test_a_token_no_client_can_send_is_refused_without_showing_it(tmp_path, token):
    # The collector would refuse every request: Authorization carries printable ASCII only.
    why = (
        "holds a control, non-ASCII or leading/trailing space character, which an "
        "Authorization header cannot carry (the token is not shown)"
    )
    with pytest.raises(ConfigError) as raised:
        load_config(None, overrides={"auth_token": token})
    assert str(raised.value) == f"auth_token: {why}"
    path = tmp_path / "token"
    path.write_text(token + "\n")
    config = load_config(None, overrides={"auth_token_file": str(path)})
    if token != token.strip():  # a file's whitespace at the ends is cut: " token" is fine
        assert config.token() == token.strip()
        return
    with pytest.raises(ConfigError) as raised:
        config.token()
    assert str(raised.value) == f"auth_token_file {path}: {why}"

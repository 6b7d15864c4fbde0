"""What ``collect`` prints: the startup block, a line per UNSAFE/ERROR verdict (limited, the
rest counted), a summary now and then; ``--quiet``. Unit tests on ``Console`` with a clock."""

from __future__ import annotations

import io
from pathlib import Path

from rampart_otel.collector.config import load_config
from rampart_otel.collector.console import Console
from rampart_otel.engine import load_policies

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def notice(index: int, status: str = "unsafe", **extra: object) -> dict[str, object]:
    return {
        "status": status,
        "check": "no-delete",
        "policy": "test",
        "service": "agent",
        "run_id": f"run{index}",
        "revision": 0,
        "detail": "delete_file called",
    } | extra


def test_the_startup_block_says_where_things_go_and_how_to_look(tmp_path):
    config = load_config(
        None,
        overrides={"data_dir": str(tmp_path / "d"), "policies": [str(SAMPLES / "policy.yaml")]},
    )
    out = io.StringIO()
    Console(out).startup(
        config, ("127.0.0.1", 4318), ("127.0.0.1", 4317), load_policies(config.policies)
    )
    text = out.getvalue()
    first = text.splitlines()[0]
    assert first == (
        "rampart-otel: collecting: OTLP/HTTP on http://127.0.0.1:4318/v1/traces, "
        "OTLP/gRPC on 127.0.0.1:4317"
    )
    policy = load_policies(config.policies)[0]
    assert f"{policy.name} v{policy.version}, {len(policy.checks)} checks" in text
    assert f"verdicts  {tmp_path / 'd' / 'results.db'}" in text
    assert f"rampart-otel audit --data-dir {tmp_path / 'd'}\n" in text
    assert f"rampart-otel audit --data-dir {tmp_path / 'd'} --html -o audit.html" in text
    assert "http://127.0.0.1:4318/healthz" in text
    quiet = io.StringIO()
    Console(quiet, quiet=True).startup(config, ("127.0.0.1", 4318), None, [])
    assert quiet.getvalue() == (
        "rampart-otel: collecting: OTLP/HTTP on http://127.0.0.1:4318/v1/traces\n"
    )


def test_paths_in_the_startup_block_are_escaped(tmp_path):
    # A data directory or policy path with a newline and terminal escapes in its name: one
    # line per row, no control sequence reaches the terminal.
    odd = tmp_path / "a\nb\x1b[31mred\x1b]0;title\x07"
    odd.mkdir()
    policy = odd / "policy.yaml"
    policy.write_text((SAMPLES / "policy.yaml").read_text())
    config = load_config(None, overrides={"data_dir": str(odd / "d"), "policies": [str(policy)]})
    out = io.StringIO()
    Console(out).startup(config, ("127.0.0.1", 4318), None, load_policies(config.policies))
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text
    lines = text.splitlines()
    assert all(line.startswith(("rampart-otel: ", "  ")) for line in lines), lines
    assert len(lines) == 8


def test_a_shared_store_is_named_without_its_password(tmp_path):
    config = load_config(
        None,
        overrides={
            "data_dir": str(tmp_path),
            "policies": [str(SAMPLES / "policy.yaml")],
            "results": "postgresql://u:secret@db/rampart",
            "export.otlp.endpoint": "http://u:secret@otel-collector:4318",
        },
    )
    out = io.StringIO()
    Console(out).startup(config, None, None, load_policies(config.policies))
    assert "secret" not in out.getvalue()
    assert "rampart-otel audit --results 'postgresql://u:***@db/rampart'" in out.getvalue()


def test_verdict_lines_are_limited_and_the_rest_counted():
    clock, out = Clock(), io.StringIO()
    console = Console(out, lines_per_minute=3, clock=clock)
    console.verdicts([notice(i) for i in range(5)] + [{"unsent": 2}])
    lines = out.getvalue().splitlines()
    assert lines == [
        f"rampart-otel: UNSAFE no-delete [test] service agent run run{i}: delete_file called"
        for i in range(3)
    ]
    clock.now += 61
    console.tick({})
    lines = out.getvalue().splitlines()
    assert lines[3].startswith("rampart-otel: 4 more UNSAFE/ERROR verdicts were not printed")
    console.verdicts([notice(9, "error", detail="judge timed out", revision=2)])
    assert out.getvalue().splitlines()[4] == (
        "rampart-otel: ERROR no-delete [test] service agent run run9 (revision 2): judge timed out"
    )


def test_trace_content_in_a_verdict_line_is_escaped():
    out = io.StringIO()
    Console(out).verdicts(
        [notice(1, service="evil\x1b[31m\nrampart-otel: SAFE forged", detail="a\rb\x07")]
    )
    assert "\x1b" not in out.getvalue() and "\x07" not in out.getvalue()
    assert len(out.getvalue().splitlines()) == 1


def test_a_summary_now_and_then_only_when_something_happened():
    clock, out = Clock(), io.StringIO()
    console = Console(out, summary_every=60, clock=clock)
    totals = {"spans_received": 0.0, "runs_scored": 0.0}
    clock.now += 61
    console.tick(totals)
    assert out.getvalue() == ""  # nothing happened: nothing said
    totals = {"spans_received": 120, "runs_scored": 7, "unsafe": 2, "safe": 12, "open_traces": 3}
    clock.now += 30
    console.tick(totals)
    assert out.getvalue() == ""  # not yet a minute
    clock.now += 31
    console.tick(totals)
    assert out.getvalue() == (
        "rampart-otel: last 61s: 120 spans received, 7 runs scored (2 unsafe, 12 safe results); "
        "3 traces open\n"
    )


def test_quiet_prints_no_verdicts_and_no_summary():
    clock, out = Clock(), io.StringIO()
    console = Console(out, quiet=True, summary_every=1, clock=clock)
    console.verdicts([notice(1)])
    clock.now += 100
    console.tick({"spans_received": 5})
    assert out.getvalue() == ""


def test_a_verdict_line_masks_a_secret_unless_show_secrets(tmp_path):
    """As score's terminal output: masked by default, in clear with --show-secrets; the
    scorer's reports arrive on another thread, so the Console applies the choice itself."""
    import threading

    leaked = notice(1, detail="send_report called with api_token=tok_live_9f3a7c21d8e4")
    for show, expect_raw in ((False, False), (True, True)):
        out = io.StringIO()
        console = Console(out, show_secrets=show)
        thread = threading.Thread(target=console.verdicts, args=([leaked],))
        thread.start()
        thread.join()
        assert ("tok_live_9f3a7c21d8e4" in out.getvalue()) is expect_raw
        assert ("[masked:" in out.getvalue()) is not expect_raw


def test_a_secret_in_the_service_name_is_masked_in_a_verdict_line():
    token = "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"
    out = io.StringIO()
    Console(out).verdicts([notice(1, service=f"agent {token}")])
    assert token not in out.getvalue() and "ghp_…[masked:github-token]" in out.getvalue()


def test_the_stop_counts_the_unprinted_verdicts_and_sums_up_the_whole_run():
    # A collector stopped within a minute said nothing of what it scored, and the verdicts
    # over the minute's limit were never counted.
    clock, out = Clock(), io.StringIO()
    console = Console(out, lines_per_minute=1, clock=clock)
    console.verdicts([notice(i) for i in range(4)])
    clock.now += 20
    console.stopped({"spans_received": 12, "runs_scored": 4, "unsafe": 4, "open_traces": 1})
    lines = out.getvalue().splitlines()
    assert len(lines) == 3
    assert lines[1].startswith("rampart-otel: 3 more UNSAFE/ERROR verdicts were not printed")
    assert lines[2] == (
        "rampart-otel: stopped after 20s: 12 spans received, 4 runs scored (4 unsafe results); "
        "1 traces open"
    )


def test_a_password_or_token_in_a_url_query_is_not_shown(tmp_path):
    # libpq takes ?password=, and an OTLP endpoint may carry ?token=: the startup block
    # named them in clear (only user:password@ was masked).
    config = load_config(
        None,
        overrides={
            "data_dir": str(tmp_path),
            "policies": [str(SAMPLES / "policy.yaml")],
            "results": "postgresql://u@db/rampart?sslmode=require&password=hunter2",
            "export.otlp.endpoint": "http://otel-collector:4318/v1/logs?access_token=tok9f3a",
        },
    )
    out = io.StringIO()
    Console(out).startup(config, None, None, load_policies(config.policies))
    assert "hunter2" not in out.getvalue() and "tok9f3a" not in out.getvalue()
    assert "postgresql://u@db/rampart?sslmode=require&password=***" in out.getvalue()
    assert "/v1/logs?access_token=***" in out.getvalue()


def scored(index: int, **counts: int) -> dict[str, object]:
    return {"scored": counts, "service": "agent", "run_id": f"run{index}", "revision": 0}


def test_each_scored_run_is_a_short_line_with_its_counts_limited_the_rest_counted():
    clock, out = Clock(), io.StringIO()
    console = Console(out, lines_per_minute=2, clock=clock)
    console.verdicts([scored(1, safe=6), scored(2, unsafe=1, undetermined=2, safe=3)])
    console.verdicts([scored(3, safe=6), scored(4, safe=6)])
    assert out.getvalue().splitlines() == [
        "rampart-otel: scored run run1 service agent: 6 safe",
        "rampart-otel: scored run run2 service agent: 1 unsafe, 2 undetermined, 3 safe",
    ]
    clock.now += 61
    console.tick({})
    assert out.getvalue().splitlines()[2] == (
        "rampart-otel: 2 more runs scored, not printed one by one (over 2 a minute): "
        "rampart-otel audit"
    )
    quiet = io.StringIO()
    Console(quiet, quiet=True).verdicts([scored(1, safe=1)])
    assert quiet.getvalue() == ""

"""Built-in policy packs: loading, parameters checked where they stand, and the matchers the
packs brought (ip_in, path_under, secret)."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest
import yaml

from rampart_otel.errors import PolicyError
from rampart_otel.evaluation import load_policy, parse_detect, parse_policy
from rampart_otel.evaluation.matchers import ip_in, path_under, secret
from rampart_otel.evaluation.packs import expand, load_pack, members, pack_names, pack_of
from rampart_otel.evaluation.policy_schema import policy_schema

VALIDATOR = jsonschema.Draft202012Validator(policy_schema())


def test_every_pack_loads_and_every_check_is_named_after_its_pack_and_mapped() -> None:
    assert {"agent-baseline", "secrets", "egress", "destructive-actions", "injection",
            "consumption", "excessive-agency"} <= set(pack_names())  # fmt: skip
    for name in pack_names():
        pack = load_pack(name)
        assert pack.description
        for check in pack.checks:
            assert check.id.startswith(f"{name}.")
            assert check.owasp and all(item.startswith(("LLM", "Agentic")) for item in check.owasp)
            assert check.description and check.harm_category


def test_every_check_parses_with_defaults_and_with_every_optional_check_on() -> None:
    baseline = pack_of("builtin:agent-baseline")
    chosen = {"file_root": "/srv/app", "allowed_tools": [], "extra_shell_tools": ["sh"]}
    ids = [check.id for check, detect in expand(baseline, chosen).checks if parse_detect(detect)]
    every = {check.id for pack in members(baseline) for check in pack.checks}
    assert set(ids) == every - {"injection.judged"}  # the judge needs an endpoint
    defaults = {check.id for check, _ in expand(baseline, {}).checks}
    assert "destructive-actions.file-write-outside-root" not in defaults  # no root given


def test_a_builtin_pack_is_a_policy_by_name() -> None:
    policy = load_policy("builtin:agent-baseline")
    assert policy.name == "builtin:agent-baseline"
    assert "secrets.tool-arguments" in [check.id for check in policy.checks]
    with pytest.raises(PolicyError) as caught:
        load_policy("builtin:egres")
    assert str(caught.value) == (
        "builtin:egres: unknown pack 'builtin:egres' — did you mean 'builtin:egress'?"
    )


def _policy(include: str, checks: str = "") -> str:
    return f"policy: p\ninclude:\n{include}\n{checks}"


def test_parameters_reach_the_checks() -> None:
    policy = parse_policy(
        _policy(
            "  - pack: builtin:egress\n    with:\n      allowed_hosts: [API.OpenAI.com, 10.0.0.7]"
        )
    )
    check = policy.check("egress.non-allowed-host")
    assert repr(check.detect) == (
        "side_effect('http_request', host=not_in(['api.openai.com', '10.0.0.7']))"
    )
    assert check.harm_category == "data_exfiltration"


def test_included_checks_come_first_then_the_policys_own() -> None:
    text = _policy(
        "  - builtin:consumption",
        "checks:\n  - id: mine\n    polarity: attack\n    detect: tool_called('x')\n",
    )
    assert [check.id for check in parse_policy(text).checks] == [
        "consumption.tool-calls",
        "consumption.repeated-call",
        "mine",
    ]


INCLUDE_ERRORS = [
    (
        "  - builtin:egres",
        "4:5: include[0]: unknown pack 'builtin:egres' — did you mean 'builtin:egress'?",
    ),
    ("  - egress", "4:5: include[0]: unknown pack 'egress' — did you mean 'builtin:egress'?"),
    (
        "  - pack: builtin:egress\n    with: {allowed_host: [a.com]}",
        "5:12: include[0].with: unknown parameter 'allowed_host' of builtin:egress — did you mean "
        "'allowed_hosts'?",
    ),
    (
        "  - pack: builtin:egress\n    with: {allowed_hosts: a.com}",
        "5:27: include[0].with.allowed_hosts: a list of host names, e.g. "
        "[api.openai.com, 10.0.0.7]",
    ),
    (
        "  - pack: builtin:egress\n    with: {allowed_hosts: ['https://a.com/x']}",
        "5:27: include[0].with.allowed_hosts: [0]: a host name, not a URL — did you mean 'a.com'?",
    ),
    (
        "  - pack: builtin:egress\n    with: {allowed_hosts: ['*.a.com']}",
        "5:27: include[0].with.allowed_hosts: [0]: '*.a.com' is not a host name (letters, digits, "
        "'-' and '.'; no port, path or wildcard)",
    ),
    (
        "  - pack: builtin:consumption\n    with: {max_tool_calls: 5O}",
        "5:28: include[0].with.max_tool_calls: a whole number of at least 1, not '5O'",
    ),
    (
        "  - pack: builtin:consumption\n    with: {max_tool_calls: true}",
        "5:28: include[0].with.max_tool_calls: a whole number of at least 1, not True",
    ),
    (
        "  - pack: builtin:injection\n    with: {judge: 'yes'}",
        "5:19: include[0].with.judge: true or false, not 'yes'",
    ),
    (
        "  - pack: builtin:destructive-actions\n    with: {file_root: srv}",
        "5:23: include[0].with.file_root: an absolute path such as /srv/app, not 'srv'",
    ),
    (
        "  - pack: builtin:injection\n    with: {judge: true}",
        "5:12: include[0]: injection.judged: judge() needs a judge endpoint: add a `judge:` block "
        "(base_url, model) to the policy; see docs/policy.md",
    ),
    (
        "  - pack: builtin:egress\n    wiht: {}",
        "5:5: include[0]: unknown key 'wiht' — did you mean 'with'?",
    ),
    ("  - with: {}", "4:5: include[0]: missing required key 'pack'"),
    # an include that brings nothing was dropped in silence (or reported as 'checks' missing)
    (
        "  - builtin:secrets\n  - builtin:excessive-agency",
        "5:5: include[1]: builtin:excessive-agency brings no check unless allowed_tools is set "
        "({pack: builtin:excessive-agency, with: {allowed_tools: [...]}})",
    ),
    (
        "  - builtin:agent-baseline\n  - builtin:secrets",
        "5:5: include[1]: pack 'builtin:secrets' is already included by builtin:agent-baseline "
        "(line 4)",
    ),
]


@pytest.mark.parametrize(
    ("include", "expected"), INCLUDE_ERRORS, ids=[e[1][:50] for e in INCLUDE_ERRORS]
)
def test_every_word_of_an_include_is_checked_where_it_stands(include: str, expected: str) -> None:
    text = "policy: p\nversion: 1\ninclude:\n" + include.replace("  - ", "  - ", 1)
    with pytest.raises(PolicyError) as caught:
        parse_policy(text, source="p.yaml")
    assert str(caught.value) == f"p.yaml:{expected}"


def test_a_pack_that_brings_no_check_at_its_defaults_is_no_policy_by_name() -> None:
    with pytest.raises(PolicyError) as caught:
        load_policy("builtin:excessive-agency")
    assert str(caught.value) == (
        "builtin:excessive-agency: builtin:excessive-agency brings no check unless "
        "allowed_tools is set ({pack: builtin:excessive-agency, with: {allowed_tools: [...]}})"
    )


def test_a_policy_check_may_not_take_an_included_checks_id() -> None:
    text = _policy(
        "  - builtin:consumption",
        "checks:\n  - id: consumption.tool-calls\n    polarity: attack\n"
        "    detect: tool_called('x')\n",
    )
    with pytest.raises(PolicyError) as caught:
        parse_policy(text)
    assert str(caught.value).endswith(
        "duplicate check id 'consumption.tool-calls' (first at line 3)"
    )


def test_the_schema_knows_the_packs_and_their_parameters() -> None:
    good = yaml.safe_load(_policy("  - pack: builtin:egress\n    with: {allowed_hosts: [a.com]}"))
    assert not list(VALIDATOR.iter_errors(good))
    for bad in (
        "  - builtin:egres",
        "  - pack: builtin:egress\n    with: {allowed_host: [a.com]}",
        "  - pack: builtin:consumption\n    with: {max_tool_calls: '5'}",
    ):
        assert list(VALIDATOR.iter_errors(yaml.safe_load(_policy(bad)))), bad
    assert list(VALIDATOR.iter_errors({"policy": "p"}))  # neither checks nor include


# --- matchers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("169.254.169.254", True),
        ("metadata.google.internal", True),
        ("127.0.0.2", True),
        ("localhost", True),
        ("LOCALHOST.", True),
        ("10.1.2.3", True),
        ("[::1]", True),
        ("::ffff:169.254.169.254", True),
        ("0x7f.0.0.1", True),  # a form HTTP clients resolve without DNS
        ("2130706433", True),
        ("8.8.8.8", False),
        ("api.openai.com", False),
        ("10.evil.com", False),
        (None, None),  # not recorded: unknown
    ],
)
def test_ip_in_flags_internal_address_literals(host: str | None, expected: bool | None) -> None:
    internal = ip_in(["loopback", "private", "link_local", "metadata"])
    assert internal.match(host) is expected


def test_ip_in_leaves_out_the_allowed_hosts_and_refuses_unknown_ranges() -> None:
    assert ip_in(["loopback"], ["localhost", "127.0.0.1"]).match("127.0.0.1") is False
    assert ip_in(["loopback"], ["localhost"]).match("127.0.0.2") is True
    assert ip_in(["10.0.0.0/8"]).match("10.9.9.9") is True
    with pytest.raises(ValueError, match="unknown address range 'privat' — did you mean 'private'"):
        ip_in(["privat"])


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/srv/app/notes.txt", True),
        ("/srv/app", True),
        ("/srv/app/../../etc/passwd", False),
        ("/srv/application/x", False),
        ("/etc/cron.d/x", False),
        ("notes.txt", None),  # relative to a directory the trace does not show
        ("~/notes.txt", None),
        (None, None),
    ],
)
def test_path_under_resolves_dots_and_leaves_relative_paths_unknown(path, expected) -> None:
    assert path_under("/srv/app/").match(path) is expected


def test_secret_matches_known_formats_and_names_only_real_detectors() -> None:
    assert secret().match("AKIAIOSFODNN7EXAMPLE in a note") is True
    assert secret().match(["ok", "password=hunter22x"]) is True
    assert secret().match("the weather is fine, 18C") is False
    assert secret().match(None) is None
    assert secret(["jwt"]).match("AKIAIOSFODNN7EXAMPLE") is False
    with pytest.raises(ValueError, match="unknown secret detector 'aws' — did you mean"):
        secret(["aws"])


def test_the_matchers_parse_in_detect() -> None:
    assert repr(
        parse_detect("side_effect('http_request', host=ip_in(['metadata'], ['a.com']))")
    ) == ("side_effect('http_request', host=ip_in(['metadata'], ['a.com']))")
    assert repr(parse_detect("tool_called('w', path=not_(path_under('/srv')))")) == (
        "tool_called('w', path=not_(path_under('/srv')))"
    )
    assert repr(parse_detect("response_contains(secret())")) == "response_contains(secret())"
    with pytest.raises(PolicyError, match="path_under\\(\\) takes an absolute path"):
        parse_detect("tool_called('w', path=path_under('srv'))")


def test_repeated_takes_a_tool_called_by_name_and_a_count_of_two_or_more() -> None:
    assert repr(parse_detect("repeated(3, tool_called(glob('*')))")) == (
        "repeated(3, tool_called(glob('*')))"
    )
    with pytest.raises(
        PolicyError, match="1:10: repeated\\(\\)'s count must be a whole number >= 2"
    ):
        parse_detect("repeated(1, tool_called('a'))")
    with pytest.raises(PolicyError, match="1:13: repeated\\(\\) counts calls of a tool"):
        parse_detect("repeated(3, tool_called('a', x=1))")


def test_policy_files_in_the_repository_are_untouched_by_packs(tmp_path: Path) -> None:
    assert load_policy(Path(__file__).resolve().parents[2] / "samples" / "policy.yaml").checks


def test_the_tables_of_docs_policy_packs_are_current() -> None:
    from rampart_otel.evaluation.packs import markdown_tables

    docs = Path(__file__).resolve().parents[2] / "docs" / "policy-packs.md"
    assert markdown_tables() in docs.read_text(encoding="utf-8"), "run make docs"

"""The policy language's words: one list, which the conventions fill, loading checks, and
docs/policy.md shows (generated: the test fails when docs and code differ)."""

from __future__ import annotations

import importlib.util
import typing
from pathlib import Path

import pytest
from span_factory import span

import rampart_otel.evaluation.matchers as matchers
from rampart_otel import vocabulary
from rampart_otel.channels import CHANNEL_KEYS_CORE, SIDE_EFFECT_PREFIX
from rampart_otel.conventions import mcp
from rampart_otel.conventions.side_effects import side_effects
from rampart_otel.evaluation import Check, Policy
from rampart_otel.evaluation.evaluators.judge import OVER
from rampart_otel.evaluation.expression import _KEYWORDS, _POSITIONAL, EVALUATORS, MATCHERS
from rampart_otel.evaluation.policy import CHECK_KEYS, POLICY_KEYS, Polarity
from rampart_otel.evaluation.validated import field_names
from rampart_otel.pipeline import ReadStats, agent_runs
from rampart_otel.vocabulary import channel_problem, closest, detail_keys, kind_problem

REPO = Path(__file__).resolve().parents[1]


def generator():  # docs/generate_policy_reference.py, which is no module of the package
    path = REPO / "docs" / "generate_policy_reference.py"
    spec = importlib.util.spec_from_file_location("generate_policy_reference", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_policy_md_holds_the_tables_the_vocabulary_makes() -> None:
    text = (REPO / "docs" / "policy.md").read_text(encoding="utf-8")
    assert generator().with_tables(text) == text, (
        "docs/policy.md differs from rampart_otel/vocabulary.py: run make docs"
    )
    for kind in vocabulary.SIDE_EFFECT_KINDS:  # the tables are really in there
        assert f"| `{kind.name}` | {kind.meaning} |" in text


# --- the conventions report the kinds and details the vocabulary names ------------------

FAMILIES = [
    (
        {
            "http.request.method": "GET",
            "url.full": "https://api.example.com:8443/x",
            "http.response.status_code": 200,
            "rampart.watch.request_body": "q=1",  # the watcher's: no instrumentation's
        },
        "CLIENT",
    ),
    ({"db.system.name": "postgresql", "db.query.text": "SELECT 1"}, "CLIENT"),
    ({"messaging.system": "kafka", "messaging.operation.type": "send"}, "PRODUCER"),
    ({"rpc.system.name": "grpc", "rpc.method": "pkg.Svc/Get"}, "CLIENT"),
    ({"process.command_args": ["ls", "-l"], "process.exit.code": 0}, "INTERNAL"),
]


@pytest.mark.parametrize(("attributes", "kind"), FAMILIES)
def test_each_family_reports_exactly_the_details_of_its_kind(attributes, kind) -> None:
    ((found, details, *_),) = side_effects(span("s", attributes, kind=kind))
    assert found in vocabulary.STANDARD_KINDS
    assert tuple(details) == detail_keys(found)


def test_mcp_requests_report_the_details_of_their_kind() -> None:
    found = mcp.side_effect(span("resources/read x", {mcp.METHOD: "resources/read"}, kind="CLIENT"))
    assert found is not None
    assert found[0] == vocabulary.MCP_REQUEST
    assert tuple(found[1]) == detail_keys(vocabulary.MCP_REQUEST)


def test_every_side_effect_of_the_samples_is_of_a_known_kind_with_known_details() -> None:
    seen = set()
    for run in agent_runs([REPO / "samples" / "traces"], ReadStats()):
        for effect in run.side_effects:
            keys = detail_keys(effect.kind)
            assert keys is not None, effect.kind
            assert set(effect.details) <= set(keys), (effect.kind, effect.details)
            seen.add(effect.kind)
    assert {vocabulary.HTTP_REQUEST, vocabulary.DB_QUERY} <= seen


# --- the evaluation layer uses exactly these words -----------------------------------------


def test_the_parser_and_the_models_use_the_vocabulary() -> None:
    assert {word.name for word in vocabulary.CHANNELS} == {
        *CHANNEL_KEYS_CORE,
        SIDE_EFFECT_PREFIX + "<kind>",
    }
    # include is read when the policy loads: its packs become checks
    assert {"name" if k == "policy" else k for k in POLICY_KEYS} - {"include"} == set(
        field_names(Policy)
    )
    assert set(CHECK_KEYS) == set(field_names(Check))
    assert vocabulary.names(vocabulary.POLARITIES) == typing.get_args(Polarity)
    assert vocabulary.names(vocabulary.JUDGE_OVER) == tuple(OVER)
    assert set(_POSITIONAL) | set(_KEYWORDS) <= set(EVALUATORS) | set(MATCHERS)
    assert all(callable(getattr(matchers, name)) for name in MATCHERS)


# --- refusing a word, with the closest known ones ---------------------------------------------


@pytest.mark.parametrize(
    ("word", "known", "nearest"),
    [
        ("http", vocabulary.STANDARD_KINDS, ["http_request"]),
        ("db", vocabulary.STANDARD_KINDS, ["db_query"]),
        ("HTTP_Request", vocabulary.STANDARD_KINDS, ["http_request"]),
        ("hostname", detail_keys("http_request"), ["host"]),
        ("regexp", MATCHERS, ["regex"]),
        ("asume_coverage", POLICY_KEYS, ["assume_coverage"]),
        ("zzz", vocabulary.STANDARD_KINDS, []),
    ],
)
def test_closest_known_words(word, known, nearest) -> None:
    assert closest(word, known) == nearest


def test_a_declared_kind_is_known_and_takes_any_detail() -> None:
    assert kind_problem("payment", ["payment"]) is None
    assert kind_problem("payment", []) == (
        "unknown side-effect kind 'payment'; expected one of: http_request, db_query, "
        "message_publish, rpc_call, process_exec, mcp_request, network_connect, file_write (a kind "
        "of your own: list it under side_effect_kinds)"
    )
    assert vocabulary.detail_problem("payment", "anything") is None
    assert channel_problem("side_effects.payment", ["payment"]) is None
    assert channel_problem("side_effects.payment", []) is not None


def test_a_custom_kind_in_a_policy_must_be_declared() -> None:
    from rampart_otel.evaluation import parse_policy

    text = (
        "policy: p\n{declare}assume_coverage: [side_effects.payment]\nchecks:\n  - id: a\n"
        "    polarity: attack\n    detect: side_effect('payment', amount=100)\n"
    )
    policy = parse_policy(text.format(declare="side_effect_kinds: [payment]\n"))
    assert policy.side_effect_kinds == ["payment"]
    with pytest.raises(ValueError, match=r"p:2:19: assume_coverage\[0\]: unknown channel"):
        parse_policy(text.format(declare=""), source="p")
    with pytest.raises(ValueError, match=r"p:2:21: side_effect_kinds\[0\]: a side-effect kind"):
        parse_policy(text.format(declare="side_effect_kinds: [pay-ment]\n"), source="p")
    with pytest.raises(ValueError, match=r"p:2:20: side_effect_kinds: a list of kind names"):
        parse_policy(text.format(declare="side_effect_kinds: payment\n"), source="p")

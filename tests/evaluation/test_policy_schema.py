"""The editor schema (``rampart-otel policy schema``, docs/policy.schema.json): every policy
in the repository passes it, and the typos it can see are flagged."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from cli_runner import run_cli
from policy_typos import TYPOS, policy_text

from rampart_otel.evaluation import parse_policy
from rampart_otel.evaluation.policy_schema import policy_schema, schema_text

REPO = Path(__file__).resolve().parents[2]
VALIDATOR = jsonschema.Draft202012Validator(policy_schema())


def repository_policies() -> list[tuple[str, str]]:
    """(where, YAML text) of every policy file under samples/, tests/, docs/, and every
    complete policy in a yaml block of docs/*.md and README.md."""
    found = []
    for directory in ("samples", "tests", "docs"):
        for path in sorted((REPO / directory).rglob("*.y*ml")):
            text = path.read_text(encoding="utf-8")
            if re.search(r"^policy:", text, re.MULTILINE):
                found.append((str(path.relative_to(REPO)), text))
    for path in [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md"]:
        blocks = re.findall(r"^```yaml\n(.*?)^```", path.read_text(encoding="utf-8"), re.M | re.S)
        for number, block in enumerate(blocks):
            data = yaml.safe_load(block)
            if (
                isinstance(data, dict)
                and "policy" in data
                and ("checks" in data or "include" in data)
            ):
                found.append((f"{path.relative_to(REPO)} yaml block {number}", block))
    return found


POLICIES = repository_policies()


def errors(data: Any) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message[:120]}" for e in VALIDATOR.iter_errors(data)]


def test_the_schema_is_a_valid_json_schema_and_the_published_copy_is_current() -> None:
    jsonschema.Draft202012Validator.check_schema(policy_schema())
    published = (REPO / "docs" / "policy.schema.json").read_text(encoding="utf-8")
    assert published == schema_text(), "docs/policy.schema.json is out of date: run make docs"


def test_the_command_prints_the_schema() -> None:
    proc = run_cli("policy", "schema")
    assert (proc.returncode, proc.stderr) == (0, "")
    assert json.loads(proc.stdout) == policy_schema()


def test_the_repository_has_policies_of_every_origin() -> None:
    origins = {where.split("/")[0].split(" ")[0] for where, _ in POLICIES}
    assert {"samples", "tests", "docs"} <= origins, origins  # the README is a front page


@pytest.mark.parametrize(("where", "text"), POLICIES, ids=[where for where, _ in POLICIES])
def test_every_policy_in_the_repository_loads_and_passes_the_schema(
    where, text, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGE_API_KEY", "sk-test")  # the docs' judge example names it
    parse_policy(text, source=where)  # the policies still load
    assert errors(yaml.safe_load(text)) == []


@pytest.mark.parametrize(
    ("case", "text"),
    [(case, text) for case, text, _, _ in TYPOS if case != "unknown detail key"]
    + [
        ("unknown top-level key", policy_text('tool_called("a")') + "asume_coverage: []\n"),
        ("unknown check key", policy_text('tool_called("a")').replace("detect:", "detec:")),
        ("unknown polarity", policy_text('tool_called("a")').replace("attack", "atack")),
        ("unknown evaluator", policy_text('tool_calld("a")')),
        ("side_effect with no literal kind", policy_text("side_effect(x)")),
        ("channel key", policy_text('tool_called("a")', assume="[responses]")),
    ],
)
def test_the_schema_flags_what_it_can_see(case, text) -> None:
    assert errors(yaml.safe_load(text)), case


def test_what_the_schema_cannot_see_is_left_to_loading() -> None:
    # Keyword arguments name tool arguments as well as details: only loading knows which.
    ((_, text, _, message),) = [typo for typo in TYPOS if typo[0] == "unknown detail key"]
    assert errors(yaml.safe_load(text)) == []
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_policy(text)


def test_kinds_of_ones_own_are_let_through_once_declared() -> None:
    text = policy_text('side_effect("payment", amount=100)', assume="[side_effects.payment]")
    assert errors(yaml.safe_load(text))  # undeclared: flagged
    declared = text + "side_effect_kinds: [payment]\n"
    assert errors(yaml.safe_load(declared)) == []
    parse_policy(declared)


def test_names_inside_string_literals_are_not_read_as_calls() -> None:
    detect = 'tool_called("x", q=contains("frob(\\"x")) | response_contains(\'zap(1)\')'
    data = yaml.safe_load(policy_text('tool_called("a")'))
    data["checks"][0]["detect"] = detect
    assert errors(data) == []
    parse_policy(json.dumps(data))  # JSON is YAML: the same policy loads


def test_the_detect_pattern_takes_linear_time() -> None:
    data = yaml.safe_load(policy_text('tool_called("a")'))
    data["checks"][0]["detect"] = "tool_called('a', x=" + "'a' " * 20_000 + "zz(1))"
    start = time.perf_counter()
    assert errors(data)
    assert time.perf_counter() - start < 2

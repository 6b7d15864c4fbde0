"""Rewrite what docs/ holds from the code: the vocabulary tables of docs/policy.md,
docs/policy.schema.json, the fix-hint and reason-code tables of docs/coverage.md and the
packs' tables of docs/policy-packs.md. Run it after changing rampart_otel/vocabulary.py,
rampart_otel/conventions/fix_hints.py, the reason codes (rampart_otel/channels.py ReasonCode,
rampart_otel/wording.py MEANINGS), a pack of rampart_otel/evaluation/packs/ or normalize's
jobs (rampart_otel/normalize.py JOBS):

    make docs   (or: .venv/bin/python docs/generate_policy_reference.py)

tests/test_vocabulary.py, tests/evaluation/test_policy_schema.py and
tests/conventions/test_fix_hints.py and tests/processors/test_reasons.py fail while they differ.
"""

from __future__ import annotations

from pathlib import Path

from rampart_otel.conventions import fix_hints
from rampart_otel.evaluation import packs
from rampart_otel.evaluation.policy_schema import schema_text
from rampart_otel.normalize import jobs_table
from rampart_otel.vocabulary import markdown_tables
from rampart_otel.wording import reason_codes_table

DOCS = Path(__file__).resolve().parent
POLICY_MD = DOCS / "policy.md"
SCHEMA_JSON = DOCS / "policy.schema.json"
COVERAGE_MD = DOCS / "coverage.md"
PACKS_MD = DOCS / "policy-packs.md"
ARCHITECTURE_MD = DOCS / "architecture.md"
JOBS_BEGIN, JOBS_END = "<!-- jobs -->", "<!-- /jobs -->"
PACKS_BEGIN, PACKS_END = "<!-- packs -->", "<!-- /packs -->"
HINTS_BEGIN, HINTS_END = "<!-- fix-hints -->", "<!-- /fix-hints -->"
CODES_BEGIN, CODES_END = "<!-- reason-codes -->", "<!-- /reason-codes -->"
BEGIN = (
    "<!-- vocabulary: generated from rampart_otel/vocabulary.py by "
    "docs/generate_policy_reference.py; edit there -->"
)
END = "<!-- end of the generated vocabulary -->"


def between(text: str, path: Path, begin: str, end: str, body: str) -> str:
    """``text`` (the file at ``path``) with ``body`` between its ``begin`` and ``end``
    markers; a file without them is an error, not a silent skip."""
    head, found_begin, rest = text.partition(begin)
    _, found_end, tail = rest.partition(end)
    if not found_begin or not found_end:
        raise SystemExit(f"{path}: the markers {begin!r} and {end!r} are missing")
    return f"{head}{begin}\n{body}{end}{tail}"


def with_tables(text: str) -> str:
    """``text`` (docs/policy.md) with the generated tables between the markers."""
    return between(text, POLICY_MD, BEGIN, END, f"\n{markdown_tables()}\n")


def with_hints(text: str) -> str:
    """``text`` (docs/coverage.md) with the fix-hint tables between their markers."""
    return between(text, COVERAGE_MD, HINTS_BEGIN, HINTS_END, f"{fix_hints.markdown_table()}\n")


def with_codes(text: str) -> str:
    """``text`` (docs/coverage.md) with the reason-code table between its markers."""
    return between(text, COVERAGE_MD, CODES_BEGIN, CODES_END, f"{reason_codes_table()}\n")


def with_packs(text: str) -> str:
    """``text`` (docs/policy-packs.md) with the packs' tables between their markers."""
    return between(text, PACKS_MD, PACKS_BEGIN, PACKS_END, packs.markdown_tables())


def with_jobs(text: str) -> str:
    """``text`` (docs/architecture.md) with normalize's job table between its markers."""
    return between(text, ARCHITECTURE_MD, JOBS_BEGIN, JOBS_END, f"{jobs_table()}\n")


def main() -> None:
    POLICY_MD.write_text(with_tables(POLICY_MD.read_text(encoding="utf-8")), encoding="utf-8")
    SCHEMA_JSON.write_text(schema_text(), encoding="utf-8")
    coverage = with_codes(with_hints(COVERAGE_MD.read_text(encoding="utf-8")))
    COVERAGE_MD.write_text(coverage, encoding="utf-8")
    PACKS_MD.write_text(with_packs(PACKS_MD.read_text(encoding="utf-8")), encoding="utf-8")
    architecture = with_jobs(ARCHITECTURE_MD.read_text(encoding="utf-8"))
    ARCHITECTURE_MD.write_text(architecture, encoding="utf-8")
    print(f"wrote {POLICY_MD}, {SCHEMA_JSON}, {COVERAGE_MD}, {PACKS_MD} and {ARCHITECTURE_MD}")


if __name__ == "__main__":
    main()

"""The convention interface (``conventions.interface``), its face and its labels."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from span_factory import span

import rampart_otel.conventions as face
from rampart_otel.conventions import labels
from rampart_otel.conventions.interface import ToolReport
from rampart_otel.conventions.registry import CONVENTIONS


def test_a_requested_call_is_asked_for_with_its_arguments_parsed_when_captured() -> None:
    asked = span("chat", kind="CLIENT", status="ERROR")
    report = ToolReport.requested(asked, labels.GEN_AI, "fetch", 7, '{"city": "Paris"}', True)
    assert (report.name, report.call_id, report.arguments) == ("fetch", "7", {"city": "Paris"})
    assert not report.executed and not report.error and not report.result_captured
    withheld = ToolReport.requested(asked, labels.GEN_AI, None, "", '{"city": "Paris"}', False)
    assert (withheld.name, withheld.call_id, withheld.arguments) == ("", None, None)


@pytest.mark.parametrize(
    ("status", "failed", "ran", "executed", "error"),
    [
        ("OK", False, True, True, False),
        ("ERROR", False, True, True, True),  # the span's status says it failed
        ("UNSET", True, True, True, True),  # the family's own sign says so
        ("ERROR", True, False, False, False),  # not run by this span: asked for, no error
    ],
)
def test_an_executed_call_fails_by_its_status_or_its_familys_sign(
    status: str, failed: bool, ran: bool, executed: bool, error: bool
) -> None:
    ran_span = span("execute_tool fetch", status=status)
    report = ToolReport.execution(
        ran_span,
        labels.GEN_AI,
        "fetch",
        "",
        arguments={"city": "Paris"},
        arguments_captured=True,
        result="sunny",
        result_captured=True,
        failed=failed,
        ran=ran,
    )
    assert (report.executed, report.error) == (executed, error)
    assert report.call_id is None and report.span is ran_span and report.result == "sunny"


def test_every_registered_convention_is_named_by_a_label() -> None:
    """The labels are in one place: a family that names itself elsewhere fails here."""
    unlabelled = [c.name for c in CONVENTIONS if c.name not in labels.FAMILIES]
    assert unlabelled == []


def test_the_face_only_reexports() -> None:
    """``conventions/__init__.py`` re-exports the public names and defines none itself, so
    the interface, the helpers and the labels each stay in their own module."""
    tree = ast.parse(Path(face.__file__).read_text(encoding="utf-8"))
    imported: list[str] = []
    for node in tree.body[1:]:  # after the docstring
        if isinstance(node, ast.ImportFrom):
            imported.extend(alias.asname or alias.name for alias in node.names)
        else:
            assert isinstance(node, ast.Assign), ast.dump(node)[:80]
            assert [ast.unparse(target) for target in node.targets] == ["__all__"]
    assert sorted(face.__all__) == sorted(name for name in imported if name != "annotations")

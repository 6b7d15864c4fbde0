"""A benign run whose only tool is pure: ``calculator`` does arithmetic, no I/O.

The hand-written OpenAI-SDK tool loop of ``openai_tool_loop``, traced with OpenInference (an
AGENT span around the loop, a TOOL span around the tool, an LLM span per model call). The
process has an instrumented HTTP client (``requests``, by
``opentelemetry-instrumentation-requests``), as an operator instruments the libraries an
agent may use, but the tool never touches it: the run has no side-effect span at all, and
rightly so. With ``SAMPLE_DECLARE_TOOL`` set, the tool is declared side-effect free on its
own span (``rampart_otel.declare.tool_side_effects``).
"""

from __future__ import annotations

import ast
import dataclasses
import operator
import os
import sys

from samples.frameworks import openai_tool_loop as loop
from samples.frameworks import tools as task

QUESTION = "It is 16°C in Paris and tomorrow will be 2°C warmer. How warm will it be?"
_OPERATORS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.USub: operator.neg,
}


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.operand))
    raise ValueError("only numbers and + - * / are allowed")


def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression."""
    return str(_evaluate(ast.parse(expression, mode="eval").body))


TOOLS = [
    loop.Tool(
        "calculator",
        "Evaluate an arithmetic expression.",
        loop.string_parameter("expression"),
        calculator,
    )
]


def main() -> int:
    if os.environ.get("SAMPLE_DECLARE_TOOL"):
        # The in-process declaration: on the TOOL span the tracer opens around the function.
        from rampart_otel.declare import tool_side_effects

        TOOLS[0] = dataclasses.replace(TOOLS[0], function=tool_side_effects("none")(calculator))
    provider = loop.setup()
    from opentelemetry.instrumentation.requests import RequestsInstrumentor

    RequestsInstrumentor().instrument()
    answer = loop.run(QUESTION, TOOLS)
    print(answer, file=sys.stderr)
    task.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The weather agent as DSPy's ``ReAct`` module, traced by OpenInference.

As OpenInference's DSPy docs show: an SDK ``TracerProvider`` with the OTLP exporter, then
``DSPyInstrumentor().instrument(tracer_provider=...)``, which traces modules, predictors,
adapters, the LM and tool calls. The LM is ``dspy.LM("openai/gpt-4o-mini")`` pointed at the
scripted model (DSPy calls it through LiteLLM); the tools are the plain functions, which
ReAct wraps in ``dspy.Tool``. The instrumentor reads the ``OPENINFERENCE_HIDE_*`` switches
from the environment.
"""

from __future__ import annotations

import os
import sys

from samples.frameworks import tools


def run() -> str:
    import dspy

    lm = dspy.LM(
        "openai/gpt-4o-mini",
        api_base=os.environ["OPENAI_BASE_URL"],
        api_key=os.environ["OPENAI_API_KEY"],
        cache=False,
    )
    dspy.configure(lm=lm)
    signature = dspy.Signature("question -> answer", instructions=tools.SYSTEM_PROMPT)
    agent = dspy.ReAct(signature, tools=list(tools.TOOLS), max_iters=6)
    return str(agent(question=tools.QUESTION).answer)


def main() -> int:
    from openinference.instrumentation.dspy import DSPyInstrumentor

    provider = tools.tracer_provider()
    DSPyInstrumentor().instrument(tracer_provider=provider)
    tools.instrument_clients()
    answer = run()
    print(answer, file=sys.stderr)
    tools.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

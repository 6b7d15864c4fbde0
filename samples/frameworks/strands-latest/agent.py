"""The Strands weather agent of ``samples/frameworks/strands/``, unchanged.

Only the environment differs: each case sets ``OTEL_SEMCONV_STABILITY_OPT_IN`` with
``gen_ai_latest_experimental``, the switch Strands users flip for the latest GenAI
conventions, so the same code is recorded in the other mode.
"""

from __future__ import annotations

from samples.frameworks.strands.agent import main

if __name__ == "__main__":
    raise SystemExit(main())

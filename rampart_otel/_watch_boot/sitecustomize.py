"""Run by Python at the start of every process ``rampart-otel watch`` starts (this folder is
put first on its PYTHONPATH): turns the watcher on before the program's first line, with the
kinds ``RAMPART_OTEL_WATCH`` names, then runs the ``sitecustomize`` this one shadows, if any.

Child Python processes inherit the variables, so they are watched too. Nothing here may stop
the program: a failure is one line on stderr.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_NAME = "rampart_otel.watch"


def _watch() -> None:
    module = sys.modules.get(_NAME)
    if module is None:
        # By its file: the program's environment may not have rampart-otel installed (the
        # watcher needs only the standard library, and the program's own OpenTelemetry).
        path = os.path.join(os.path.dirname(_HERE), "watch.py")
        spec = importlib.util.spec_from_file_location(_NAME, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[_NAME] = module
        spec.loader.exec_module(module)
    module.from_environment()


def _shadowed() -> None:
    """The ``sitecustomize`` that would have run without this folder on the path."""
    rest = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


try:
    _watch()
except Exception as error:
    sys.stderr.write(f"rampart-otel watch: not watching this process: {error}\n")
_shadowed()

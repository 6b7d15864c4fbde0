"""The one way rampart-otel writes HTML: Jinja2 with autoescape, and a strict CSP.

Trace content is attacker-controlled. Every string reaches the page by one of two paths:
escaped by Jinja's autoescape into HTML text, or inside a ``<script type="application/json">``
data block as JSON whose ``<``, ``>``, ``&`` and ``'`` are written as ``\\u003c``-style
escapes, so nothing in it can end the block. The page's own script reads the data with
``JSON.parse`` and puts strings on the page with ``textContent`` only. The
Content-Security-Policy allows the page's own inline script and style (by hash) and
nothing else: no remote load, no other script, no inline event handler, and Trusted Types
forbid every HTML-parsing sink.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Iterator
from functools import cache
from importlib import resources
from typing import IO, Any

import jinja2
from jinja2.utils import htmlsafe_json_dumps
from markupsafe import Markup

from rampart_otel.model import InputError
from rampart_otel.render import encodable, safe_text, shown

__all__ = ["error_items", "page_assets", "render_page", "script_json", "shown_data"]


def script_json(value: Any) -> Markup:
    """``value`` as JSON that is safe inside a ``<script type="application/json">`` block."""
    return htmlsafe_json_dumps(value, dumps=_dumps)


def _dumps(value: Any, **_: Any) -> str:
    import json

    # U+2028/2029 are valid in JSON and harmless to JSON.parse; escaped anyway, for readers
    # that treat the block as JavaScript. A lone surrogate (JSON text's "\\udfff" decodes to
    # one) cannot be written in UTF-8: it becomes U+FFFD, as safe_text shows it.
    text = json.dumps(
        value, ensure_ascii=False, allow_nan=False, default=str, separators=(",", ":")
    )
    return encodable(text).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("rampart_otel.exporters", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


@cache
def _asset(name: str) -> str:
    return resources.files("rampart_otel.exporters").joinpath("templates", name).read_text()


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def page_assets(script: str) -> dict[str, str]:
    """The shared stylesheet, the page's script, and the CSP that admits exactly them."""
    style = _asset("page.css")
    code = _asset("common.js") + _asset(script)  # one inline script: one hash
    csp = (
        "default-src 'none'; "
        f"script-src '{_sha256(code)}'; "
        f"style-src '{_sha256(style)}'; "
        "img-src data:; base-uri 'none'; form-action 'none'; "
        "require-trusted-types-for 'script'; trusted-types 'none'"
    )
    return {"style": style, "script": code, "csp": csp}


def shown_data(value: Any) -> Any:
    """A JSON-like value with each string in it as a page shows it (``render.shown``:
    secrets masked unless ``--show-secrets``); keys are kept."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, dict):
        return {key: shown_data(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [shown_data(item) for item in value]
    return value


def error_items(errors: Iterable[InputError]) -> list[dict[str, str]]:
    """Input errors (or quarantined records) as a page lists them: one line each, bounded."""
    return [
        {"location": safe_text(e.location, 300), "message": shown(safe_text(e.message, 300))}
        for e in errors
    ]


def render_page(template: str, out: IO[str], **context: Any) -> None:
    """Stream ``template`` to ``out``; iterables in ``context`` are consumed as it goes."""
    for chunk in _environment().get_template(template).generate(**context):
        out.write(chunk)


def json_items(items: Iterable[Any]) -> Iterator[Markup]:
    """A JSON array streamed item by item, each safe inside a script data block."""
    yield Markup("[")
    for index, item in enumerate(items):
        yield Markup(",\n") if index else Markup("\n")
        yield script_json(item)
    yield Markup("]")

"""Values in trace content that look like secrets: found by a table of documented token
formats, masked in every output a person reads (terminal, JUnit, HTML). JSON keeps raw values.

One table, one compiled pattern. Each row names the detector (what a masked value says it
was), the pattern, how many leading characters of the value may stay visible so a reader
still recognises it (a vendor's fixed prefix such as ``ghp_`` or ``AKIA``; for a value
without one, at most a third of it and never more than four characters), and where the
format comes from.

Chosen over ``detect-secrets`` 1.5's plugins by ``bench/bench_secret_detectors.py`` (the same
strings through both; figures in docs/masking.md): the table finds all 313 sample strings
that hold the samples' leaked token and key, where detect-secrets finds none (its keyword
plugin wants a quoted value; agents write ``api_token=tok_live_9f3a; key=...``); it finds
all 63 known-format cases against detect-secrets' 41 (no GitHub fine-grained ``github_pat_``,
OpenAI ``sk-proj-``, Anthropic, Google API key or Bearer rules there), flags none of the
benign strings, and takes a median 2.6 µs a string against 48.6 µs. detect-secrets' entropy
plugins add 154 flags on sample strings that hold no secret (tool-call ids, hashes) and
are not used here either: a random-looking string is not a secret by itself, and masking
must not hide the ids a reader needs. The table is plain data with a source per row, ours
to keep current; no dependency.

The table is compiled into one RE2 pattern: the scan is linear in the text whatever it holds
(trace content is attacker-influenced), about 20 times faster than Python's ``re`` on the
samples' strings. Issue #37 will expose
:func:`find_secrets` to policies as a ``secret()`` matcher.
"""

from __future__ import annotations

from dataclasses import dataclass

import re2

from rampart_otel.lazy_regex import LazyPattern

__all__ = [
    "DETECTORS",
    "REDACTED",
    "SecretFinding",
    "find_secrets",
    "mask_secrets",
    "masked",
    "redact_credentials",
]

# A value in a ``key=value`` / ``"key": "value"`` assignment: token characters, not ending in
# a sentence's full stop; base64 padding allowed at its end.
_VALUE = r"[A-Za-z0-9_\-+/~]+(?:\.[A-Za-z0-9_\-+/~]+)*={0,2}"
# Words whose assigned value is a secret (the end of the name: api_token, aws_secret_access_key).
_KEYWORDS = (
    r"passw(?:or)?d|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key"
    r"|client[_-]?secret|credentials?|auth|key"
)
# Between a name and its value: quotes (JSON-escaped too), spaces, one ':' or '='.
_ASSIGN = r"""(?:\\?["'])?[ \t]*[:=][ \t]*(?:\\?["'])?"""


@dataclass(frozen=True, slots=True)
class Detector:
    """One kind of credential found in text: its pattern, and how much of it stays
    visible when masked."""

    name: str
    pattern: str  # the value is group "v" where the match has more around it
    keep: int | None  # characters of the value kept visible; None: at most a third, 4 at most
    source: str  # where the format is documented


# Each row: name, pattern (the secret is group "v"), characters of it kept visible, source.
DETECTORS: tuple[Detector, ...] = (
    Detector(
        "private-key",
        r"(?P<v>-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[A-Za-z0-9+/=:, \t\r\n-]|\\[nr])*)",
        None,
        "RFC 7468 (PEM) labels; detect-secrets PrivateKeyDetector",
    ),
    Detector(
        "aws-access-key-id",
        r"\b(?P<v>(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})\b",
        4,
        "AWS IAM User Guide, 'Unique identifiers' (ID prefixes); detect-secrets AWSKeyDetector",
    ),
    Detector(
        "github-token",
        r"\b(?P<v>(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}))\b",
        4,
        "GitHub docs, 'About authentication to GitHub' (token formats); gitleaks github-pat",
    ),
    Detector(
        "gitlab-token",
        r"\b(?P<v>gl(?:pat|dt|ptt|rt|soat|cbt)-[A-Za-z0-9_\-]{20,})",
        6,
        "GitLab docs, 'GitLab token overview' (token prefixes); gitleaks gitlab-pat",
    ),
    Detector(
        "slack-token",
        r"\b(?P<v>xox[abeoprs]-[A-Za-z0-9-]{10,})",
        5,
        "Slack API docs, 'Token types'; detect-secrets SlackDetector",
    ),
    Detector(
        "slack-webhook",
        r"(?P<v>https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/]{20,})",
        29,
        "Slack API docs, 'Sending messages using incoming webhooks'; detect-secrets SlackDetector",
    ),
    Detector(
        "stripe-key",
        r"\b(?P<v>[sr]k_(?:live|test)_[A-Za-z0-9]{10,})",
        8,
        "Stripe docs, 'API keys' (secret sk_, restricted rk_); detect-secrets StripeDetector",
    ),
    Detector(
        "anthropic-key",
        r"\b(?P<v>sk-ant-[a-z]{2,8}\d{2}-[A-Za-z0-9_\-]{20,})",
        7,
        "Anthropic API docs (x-api-key: sk-ant-api03-...); gitleaks anthropic-api-key",
    ),
    Detector(
        "openai-key",
        r"\b(?P<v>sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,})",
        3,
        "OpenAI API reference, 'Authentication' (sk-, sk-proj-); detect-secrets OpenAIDetector",
    ),
    Detector(
        "google-api-key",
        r"\b(?P<v>AIza[0-9A-Za-z_\-]{35})",
        4,
        "Google Cloud docs, 'Manage API keys' (AIza...); gitleaks gcp-api-key",
    ),
    Detector(
        "jwt",
        r"\b(?P<v>eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*)",
        3,
        "RFC 7519 (JWT; eyJ is base64url of '{\"'); detect-secrets JwtTokenDetector",
    ),
    Detector(
        "bearer-token",
        r"\b[Bb]earer[ \t]+(?P<v>[A-Za-z0-9\-._~+/]{16,}=*)",
        None,
        "RFC 6750 section 2.1 (Authorization: Bearer b64token)",
    ),
    Detector(
        "url-password",
        r"://[A-Za-z0-9._~%!$&*+,;=\-]+:(?P<v>[^\s:/?#\[\]@\"'\\]+)@",
        0,
        "RFC 3986 section 3.2.1 (userinfo); detect-secrets BasicAuthDetector",
    ),
    Detector(
        "assignment",
        rf"(?i:(?P<k>{_KEYWORDS}))\b{_ASSIGN}(?P<v>{_VALUE})",
        None,
        "detect-secrets KeywordDetector, gitleaks generic-api-key: a secret-named assignment "
        '(password=, api_key:, "token": ...)',
    ),
)

# RE2: matching takes time linear in the text whatever it holds, so quantifiers need no bound.
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
_COMBINED = re2.compile(
    "|".join(
        f"(?P<d{index}>{d.pattern.replace('(?P<v>', f'(?P<v{index}>')})"
        for index, d in enumerate(DETECTORS)
    ),
    options=_OPTIONS,
)
_ASSIGNMENT = len(DETECTORS) - 1
_VALUE_GROUP = [_COMBINED.groupindex[f"v{index}"] for index in range(len(DETECTORS))]
_NAME_GROUP = _COMBINED.groupindex["k"]
# RE2 reads UTF-8, which cannot hold a lone surrogate (JSON text can carry one): scanned as
# U+FFFD, one character for one, so offsets stay those of the text.
_SURROGATE = LazyPattern(r"[\ud800-\udfff]")
_HEX_ID = LazyPattern(r"[0-9a-fA-F-]+")
_DIGIT = LazyPattern(r"\d")
_LETTER = LazyPattern(r"[A-Za-z]")
# Values a secret-named assignment often holds that are not secrets.
_PLACEHOLDERS = frozenset({"null", "none", "true", "false", "undefined", "redacted", "masked"})


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """A secret-looking value at ``text[start:end]``, found by ``detector`` (a DETECTORS name)."""

    detector: str
    start: int
    end: int


def _plausible(value: str, name: str) -> bool:
    """A generic assignment's value must look generated: letters and digits, six or more
    characters, not a placeholder; under a name that is only ``key`` (``agent_key``,
    ``cache_key``), not a hex digest or UUID, which such names hold as ids."""
    if name.lower() == "key" and _HEX_ID.fullmatch(value):
        return False
    if value.lower() in _PLACEHOLDERS or set(value) <= {"*", "x", "X", "."}:
        return False
    return len(value) >= 6 and bool(_DIGIT.search(value)) and bool(_LETTER.search(value))


def find_secrets(text: str) -> tuple[SecretFinding, ...]:
    """Every secret-looking value in ``text``, in order, not overlapping."""
    found: list[SecretFinding] = []
    if _SURROGATE.search(text):
        text = _SURROGATE.sub("\ufffd", text)
    for match in _COMBINED.finditer(text):
        index = int(str(match.lastgroup)[1:])
        start, end = match.span(_VALUE_GROUP[index])
        value = text[start:end]
        if index == _ASSIGNMENT:  # a known format assigned to a name is named by its format
            inner = _COMBINED.match(value)
            if inner is not None and inner.lastgroup != f"d{_ASSIGNMENT}":
                index = int(str(inner.lastgroup)[1:])
            elif not _plausible(value, match.group(_NAME_GROUP)):
                continue
        found.append(SecretFinding(DETECTORS[index].name, start, end))
    return tuple(found)


_KEEP = {d.name: d.keep for d in DETECTORS}


def masked(value: str, detector: str) -> str:
    """``value`` as outputs show it: a recognisable start, then ``…[masked:DETECTOR]``."""
    keep = _KEEP.get(detector)
    if keep is None:
        keep = min(4, len(value) // 3)
    if detector == "private-key":
        keep = value.find("-----", 5) + 5  # the PEM header line, no key material
    return f"{value[:keep]}…[masked:{detector}]"


def mask_secrets(text: str) -> str:
    """``text`` with every value :func:`find_secrets` finds replaced by :func:`masked`."""
    findings = find_secrets(text)
    if not findings:
        return text
    parts: list[str] = []
    at = 0
    for finding in findings:
        parts.append(text[at : finding.start])
        parts.append(masked(text[finding.start : finding.end], finding.detector))
        at = finding.end
    parts.append(text[at:])
    return "".join(parts)


REDACTED = "[redacted]"
# A bearer token of any length (RFC 6750's b64token): what an endpoint echoes of our header.
_BEARER = LazyPattern(r"\b([Bb][Ee][Aa][Rr][Ee][Rr])([ \t]+)[A-Za-z0-9\-._~+/]+=*")


def redact_credentials(text: str, known: tuple[str, ...] = ()) -> str:
    """Text an endpoint we called returned (an error it answered, an answer it gave), as any
    output may show it, JSON included: each ``known`` secret (the key we sent it) and every
    bearer token replaced whole by ``[redacted]``. An OpenAI-compatible server that refuses
    a key echoes it ("Incorrect API key provided: Bearer sk-..."). Trace content the text
    quotes is masked where people read it, as all trace content is (:func:`mask_secrets`)."""
    for secret in sorted(known, key=len, reverse=True):
        if secret:
            text = text.replace(secret, REDACTED)
    return _BEARER.sub(rf"\1\2{REDACTED}", text)

"""Which secret detector the outputs mask with: ``detect-secrets``' plugins, or our table of
documented token formats (``rampart_otel.secret_values``), measured on the same strings.

The corpus:

- every string attribute value of the bundled samples (``samples/traces``); the ones that
  hold the samples' planted secrets (``tok_live_9f3a``, ``sk-live-123``) must be found;
- known-format test tokens (AWS, private key header, JWT, GitHub, GitLab, Slack, Stripe,
  OpenAI, Anthropic, Google, Bearer header, URL password, ``password=``/``api_key=``
  assignments), built here from seeded random characters (no real credential), each bare
  and inside a sentence or a JSON argument as an agent's trace holds it;
- benign strings: UUIDs, SHA-1/SHA-256/MD5 hex digests, trace and span ids, URLs, base64
  of plain text, file paths, sentences; any detection there is a false positive.

Printed per detector: known tokens found, sample secrets found, flags on the benign set,
flags on sample strings holding no planted secret, and the median time per string (µs; each
string scanned ``--repeat`` times, the fastest kept). Detectors:

- ``table``: ``find_secrets`` (one compiled pattern over the table);
- ``ds-formats``: detect-secrets 1.5's plugins without the entropy ones (and without
  IPPublicDetector, not a secret), each string given to every plugin's ``analyze_line``;
- ``ds-all``: the same with Base64HighEntropyString (limit 4.5) and HexHighEntropyString
  (limit 3.0), its defaults.

Result (docs/masking.md has the figures): the table is kept. detect-secrets' keyword plugin
finds a secret-named assignment only where the value is quoted, so it misses every planted
secret of the samples (``api_token=tok_live_9f3a; key=sk-live-123`` as agents write it); it
has no rule for GitHub's ``github_pat_``, OpenAI's ``sk-proj-``, Anthropic or Google keys or
Bearer headers; its entropy plugins flag tool-call ids and hashes in the samples; and 25
plugin objects per string take about 18 times as long as the table's one RE2 pattern. (The
known-format tokens were written from the same vendor documents as the table: its 63/63 is
coverage of those formats, not of formats nobody listed.)

Run: ``pip install 'detect-secrets>=1.5,<2' && python bench/bench_secret_detectors.py``.
"""

from __future__ import annotations

import argparse
import base64
import random
import statistics
import string
import sys
import time
import uuid
from collections.abc import Callable
from hashlib import md5, sha1, sha256
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from rampart_otel.pipeline import ReadStats, runs  # noqa: E402
from rampart_otel.secret_values import find_secrets  # noqa: E402

SAMPLES = ROOT / "samples" / "traces"
PLANTED = ("tok_live_9f3a", "sk-live-123")  # the secrets the samples' agents leak

Detect = Callable[[str], list[str]]  # the secret values (or spans) a detector reports


def _chars(rng: random.Random, n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def known_tokens(rng: random.Random) -> list[tuple[str, str]]:
    """(format, token) pairs in each vendor's documented shape; random, never real."""
    upper = string.ascii_uppercase + string.digits
    digits = string.digits
    b64url = string.ascii_letters + string.digits + "-_"
    jwt = ".".join(
        [
            base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("="),
            base64.urlsafe_b64encode(b'{"sub":"1234567890","name":"x"}').decode().rstrip("="),
            _chars(rng, 43, b64url),
        ]
    )
    return [
        ("aws-access-key-id", "AKIA" + _chars(rng, 16, upper)),
        ("aws-access-key-id", "ASIA" + _chars(rng, 16, upper)),
        ("private-key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + _chars(rng, 60) + "\n"),
        ("private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn" + _chars(rng, 60)),
        ("jwt", jwt),
        ("github-token", "ghp_" + _chars(rng, 36)),
        ("github-token", "github_pat_" + _chars(rng, 22) + "_" + _chars(rng, 59)),
        ("gitlab-token", "glpat-" + _chars(rng, 20, string.ascii_letters + string.digits + "-_")),
        ("slack-token", f"xoxb-{_chars(rng, 12, digits)}-{_chars(rng, 12, digits)}-"
         f"{_chars(rng, 24)}"),
        ("slack-webhook", f"https://hooks.slack.com/services/T{_chars(rng, 8, upper)}/B"
         f"{_chars(rng, 8, upper)}/{_chars(rng, 24)}"),
        ("stripe-key", "sk_live_" + _chars(rng, 24)),
        ("stripe-key", "rk_live_" + _chars(rng, 24)),
        ("openai-key", "sk-proj-" + _chars(rng, 48, b64url)),
        ("openai-key", "sk-" + _chars(rng, 20) + "T3BlbkFJ" + _chars(rng, 20)),
        ("anthropic-key", "sk-ant-api03-" + _chars(rng, 93, b64url) + "AA"),
        ("google-api-key", "AIza" + _chars(rng, 35, b64url)),
        ("bearer-token", "Authorization: Bearer " + _chars(rng, 40, b64url)),
        ("url-password", "postgresql://app:" + _chars(rng, 16) + "@db.internal:5432/prod"),
        ("assignment", "password=" + _chars(rng, 12)),
        ("assignment", "api_key: " + _chars(rng, 32)),
        ("assignment", '"client_secret": "' + _chars(rng, 32) + '"'),
    ]  # fmt: skip


def in_context(token: str, rng: random.Random) -> list[str]:
    return [
        token,
        f"Here is the config you asked for: {token}. Keep it safe.",
        '{"tool": "send_report", "arguments": {"data": "' + token.replace('"', '\\"') + '"}}',
    ]


def benign(rng: random.Random) -> list[str]:
    items: list[str] = []
    for _ in range(20):
        data = _chars(rng, 40).encode()
        items += [
            str(uuid.UUID(int=rng.getrandbits(128))),
            sha256(data).hexdigest(),
            sha1(data).hexdigest(),
            md5(data).hexdigest(),  # a benign digest, not to flag
            f"{rng.getrandbits(128):032x}",  # a trace id
            f"{rng.getrandbits(64):016x}",  # a span id
            f"https://api.example.com/v1/items/{uuid.UUID(int=rng.getrandbits(128))}?page=2",
            base64.b64encode(b"The weather in Paris is 18C with light rain, " + data[:8]).decode(),
            f"/home/agent/.cache/models/{sha256(data).hexdigest()[:16]}/weights.bin",
        ]
    items += [
        "The token limit was reached; max_tokens=1024 and temperature=0.2.",
        "SELECT id, name FROM customers WHERE key = 'region' ORDER BY created_at",
        "Paris 18C light rain; customer=ACME-4471",
        "git commit 3f9c2a1b7e4d5c6f8091a2b3c4d5e6f708192a3b fixed the parser",
        "Use the password reset link sent to your email.",
        "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    ]
    return items


def sample_strings() -> list[str]:
    seen: dict[str, None] = {}
    for run in runs([SAMPLES], ReadStats(), group_by="trace", on_error=lambda _: None):
        for span in run.spans:
            for value in span.attributes.values():
                if isinstance(value, str) and value:
                    seen[value] = None
    return list(seen)


def table_detector() -> Detect:
    return lambda text: [text[f.start : f.end] for f in find_secrets(text)]


def ds_detector(entropy: bool) -> Detect:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    skipped = {"IPPublicDetector"} | (
        set() if entropy else {"Base64HighEntropyString", "HexHighEntropyString"}
    )
    classes = get_mapping_from_secret_type_to_class().values()
    plugins = [plugin() for plugin in classes if plugin.__name__ not in skipped]

    def detect(text: str) -> list[str]:
        return [
            str(found.secret_value)
            for plugin in plugins
            for line in text.splitlines() or [text]
            for found in plugin.analyze_line(filename="trace.txt", line=line, line_number=1)
        ]

    return detect


def timed(detect: Detect, text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter_ns()
        detect(text)
        best = min(best, time.perf_counter_ns() - start)
    return best / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(37)
    tokens = known_tokens(rng)
    token_cases = [(fmt, token, text) for fmt, token in tokens for text in in_context(token, rng)]
    harmless = benign(rng)
    samples = sample_strings()
    planted = [s for s in samples if any(p in s for p in PLANTED)]
    clean_samples = [s for s in samples if s not in planted]
    detectors: dict[str, Detect] = {"table": table_detector()}
    try:
        detectors["ds-formats"] = ds_detector(entropy=False)
        detectors["ds-all"] = ds_detector(entropy=True)
    except ImportError:
        print("detect-secrets is not installed: pip install 'detect-secrets>=1.5,<2'")
    corpus = [text for _, _, text in token_cases] + harmless + samples
    print(
        f"corpus: {len(token_cases)} known-format cases ({len(tokens)} tokens x 3 contexts), "
        f"{len(harmless)} benign, {len(samples)} sample strings ({len(planted)} with a planted "
        f"secret)"
    )
    print(
        f"{'detector':<11} {'known found':>12} {'planted found':>14} {'benign flagged':>15} "
        f"{'other sample flags':>19} {'median µs':>10} {'p95 µs':>8}"
    )
    misses: dict[str, list[str]] = {}
    for name, detect in detectors.items():
        found_known = 0
        for fmt, token, text in token_cases:
            # found: some reported value lies within the token (or the token within it)
            secret = token.split(" ")[-1].split(":")[-1].split("=")[-1].strip('"')
            hits = detect(text)
            if any(h and (h in token or secret in h or h in secret) for h in hits):
                found_known += 1
            else:
                misses.setdefault(name, []).append(f"{fmt}: {text[:60]!r}")
        found_planted = sum(
            all(any(p in h for h in detect(s)) for p in PLANTED if p in s) for s in planted
        )
        benign_flags = [s for s in harmless if detect(s)]
        other = [s for s in clean_samples if detect(s)]
        times = sorted(timed(detect, text, args.repeat) for text in corpus)
        print(
            f"{name:<11} {found_known:>5}/{len(token_cases):<6} "
            f"{found_planted:>6}/{len(planted):<7} "
            f"{len(benign_flags):>7}/{len(harmless):<7} {len(other):>10}/{len(clean_samples):<8} "
            f"{statistics.median(times):>10.1f} {times[int(len(times) * 0.95)]:>8.1f}"
        )
        if benign_flags:
            print(f"    benign flagged, e.g. {benign_flags[0][:70]!r}")
        if other:
            print(f"    other sample strings flagged, e.g. {other[0][:70]!r}")
    for name, missed in misses.items():
        print(f"{name} missed {len(missed)}: " + "; ".join(missed[:4]))


if __name__ == "__main__":
    main()

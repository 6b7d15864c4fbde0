"""The secret detector every output masks with: documented token formats found and masked
with a recognisable start, benign ids and hashes left alone, hostile input scanned in
linear time."""

from __future__ import annotations

import time

import pytest

from rampart_otel.secret_values import DETECTORS, find_secrets, mask_secrets, masked

# Built from pieces so no file of the repository holds a whole token-shaped string.
AWS = "AKIA" + "IOSFODNN7" + "EXAMPLE"
GITHUB = "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"
SLACK = "xoxb-" + "123456789012-123456789012-" + "AbCdEfGhIjKlMnOpQrStUvWx"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
OPENAI = "sk-proj-" + "Abc123Def456Ghi789Jkl012Mno345"
ANTHROPIC = "sk-ant-api03-" + "x" * 20 + "Yz09_-" * 10 + "AA"
GOOGLE = "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"
JWT = "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0." + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9Pl"


@pytest.mark.parametrize(
    ("text", "detector", "secret"),
    [
        (f"key id {AWS} in the env", "aws-access-key-id", AWS),
        (f"token {GITHUB}.", "github-token", GITHUB),
        (f"glpat-{'A1b2C3d4E5f6G7h8I9j0'} was used", "gitlab-token", "glpat-A1b2C3d4E5f6G7h8I9j0"),
        (f'{{"token": "{SLACK}"}}', "slack-token", SLACK),
        (f"charge with {STRIPE}", "stripe-key", STRIPE),
        (f"OPENAI_API_KEY={OPENAI}", "openai-key", OPENAI),
        (f"x-api-key: {ANTHROPIC}", "anthropic-key", ANTHROPIC),
        (f"https://maps.googleapis.com/x?key={GOOGLE}", "google-api-key", GOOGLE),
        (f"session {JWT} ok", "jwt", JWT),
        ("Authorization: Bearer abcdefghij0123456789", "bearer-token", "abcdefghij0123456789"),
        ("postgresql://app:s3cretPw@db:5432/x", "url-password", "s3cretPw"),
        ("customer=ACME-4471; api_token=tok_live_9f3a; x", "assignment", "tok_live_9f3a"),
        ('{\\"password\\": \\"hunter22\\"}', "assignment", "hunter22"),
        ("AWS_SECRET_ACCESS_KEY = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "assignment",
         "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ],
)  # fmt: skip
def test_each_format_is_found_and_masked(text: str, detector: str, secret: str) -> None:
    (finding,) = find_secrets(text)
    assert (finding.detector, text[finding.start : finding.end]) == (detector, secret)
    shown = mask_secrets(text)
    assert secret not in shown
    assert f"…[masked:{detector}]" in shown
    assert shown.replace(masked(secret, detector), secret) == text  # the rest is untouched


def test_a_private_key_keeps_its_header_and_loses_its_body() -> None:
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1x2y3\n-----END RSA PRIVATE KEY-----"
    text = f"key:\n{pem}\n"
    shown = mask_secrets(text)
    assert "-----BEGIN RSA PRIVATE KEY-----…[masked:private-key]" in shown
    assert "MIIEow" not in shown


def test_the_masked_start_is_short_and_names_the_kind() -> None:
    assert mask_secrets(f"id {AWS}") == "id AKIA…[masked:aws-access-key-id]"
    assert mask_secrets("api_token=tok_live_9f3a.") == "api_token=tok_…[masked:assignment]."
    assert mask_secrets("key=sk-live-123") == "key=sk-…[masked:assignment]"


@pytest.mark.parametrize(
    "text",
    [
        "123e4567-e89b-12d3-a456-426614174000",
        "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "trace 4bf92f3577b34da6a3ce929d0e0e4736 span 00f067aa0ba902b7",
        "max_tokens=1024 and temperature=0.2",
        '"agent_key": "0dad40f14393d6677f4fc7d69112abfe"',  # an id under a name ending in key
        "password=null, api_key: <redacted>, token=********",
        "the policy matches regex 'api_token|tok_live_|password'",
        "https://api.example.com/v1/items?page=2&sort=name",
        "SELECT id FROM t WHERE key = 'region'",
    ],
)
def test_benign_text_is_left_alone(text: str) -> None:
    assert find_secrets(text) == ()
    assert mask_secrets(text) == text


def test_a_lone_surrogate_is_scanned_and_kept() -> None:
    text = "\udfff api_token=tok_live_9f3a \ud800"  # JSON text can carry lone surrogates
    (finding,) = find_secrets(text)
    assert text[finding.start : finding.end] == "tok_live_9f3a"
    assert mask_secrets(text) == "\udfff api_token=tok_…[masked:assignment] \ud800"


def test_every_detector_names_its_source() -> None:
    assert len({d.name for d in DETECTORS}) == len(DETECTORS)
    assert all(d.source for d in DETECTORS)


@pytest.mark.parametrize(
    "unit",
    ["key" + " " * 20, "api_token=", "-----BEGIN RSA PRIVATE KEY-----", "a", "eyJ", "://u:"],
)
def test_hostile_text_is_scanned_in_linear_time(unit: str) -> None:
    hostile = unit * (200_000 // len(unit))  # a backtracking scan would take minutes
    start = time.perf_counter()
    mask_secrets(hostile)
    assert time.perf_counter() - start < 3.0


def test_redact_credentials_takes_the_key_sent_and_any_bearer_token_whole() -> None:
    from rampart_otel.secret_values import redact_credentials

    said = "Incorrect API key provided: Bearer sk-abc. Also bearer x1 and key=sk-abc."
    assert redact_credentials(said, ("sk-abc",)) == (
        "Incorrect API key provided: Bearer [redacted]. Also bearer [redacted] and key=[redacted]."
    )
    assert redact_credentials("no secret here") == "no secret here"

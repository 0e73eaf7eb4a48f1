"""The one redaction every event, log line and viewer answer passes: common secret shapes go, ordinary text stays."""

from __future__ import annotations

import json

import pytest

from orchestrator.model.redact import redact

SECRETS = [
    "sk-ant-api03-FAKEtestKEY0123456789abcdefXYZ",
    "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z_-" * 3,
    "sk-svcacct-Ab3dEf6hIj9kLm2nOp5qRs8tUv1w",
    "sk-" + "T3BlbkFJ" + "a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8",
    "AKIAIOSFODNN7EXAMPLE",
    "ASIAY34FZKBOKMUTVV7A",
    "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "gho_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
    "glpat-abcdefghij0123456789",
    "xoxb-1234567890-abcdefghij",
    "AIzaSyA-1234567890abcdefghijklmnopqrstu",
    "hf_abcdefghijklmnopqrstuvwxyz0123456789",
]


@pytest.mark.parametrize("secret", SECRETS)
@pytest.mark.parametrize("where", ["prose {} here", '{{"key": "{}"}}', "url?token={}&x=1", "({})."])
def test_a_secret_of_a_common_shape_is_redacted_wherever_it_sits(secret: str, where: str) -> None:
    text = where.format(secret)
    shown = redact(text)
    assert secret not in shown and "[REDACTED]" in shown
    assert shown.replace("[REDACTED]", secret) == text  # only the secret itself went


def test_a_secret_inside_json_as_events_write_it_is_redacted() -> None:
    line = json.dumps({"message": f"bad: {SECRETS[1]} and {SECRETS[4]}", "data": {"hint": SECRETS[6]}})
    shown = redact(line)
    assert all(secret not in shown for secret in SECRETS) and json.loads(shown)["data"]["hint"] == "[REDACTED]"


def test_labelled_values_and_private_keys_are_redacted() -> None:
    assert redact('Authorization: Bearer abc.def-ghi_123') == "Authorization: [REDACTED]"
    assert redact("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY") == \
        "aws_secret_access_key = [REDACTED]"
    block = "-----BEGIN RSA PRIVATE KEY-----\\nMIIEow...\\n-----END RSA PRIVATE KEY-----"
    assert redact(f"key: {block} end") == "key: [REDACTED] end"


@pytest.mark.parametrize("text", [
    "sk-learn-compatible estimators and ask-me-anything forms",
    "sk-1234 is a short product code",
    "The AKIA protocol (AKIA1234) and AKIAIOSFODNN7EXAMPLEX are not keys",  # too short; too long
    "ghp_short and github_pat_ are prefixes only",
    "doi:10.1000/xyz123 and https://example.org/a-b-c-d",
    "task-scheduler-0123456789abcdefghijklmnopqrstuvwx",  # "sk-" inside a word is not a key's start
    "hf_hub settings and AIza alone",
    "A study of 3,000 patients (p < 0.05) in 2020-2023.",
])
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_the_values_of_secret_variables_are_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "an-unshaped-value-0123")
    monkeypatch.setenv("GITHUB_TOKEN", "another-unshaped-value")
    assert redact("a an-unshaped-value-0123 b another-unshaped-value c") == "a [REDACTED] b [REDACTED] c"

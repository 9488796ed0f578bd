"""Issue 8 item 3: every rule's examples are found at any JSON string escaping depth and URL-encoded."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.text.redact import KnownSecrets, build_redactor
from harness.text.redact_rules import CATALOGUE, expand_example_parts

REDACTOR = build_redactor(KnownSecrets())
IDS = [rule.rule_id for rule in CATALOGUE]
# Bodies this short also occur in the surrounding text of some examples; the rule-file test covers them raw.
MIN_BODY = 8


def json_levels(text: str, depth: int) -> str:
    for _ in range(depth):
        text = json.dumps(text)
    return text


def encoded_body(body: str, depth: int) -> str:
    """`body` as it reads inside `depth` JSON string encodings (the surrounding quotes dropped)."""
    return json_levels(body, depth)[1:-1] if depth else body


@pytest.mark.parametrize("rule", CATALOGUE, ids=IDS)
@settings(max_examples=8, deadline=None)
@given(depth=st.integers(min_value=0, max_value=3), url=st.booleans(), seed=st.integers(min_value=0, max_value=2**16))
def test_every_example_is_found_at_every_depth(rule, depth: int, url: bool, seed: int) -> None:
    for index, example in enumerate(rule.examples):
        text, drawn = expand_example_parts(example, f"escape:{rule.rule_id}:{index}:{seed}")
        wrapped = json_levels(text, depth)
        if url:
            wrapped = quote(wrapped, safe="")
        out = REDACTOR.redact(wrapped)
        assert "[REDACTED:" in out, (depth, url, wrapped)
        for body in drawn:
            if len(body) >= MIN_BODY:
                assert encoded_body(body, depth) not in out and quote(body, safe="") not in out, (depth, url, out)


# The echo forms: a `key="value"` secret echoed inside an error message, JSON-escaped twice.
ECHO_KEYS = ["password", "passwd", "pwd", "secret", "token", "api_key", "apikey", "client_secret", "access_token",
             "auth_token", "private_key", "db_password", "secret_key", "refresh_token", "PASSWORD", "Password",
             "x-api-key", "app_secret", "session_token", "credential"]


@pytest.mark.parametrize("key", ECHO_KEYS)
def test_an_echoed_double_quoted_assignment_escaped_twice_is_redacted(key: str) -> None:
    value = "Zq7" + "".join(expand_example_parts("<<alnum:21>>", f"echo:{key}")[1])
    message = json.dumps({"error": f'config rejected: {key}="{value}" is not valid'})
    twice = json.dumps(message)
    assert value not in REDACTOR.redact(twice)
    assert value not in REDACTOR.redact(json.dumps({"result": twice}))

"""Identifiers (docs/ledger.md §3): UUIDv7 layout, the id grammars and normalize_id."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ledger_support import KNOWN_SECRET

from harness.ledger import ids
from harness.text.redact import Redactor


def test_uuid7_layout() -> None:
    value = ids.uuid7(0x0123456789AB)
    assert value.version == 7
    assert value.int >> 80 == 0x0123456789AB
    assert (value.int >> 62) & 0b11 == 0b10
    assert str(value).startswith("01234567-89ab-7")


def test_uuid7_uses_the_current_time_and_fresh_randomness() -> None:
    first, second = ids.uuid7(), ids.uuid7()
    assert first != second
    assert abs((first.int >> 80) - (second.int >> 80)) < 10_000


@pytest.mark.parametrize("good", ["a", "1", "conv-1", "A.b:c_d-e", "x" * 128])
def test_id_grammar_accepts(good: str) -> None:
    assert ids.is_id(good)


@pytest.mark.parametrize("bad", ["", "-a", ".a", "a b", "a/b", "x" * 129, "é", 5, None])
def test_id_grammar_refuses(bad: object) -> None:
    assert not ids.is_id(bad)


@pytest.mark.parametrize("good", ["search_events", "_invalid_name", "cli.init", "a" * 64])
def test_tool_name_grammar(good: str) -> None:
    assert ids.is_tool_name(good)
    assert not ids.is_tool_name("Search")
    assert not ids.is_tool_name("1abc")
    assert not ids.is_tool_name("a" * 65)


def _hashed(text: str) -> str:
    return "h-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def test_normalize_id(redactor: Redactor) -> None:
    redact = redactor.redact
    assert ids.normalize_id(7, redact) == "7"
    assert ids.normalize_id(-7, redact) == _hashed("-7")
    assert ids.normalize_id("req-1", redact) == "req-1"
    assert ids.normalize_id("has space", redact) == _hashed("has space")
    assert ids.normalize_id("\ud800x", redact) == _hashed("\ud800x")
    assert ids.normalize_id(10**200, redact) == _hashed(str(10**200))
    # A value the redactor would change is never stored as an id, even when it matches the grammar.
    assert ids.normalize_id(KNOWN_SECRET, redact) == _hashed(KNOWN_SECRET)
    assert ids.normalize_id_info(KNOWN_SECRET, redact) == (_hashed(KNOWN_SECRET), True)
    assert ids.normalize_id_info("ok", redact) == ("ok", False)


def test_normalize_id_refuses_other_types(redactor: Redactor) -> None:
    for bad in (True, 1.5, None, b"x"):
        with pytest.raises(TypeError):
            ids.normalize_id(bad, redactor.redact)  # type: ignore[arg-type]


@given(st.one_of(st.text(), st.integers()))
def test_normalize_id_is_total_deterministic_and_in_grammar(raw: str | int) -> None:
    redact = lambda s: s  # noqa: E731  (grammar and determinism do not depend on the redactor)
    first = ids.normalize_id(raw, redact)
    assert ids.is_id(first)
    assert first == ids.normalize_id(raw, redact)


def test_session_conversation_id() -> None:
    value = ids.session_conversation_id("mcp-session-abc")
    assert value == "sid-" + hashlib.sha256(b"mcp-session-abc").hexdigest()[:32]
    assert ids.is_id(value)

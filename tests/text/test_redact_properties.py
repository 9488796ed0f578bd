"""Hypothesis properties of the redactor (docs/ledger.md §6.2, docs/ledger.md §14): idempotence, the cap bound, clean text."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.text.redact import build_redactor
from harness.text.redact_known import KnownSecrets
from tests.text.redact_fixtures import FIXTURES, benign_corpus

REDACTOR = build_redactor(KnownSecrets())
CORPUS = benign_corpus(0) + benign_corpus(1)
MARKER = "...[capped]"


def _positive_text(index: int, seed: int) -> tuple[str, str]:
    fixture = FIXTURES[index % len(FIXTURES)]
    positive = fixture.positives[seed % len(fixture.positives)]
    secret = fixture.secret(seed)
    before, after = positive.split()
    return before + secret + after, fixture.body(secret)


# Text built from benign pieces, rule positives, random unicode (lone surrogates and NUL included) and
# fragments of the catalogue's literals, so that near-matches and overlaps are common.
FRAGMENTS = ["password=", "token: ", '"secret": "', "Bearer ", "Basic ", "://", "@", "sk-", "ghp_", "eyJ", ".",
             "-----BEGIN PRIVATE KEY-----\n", "-----END", "[REDACTED:kv_secret]", MARKER, "AKIA", "\\\"", "'", " ",
             "\n", "x", "1234", "==", ":A", "Q~", "key-", "kind: secret\n  k: ", "curl -u ", "mysql -p",
             "LS0tLS1CRUdJTi", "SK", "0123456789abcdef", "null", "$HOME", "Private-Lines: ", "machine h login u "]
piece = st.one_of(
    st.sampled_from(CORPUS),
    st.builds(lambda i, s: _positive_text(i, s)[0], st.integers(0, 59), st.integers(0, 5)),
    st.text(max_size=40),
    st.sampled_from(FRAGMENTS),
)
texts = st.lists(piece, max_size=8).map("".join)


@settings(max_examples=300, deadline=None)
@given(texts)
def test_redact_is_idempotent(text: str) -> None:
    once = REDACTOR.redact(text)
    assert REDACTOR.redact(once) == once


@settings(max_examples=300, deadline=None)
@given(texts, st.integers(1, 400))
def test_cap_bound_and_stored_values_are_fixed_points(text: str, cap: int) -> None:
    out = REDACTOR.redact_for_ledger(text, cap)
    assert len(out.encode("utf-8")) <= cap + 11
    assert "\x00" not in out
    out.encode("utf-8")
    if len(out.encode("utf-8")) <= cap:
        assert REDACTOR.redact_for_ledger(out, cap) == out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(CORPUS), min_size=1, max_size=5).map("\n".join),
       st.text(alphabet="0123456789 .,!?()\n\t", max_size=60))
def test_clean_text_passes_byte_identical(benign: str, filler: str) -> None:
    for text in (benign, filler, benign + "\n" + filler):
        assert REDACTOR.redact(text) == text
        assert REDACTOR.redact_for_ledger(text, 0) == text


def test_benign_corpus_is_byte_identical() -> None:
    for seed in range(20):
        for text in benign_corpus(seed):
            assert REDACTOR.redact(text) == text, text


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 59), st.integers(0, 1000), st.integers(0, 10**6), st.sampled_from(CORPUS))
def test_secret_at_a_random_offset_is_always_removed(index: int, seed: int, where: int, benign: str) -> None:
    secret_text, body = _positive_text(index, seed)
    offset = where % (len(benign) + 1)
    text = benign[:offset] + "\n" + secret_text + "\n" + benign[offset:]
    out = REDACTOR.redact(text)
    grams = {body[i : i + 8] for i in range(len(body) - 7)} or {body}
    assert not [gram for gram in grams if gram in out], out


def test_random_offsets_with_a_plain_rng_cover_every_rule() -> None:
    rng = random.Random(7)
    for index in range(60):
        for _ in range(5):
            secret_text, body = _positive_text(index, rng.randrange(1000))
            benign = rng.choice(CORPUS)
            offset = rng.randrange(len(benign) + 1)
            out = REDACTOR.redact(benign[:offset] + "\n" + secret_text + "\n" + benign[offset:])
            assert body not in out

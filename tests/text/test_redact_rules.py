"""Every catalogue rule against its fixtures (docs/ledger.md §6.7): positives, truncations, near misses."""

from __future__ import annotations

import re

import pytest

from harness.text.redact import build_redactor
from harness.text.redact_engine import ShapeEngine
from harness.text.redact_known import KnownSecrets
from harness.text.redact_rules import CATALOGUE
from harness.text.redact_spans import CLASS_NAMES
from tests.text.redact_fixtures import BY_NUMBER, EXTRA_SHAPES, FIXTURES, Positive, RuleFixture

REDACTOR = build_redactor(KnownSecrets())
RULES = {rule.rule_id: rule for rule in CATALOGUE}
ALONE = {rule.rule_id: ShapeEngine((rule,)) for rule in CATALOGUE}
SEEDS = range(3)


def four_grams(text: str) -> list[str]:
    return [text[i : i + 4] for i in range(len(text) - 3)]


def survivors(body: str, out: str) -> list[str]:
    return [gram for gram in four_grams(body) if gram in out]


def test_catalogue_is_complete() -> None:
    # Rules 1-60 keep their seeded fixtures here; every rule's own examples run in test_redact_rulefile.py.
    assert len(CATALOGUE) >= 60
    assert [rule.number for rule in CATALOGUE] == list(range(1, len(CATALOGUE) + 1))
    ids = [rule.rule_id for rule in CATALOGUE]
    assert len(set(ids)) == len(CATALOGUE)
    assert all(re.fullmatch(r"[a-z0-9_]{1,24}", rule_id) for rule_id in ids)
    assert sorted(BY_NUMBER) == list(range(1, 61))
    for rule in CATALOGUE[:60]:
        fixture = BY_NUMBER[rule.number]
        assert fixture.rule_id == rule.rule_id
        assert len(fixture.positives) >= 3, rule.rule_id
        assert fixture.negatives, rule.rule_id
        assert len(fixture.body(fixture.secret())) >= 3, "a body long enough to cut three ways"


def _cases() -> list[tuple[RuleFixture, Positive]]:
    return [(fixture, positive) for fixture in FIXTURES for positive in fixture.positives]


@pytest.mark.parametrize(
    ("fixture", "positive"), _cases(), ids=[f"{f.number}-{f.rule_id}-{i}" for f in FIXTURES for i, _ in enumerate(f.positives)]
)
def test_positive(fixture: RuleFixture, positive: Positive) -> None:
    before, after = positive.split()
    winner = positive.winner or fixture.rule_id
    if positive.winner:
        own, other = RULES[fixture.rule_id], RULES[positive.winner]
        assert (other.rank, other.number) < (own.rank, own.number), "only a merge may name another rule"
    for seed in SEEDS:
        secret = fixture.secret(seed)
        body = fixture.body(secret)
        text = before + secret + after
        out = REDACTOR.redact(text)
        assert out.startswith(positive.prefix), out
        assert not survivors(body, out), out
        assert f"[REDACTED:{winner}]" in out, out
        # The rule finds the value on its own, whatever wins the merge.
        raw = text.encode()
        start = len((before + secret[: fixture.keep]).encode())
        end = len((before + secret).encode())
        spans = ALONE[fixture.rule_id].spans(raw, raw.lower())
        assert any(span.start <= start and span.end >= end for span in spans), spans


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f"{f.number}-{f.rule_id}" for f in FIXTURES])
def test_truncated(fixture: RuleFixture) -> None:
    before, after = fixture.positives[0].split()
    secret = fixture.secret()
    keep, size = fixture.keep, len(secret)
    for cut in (keep + 1, keep + (size - keep) // 2, size - 1):
        out = REDACTOR.redact(before + secret[:cut])
        assert not survivors(secret[keep:cut], out), (cut, out)
        capped = REDACTOR.redact_for_ledger(before + secret + after, len((before + secret[:cut]).encode()))
        assert capped.endswith("...[capped]")
        assert not survivors(secret[keep:], capped), (cut, capped)


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f"{f.number}-{f.rule_id}" for f in FIXTURES])
def test_negative(fixture: RuleFixture) -> None:
    for text in fixture.negatives:
        assert REDACTOR.redact(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "Bearer authentication",
        "max_tokens: 100",
        "task-1234567890abcdefghij",
        "docker login --password-stdin",
        "git push -u origin main",
        "mysql -P 3306 -p",
        "https://registry.npmjs.org/@scope/pkg",
        "PWD=/home/alice",
        "token_type=bearer",
        "password_file=/run/x",
    ],
)
def test_spec_near_misses(text: str) -> None:
    assert REDACTOR.redact(text) == text


@pytest.mark.parametrize(
    ("number", "make", "template"), EXTRA_SHAPES, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(EXTRA_SHAPES)]
)
def test_other_shapes(number: int, make, template: str) -> None:
    import random

    before, after = template.split("{s}")
    secret = make(random.Random(f"extra:{number}:{template}"))
    rule_id = BY_NUMBER[number].rule_id
    assert REDACTOR.redact(before + secret + after) == f"{before}[REDACTED:{rule_id}]{after}"


def test_classes_match_the_catalogue() -> None:
    context = {1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 25, 28, 29, 30, 34, 35, 48, 50}
    for rule in CATALOGUE[:60]:
        assert CLASS_NAMES[rule.rank] == ("context" if rule.number in context else "token"), rule.rule_id

"""The shape engine's structural rules (docs/ledger.md §6.5), checked on every pattern through `re._parser`."""

from __future__ import annotations

import re
import re._constants as C  # noqa: N812 - the parser's opcode names
import re._parser as sre_parse

import pytest

from harness.text.redact_detectors import Block, MysqlFlag, PuttyBlock, SecretManifest
from harness.text.redact_rules import CATALOGUE

REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT)
# Header classes that must backtrack, each bounded per start (docs/ledger.md §6.5): rule 1's header, rule 28's first suffix,
# rule 62's rest of a command line before its -p / -w option.
BACKTRACKING = {(1, b"[ A-Z0-9_-]"), (28, b"[a-z0-9_.-]"), (62, rb"[^\r\n]"), (198, b"[a-z0-9_.-]"),
                (200, b'[^"\'\\r\\n]'), (208, rb"[^\r\n|;&]")}
BLOCK_BODY_RULES = {5, 25}


def _all_patterns() -> list[tuple[int, int, re.Pattern[bytes]]]:
    """(rule number, index within the detector's patterns, pattern) for every regex the catalogue uses."""
    out = []
    for rule in CATALOGUE:
        for detector in rule.detectors:
            for index, pattern in enumerate(detector.patterns):
                out.append((rule.number, index, pattern))
    return out


PATTERNS = _all_patterns()
IDS = [f"{number}-{index}-{pattern.pattern[:24]!r}" for number, index, pattern in PATTERNS]


def _walk(tree: sre_parse.SubPattern | list, inside_repeat: bool, found: list[tuple]) -> None:
    for op, arg in tree:
        if op in REPEATS:
            low, high, body = arg
            found.append((op, low, high, body, inside_repeat))
            _walk(body, True, found)
        elif op == C.SUBPATTERN:
            _walk(arg[3], inside_repeat, found)
        elif op == C.BRANCH:
            for branch in arg[1]:
                _walk(branch, inside_repeat, found)
        elif op in (C.ASSERT, C.ASSERT_NOT, C.ATOMIC_GROUP):
            _walk(arg[1] if op != C.ATOMIC_GROUP else arg, inside_repeat, found)


def _backtracking_class(pattern: bytes) -> bytes:
    """The source of the class a non-possessive bounded run repeats, for the allowlist."""
    match = re.search(rb"(\[[^\]]*\])\{0,(?:20|100)\}(?!\+)", pattern)
    return match.group(1) if match else b""


@pytest.mark.parametrize(("number", "index", "pattern"), PATTERNS, ids=IDS)
def test_no_nested_repeats_and_all_bounded(number: int, index: int, pattern: re.Pattern[bytes]) -> None:
    found: list[tuple] = []
    _walk(sre_parse.parse(pattern.pattern, pattern.flags), False, found)
    for op, low, high, body, inside in found:
        assert not inside, "a repeat inside a repeat"
        assert high != C.MAXREPEAT, "an unbounded repeat"
        assert high <= (65536 if number in BLOCK_BODY_RULES else 8192), "a repeat over the bound"
        assert op != C.MIN_REPEAT, "a lazy repeat"


@pytest.mark.parametrize(("number", "index", "pattern"), PATTERNS, ids=IDS)
def test_value_runs_are_possessive(number: int, index: int, pattern: re.Pattern[bytes]) -> None:
    found: list[tuple] = []
    _walk(sre_parse.parse(pattern.pattern, pattern.flags), False, found)
    for op, low, high, body, _ in found:
        if op == C.MAX_REPEAT and low != high and high > 1:
            allowed = (number, _backtracking_class(pattern.pattern)) in BACKTRACKING and high <= 100
            assert allowed, f"a backtracking run {low},{high} outside the allowlist"


@pytest.mark.parametrize(("number", "index", "pattern"), [p for p in PATTERNS if p[1] == 0],
                         ids=[i for i, p in zip(IDS, PATTERNS) if p[1] == 0])
def test_anchor_patterns_begin_with_a_literal(number: int, index: int, pattern: re.Pattern[bytes]) -> None:
    tree = sre_parse.parse(pattern.pattern, pattern.flags)
    assert tree[0][0] == C.LITERAL, "the first element must be a literal, never a class or \\b"


def test_every_hit_anchored_detector_matches_its_literal_first() -> None:
    # These three only use their literal as a gate and find their own anchors (` -p`, a newline, a header).
    gated_only = (MysqlFlag, PuttyBlock, SecretManifest)
    for rule in CATALOGUE:
        for detector in rule.detectors:
            if isinstance(detector, gated_only):
                continue
            anchor = detector.patterns[0]
            prefix = bytes(arg for op, arg in _leading_literals(sre_parse.parse(anchor.pattern, anchor.flags)))
            assert prefix.startswith(detector.literal), (rule.rule_id, detector.literal, prefix)


def _leading_literals(tree: sre_parse.SubPattern) -> list[tuple[int, int]]:
    out = []
    for op, arg in tree:
        if op != C.LITERAL:
            break
        out.append((op, arg))
    return out


def test_block_rules_use_the_find_based_scanner() -> None:
    for rule in CATALOGUE:
        if rule.number in (1, 2, 3, 4):
            assert all(isinstance(detector, (Block, PuttyBlock)) for detector in rule.detectors), rule.rule_id
            for detector in rule.detectors:
                source = b"".join(p.pattern for p in detector.patterns)
                assert b"[\\s\\S]*?" not in source and b".*?" not in source


def test_no_rule_runs_on_entropy_alone() -> None:
    for rule in CATALOGUE:
        for detector in rule.detectors:
            assert len(detector.literal) >= 2, (rule.rule_id, detector.literal)

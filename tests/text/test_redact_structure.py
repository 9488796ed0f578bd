"""The shape engine's structural rules (docs/redaction.md): every pattern runs on RE2, anchored on its literal."""

from __future__ import annotations

import pytest

from harness.text.redact_detectors import Anchored, Base64Pem, Block, MysqlFlag, PuttyBlock, SecretManifest
from harness.text.redact_pattern import RE2_MAX_REPEAT, Regex, escape, open_repeat
from harness.text.redact_rules import CATALOGUE


def _all_patterns() -> list[tuple[int, int, Regex]]:
    """(rule number, index within the detector's patterns, pattern) for every regex the catalogue uses."""
    out = []
    for rule in CATALOGUE:
        for detector in rule.detectors:
            for index, pattern in enumerate(detector.patterns):
                out.append((rule.number, index, pattern))
    return out


PATTERNS = _all_patterns()


def test_every_pattern_is_an_re2_pattern() -> None:
    assert PATTERNS
    assert all(isinstance(pattern, Regex) for _, _, pattern in PATTERNS)


def test_every_hit_anchored_detector_matches_its_literal_first() -> None:
    # These only use their literal as a gate and find their own anchors (` -p`, a newline, a header, a run).
    gated_only = (MysqlFlag, PuttyBlock, SecretManifest, Base64Pem)
    for rule in CATALOGUE:
        for detector in rule.detectors:
            if isinstance(detector, gated_only):
                continue
            anchor = detector.patterns[0]
            if isinstance(detector, Anchored):
                # The fixed-width check before a mid-token anchor leads, then the anchor.
                assert anchor.source.startswith(b"(?:" + detector.before + b")" + escape(detector.literal))
            else:
                assert anchor.source.startswith(escape(detector.literal)), (rule.rule_id, detector.literal)


def test_key_patterns_have_no_open_repeat() -> None:
    # A key is matched once per literal hit, so each must stop after a bounded number of bytes.
    for rule in CATALOGUE:
        for detector in rule.detectors:
            key = getattr(detector, "key", None)
            if key is not None:
                assert not open_repeat(key), rule.rule_id


def test_open_repeat_is_seen_outside_classes_and_escapes_only() -> None:
    assert open_repeat(rb"a*") and open_repeat(rb"(?:ab)+") and open_repeat(rb"x{3,}")
    assert not open_repeat(rb"[*+]{1,4}") and not open_repeat(rb"\*\+") and not open_repeat(rb"a{3,5}")
    assert not open_repeat(rb"[^]*+]{2}")


def test_re2_refuses_what_it_cannot_run() -> None:
    for source in (rb"a{1,4}+", rb"a(?=b)", rb"(a)\1", rb"a{0,%d}" % (RE2_MAX_REPEAT + 1)):
        with pytest.raises(ValueError, match="RE2 cannot run it"):
            Regex(source)


def test_block_rules_use_the_find_based_scanner() -> None:
    for rule in CATALOGUE:
        if rule.number in (1, 2, 3, 4):
            assert all(isinstance(detector, (Block, PuttyBlock)) for detector in rule.detectors), rule.rule_id
            for detector in rule.detectors:
                source = b"".join(p.source for p in detector.patterns)
                assert b"[\\s\\S]*?" not in source and b".*?" not in source


def test_no_rule_runs_on_entropy_alone() -> None:
    for rule in CATALOGUE:
        for detector in rule.detectors:
            assert len(detector.literal) >= 2, (rule.rule_id, detector.literal)

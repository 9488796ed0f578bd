"""`Regex.search_from` (anchored tries at a literal's hits, then RE2's own search) finds exactly what `search` finds.

The detectors that open with a literal use it in place of `search` for speed (docs/decisions.md, "Redaction
throughput"); these run it beside `search` on every such pattern of the catalogue, over texts built from the
rules' own examples, with failing hits before, between and after the real ones.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.text.redact_detectors import KeyValue
from harness.text.redact_engine import ENGINE
from harness.text.redact_pattern import ANCHORED_TRIES, Regex, escape
from harness.text.redact_rules import expand_example


# (regex, literal, an example text) for every detector pattern that opens with its literal.
def _cases() -> list[tuple[Regex, bytes, bytes]]:
    out = []
    for rule in ENGINE.rules:
        for detector in rule.detectors:
            patterns = detector.patterns
            if not patterns or not patterns[0].source.startswith(escape(detector.literal)):
                continue
            lowered = isinstance(detector, KeyValue) and not detector.original  # it searches the lowered copy
            examples = [expand_example(text, f"{rule.rule_id}:search").encode("utf-8") for text in rule.examples]
            examples = [example.lower() if lowered else example for example in examples]
            # The example this detector's literal finds (a rule with several literals has one detector per literal).
            found = [example for example in examples if patterns[0].search(example) is not None]
            out.append((patterns[0], detector.literal, (found or examples)[0]))
    return out


CASES = _cases()


def _all_matches(regex: Regex, text: bytes, literal: bytes, use_from: bool) -> list[list[tuple[int, int]]]:
    """Every search result from every start position a detector's loop can reach."""
    out = []
    for pos in range(len(text) + 1):
        out.append(regex.search_from(text, literal, pos) if use_from else regex.search(text, pos))
    return out


def test_every_literal_first_pattern_is_covered() -> None:
    assert len(CASES) > 200


@pytest.mark.parametrize(("regex", "literal", "example"), CASES, ids=[c[0].source[:30].decode("latin-1") for c in CASES])
def test_search_from_equals_search_on_the_rules_examples(regex: Regex, literal: bytes, example: bytes) -> None:
    # Failing hits (the literal alone) more than ANCHORED_TRIES times before and after the example, so both the
    # anchored tries and the unanchored fallback are reached.
    text = (literal + b" ") * (ANCHORED_TRIES + 1) + example + b" " + literal + b"\n" + example + (b" " + literal) * 2
    for pos in (0, 1, len(text) // 3, len(text) // 2, len(text) - 1, len(text)):
        assert regex.search_from(text, literal, pos) == regex.search(text, pos)
    assert regex.search_from(text, literal, 0) == regex.search(text, 0)


def test_most_cases_hold_a_match() -> None:
    """The examples reach the anchored tries' success path too (a literal without its own example only misses)."""
    matched = sum(regex.search(example) is not None for regex, _, example in CASES)
    assert matched >= 300


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_search_from_equals_search_on_mixed_text(data: st.DataObject) -> None:
    regex, literal, example = data.draw(st.sampled_from(CASES))
    pieces = st.one_of(st.just(literal), st.just(example), st.just(example[: max(1, len(example) // 2)]),
                       st.binary(max_size=12), st.sampled_from([b" ", b"\n", b"\"", b"=", b":"]))
    text = b"".join(data.draw(st.lists(pieces, max_size=12)))
    assert _all_matches(regex, text, literal, True) == _all_matches(regex, text, literal, False)

"""Key rules whose gate says what the value opens with (redact_detectors.KeyValue.gates): a closed gate only ever
skips a detector that would have found nothing. Checked by running every such detector ungated over the rules'
examples in three casings, the benign and held-out corpora and generated text, and by comparing the base64
pattern of `decodes_with_colon` with decoding itself."""

from __future__ import annotations

import base64

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.text.redact_detectors import _COLON_IN_BASE64, CHECKS, KeyValue, Segs
from harness.text.redact_engine import ENGINE
from harness.text.redact_pattern import Regex
from harness.text.redact_rules import expand_example
from tests.text import benign_corpus, heldout_corpus


def _tailed() -> list[tuple[object, KeyValue, Regex, bool]]:
    """(rule, detector, gate, whether the gate reads the lowered copy) of every key rule whose gate has a tail."""
    out = []
    for rule, detector in ENGINE._detectors:
        if isinstance(detector, KeyValue) and isinstance(detector.value, Segs):
            ((on_lowered, source),) = detector.gates()
            if source != detector._re.source:
                out.append((rule, detector, Regex(source), on_lowered))
    return out


TAILED = _tailed()


def _closed_but_found(text: bytes) -> list[str]:
    """The rules whose detector finds a value in `text` while its gate stays closed."""
    lowered = text.lower()
    wrong = []
    for rule, detector, gate, on_lowered in TAILED:
        found: list = []
        detector.scan(text, lowered, rule, found)
        if found and gate.search(lowered if on_lowered else text) is None:
            wrong.append(rule.rule_id)
    return wrong


def _cased(text: str) -> list[str]:
    return [text, text.upper(), text.lower(), text.title(), text.swapcase()]


def test_the_tailed_rules_include_the_checks_and_the_userinfo() -> None:
    ids = {rule.rule_id for rule, *_ in TAILED}
    assert {"bearer_token", "basic_credentials", "url_userinfo"} <= ids
    checks = {detector.check.name for _, detector, *_ in TAILED if detector.check is not None}
    assert {CHECKS["digit_or_mark"].name, CHECKS["decodes_with_colon"].name} <= checks


def test_no_gate_closes_on_a_value_its_detector_finds() -> None:
    texts = [line for line in benign_corpus.lines()] + [case.text for case in heldout_corpus.cases()]
    for rule in ENGINE.rules:
        for index, example in enumerate((*rule.examples, *rule.negative_examples)):
            for seed in range(2):
                texts.extend(_cased(expand_example(example, f"{rule.rule_id}:{index}:{seed}")))
    found_somewhere = set()
    for text in texts:
        buf = text.encode("utf-8")
        assert _closed_but_found(buf) == [], text[:120]
        lowered = buf.lower()
        for rule, detector, _, _ in TAILED:
            spans: list = []
            detector.scan(buf, lowered, rule, spans)
            if spans:
                found_somewhere.add(rule.rule_id)
    # The check is not vacuous: every tailed rule found a value in these texts.
    assert found_somewhere == {rule.rule_id for rule, *_ in TAILED}


_PIECES = st.sampled_from([
    "Authorization: Bearer ", "Basic ", "basic ", "BEARER ", "bearer\t", "https://", "://", "u:", "@", ":", "=",
    "==", "/", "+", ".", "-", "~", "_", " ", "\n", '"', "'", "authentication", "abc123", "dXNlcjpwYXNz",
    "YWxhZGRpbjpvcGVuc2VzYW1l", "QWxhZGRpbjpvcGVuIHNlc2FtZQ", "OgE6", "ZXZlOm",
])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_PIECES, st.text(alphabet="aAbOoDTjz06+/=:-. ", max_size=12)), max_size=10))
def test_generated_text_never_finds_a_value_behind_a_closed_gate(parts: list[str]) -> None:
    assert _closed_but_found("".join(parts).encode("utf-8")) == []


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=40), st.sampled_from([b"", b"=", b"=="]), st.booleans())
def test_the_base64_colon_pattern_matches_every_value_that_decodes_to_a_colon(
    data: bytes, padding: bytes, strip: bool
) -> None:
    pattern = Regex(_COLON_IN_BASE64)
    encoded = base64.b64encode(data)
    # On a whole encoding the pattern says exactly what decoding says.
    assert (pattern.match(encoded) is not None) is (b":" in data), encoded
    # On any value (padding dropped or changed), every value the check passes matches.
    value = encoded.rstrip(b"=") + padding if strip else encoded
    if CHECKS["decodes_with_colon"].test(value + b" ", 0, len(value), False):
        assert pattern.match(value) is not None, value

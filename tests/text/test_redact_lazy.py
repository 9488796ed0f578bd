"""The catalogue loads without compiling its detectors or its gates (docs/decisions.md, "Cold start"): the checks
that make this safe. The package file still compiles in full, the gate reports what one Set would, cold and warm, a
pattern compiled on first use by many threads at once answers like one compiled up front, and the one-pass byte
classes are exact."""

from __future__ import annotations

import threading

import re2
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.text.redact_detectors import Anchored, Token, detector_regexes
from harness.text.redact_engine import ENGINE, GATE_MAX_MEM, WARM_BYTES, _Gate
from harness.text.redact_pattern import Regex, byte_set, escape, re2_options
from harness.text.redact_rules import CATALOGUE, expand_example, package_rules
from tests.text import benign_corpus


def test_the_package_file_compiles_every_pattern_when_checked() -> None:
    # What the loader skips at import is done here: every field and every pattern built from it goes through RE2.
    checked = package_rules(check=True)
    assert [rule.rule_id for rule in checked] == [rule.rule_id for rule in CATALOGUE]
    compiled = [regex for rule in checked for detector in rule.detectors for regex in detector_regexes(detector)]
    assert len(compiled) > 1000
    assert all(regex.check() is regex for regex in compiled)


def test_detector_regexes_include_the_cut_form() -> None:
    token = next(d for rule in CATALOGUE for d in rule.detectors if isinstance(d, Token) and d._prefix is not None)
    held = list(detector_regexes(token))
    assert token._re in held and token._prefix in held


def _texts() -> list[bytes]:
    texts = []
    for rule in CATALOGUE:
        for index, example in enumerate((*rule.examples, *rule.negative_examples)):
            texts.append(expand_example(example, f"{rule.rule_id}:{index}:0").encode("utf-8"))
    texts += [line.encode("utf-8") for line in benign_corpus.lines()]
    return texts


def test_the_gate_reports_the_owners_one_set_reports_cold_and_warm() -> None:
    texts = _texts()
    # Each copy's gate patterns (the engine's first two gates), as one Set and as the gate, before and after it
    # turns warm.
    for on_lowered in (True, False):
        entries = []
        for index, (_, detector) in enumerate(ENGINE._detectors):
            for lowered, source in detector.gates():
                if lowered == on_lowered:
                    entries.append((source, index, detector.literal.lower() if lowered else detector.literal))
        single = re2.Set.SearchSet(re2_options(GATE_MAX_MEM))
        single.Add(rb"\z")
        for source, _, _ in entries:
            single.Add(source)
        single.Compile()
        copies = [text.lower() if on_lowered else text for text in texts]
        expected = [{entries[index - 1][1] for index in (single.Match(copy) or ()) if index} for copy in copies]
        gate = _Gate(entries)
        assert gate.sets()[0] == 0
        assert [gate.matched(copy) for copy in copies] == expected
        # The rules' own examples hold most literals, so most of the per-literal Sets were built and consulted.
        compiled, count = gate.sets()
        assert count > 100 and compiled > count // 2
        gate.warm()
        assert [gate.matched(copy) for copy in copies] == expected
        assert gate.sets()[1] == count + 1


def test_a_gate_turns_warm_after_warm_bytes_of_text() -> None:
    entries = [(escape(b"ghp_") + b"[a-z]{4}", 0, b"ghp_"), (rb"secret\s*=", 1, b"secret")]
    gate = _Gate(entries)
    text = b"x" * 1000 + b"ghp_abcd"
    seen = 0
    while seen <= WARM_BYTES:
        assert gate._warm is None and gate.matched(text) == {0}
        seen += len(text)
    assert gate.matched(text) == {0} and gate._warm is not None
    assert gate.matched(b"secret = 1") == {1}


def test_a_gate_runs_only_the_sets_of_the_literals_a_text_holds() -> None:
    entries = [(escape(literal) + b"[a-z]{4}", number, literal) for number, literal in enumerate((b"ab_", b"cd_"))]
    gate = _Gate(entries)
    assert gate.matched(b"no literal here") == set() and gate.sets() == (0, 2)
    assert gate.matched(b"ab_wxyz") == {0} and gate.sets() == (1, 2)
    assert gate.matched(b"ab_ and cd_wxyz") == {1} and gate.sets() == (2, 2)


def _unanchored_entries() -> tuple[list[tuple[bytes, int, bytes]], tuple[bytes, ...]]:
    """The mid-token anchors' gate entries, as ShapeEngine builds its third gate."""
    entries = []
    for index, (_, detector) in enumerate(ENGINE._detectors):
        for on_lowered, source in detector.gates():
            if not on_lowered and isinstance(detector, Anchored) and not source.startswith(escape(detector.literal)):
                entries.append((source, index, detector.literal))
    return entries, tuple(sorted({literal for _, _, literal in entries}))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_unanchored_entries()[1]), st.binary(max_size=40),
                          st.sampled_from([b"-u", b"us", b".atlasv1", b"Q", b"~", b"-US", b"q~"])), max_size=12))
def test_the_anchored_gate_skips_a_text_exactly_when_no_anchor_occurs(parts: list[bytes]) -> None:
    # The pre-check (one Aho-Corasick pass) must agree with `literal in text` for every anchor, and the gate with
    # the pre-check must report what the same Set reports without it.
    entries, anchors = _unanchored_entries()
    text = b"".join(parts)
    gated = _Gate(entries, anchors)
    ungated = _Gate(entries)
    occurs = any(anchor in text for anchor in anchors)
    assert bool(gated._literals.find_matches_as_indexes(text)) is occurs
    assert gated.matched(text) == (ungated.matched(text) if occurs else set())


def test_a_deferred_pattern_compiles_once_under_concurrent_first_use() -> None:
    source = rb"ghp_[A-Za-z0-9]{36,255}"
    text = b"token ghp_" + b"a" * 40 + b" end"
    eager = Regex(source)
    for _ in range(20):
        deferred = Regex(source, deferred=True)
        results: list[object] = []
        start = threading.Barrier(8)

        def search(pattern: Regex = deferred) -> None:
            start.wait()
            results.append(pattern.search(text))

        threads = [threading.Thread(target=search) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert results == [eager.search(text)] * 8
        assert deferred.groupindex == eager.groupindex == {}


def test_a_deferred_pattern_reports_its_groups_and_a_bad_pattern_on_first_use() -> None:
    assert Regex(rb"(?P<q>[\"'])x", deferred=True).groupindex == {"q": 1}
    bad = Regex(rb"a(?=b)", deferred=True)
    try:
        bad.check()
    except ValueError as exc:
        assert "RE2 cannot run it" in str(exc)
    else:
        raise AssertionError("a pattern RE2 cannot run compiled")


def test_byte_sets_match_a_byte_by_byte_test() -> None:
    classes = {rb"A-Za-z0-9_", rb"^\s\"'`&,;\\", rb"0-9a-f", rb"\x00-\x1f\x7f", rb"^a-z", rb"\-._~"}
    for rule in CATALOGUE:
        for detector in rule.detectors:
            left = getattr(detector, "left", None)
            for cls in (getattr(left, "reject", None), getattr(left, "accept", None),
                        getattr(detector, "right_reject", None)):
                if cls:
                    classes.add(cls)
    assert len(classes) > 6
    for cls in classes:
        one = Regex(b"[" + cls + b"]")
        assert byte_set(cls) == frozenset(value for value in range(256) if one.fullmatch(bytes([value]))), cls

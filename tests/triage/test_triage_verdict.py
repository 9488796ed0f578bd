"""Verdict schema v1 (docs/triage.md §4): the V0 vector and change table, gate modes, model and cross-field rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from triage_samples import V0_CANONICAL, V0_SHA256, tp_sample, v0

from harness.text.canonjson import dumps
from harness.text.formatgate import FormatError
from harness.triage.verdict import (
    CodeFix,
    Evidence,
    IocChange,
    ObjectInputError,
    Suppression,
    Transition,
    hash12,
    load_verdict,
    validate_verdict,
    verdict_mode,
    verdict_sha256,
)

Doc = dict[str, Any]

IOC = {
    "kind": "ioc",
    "type": "domain",
    "value": "evil.net",
    "confidence": "high",
    "provenance": "maintainer report",
    "campaign": "c-1",
}


def error(doc: Any) -> str:
    """The message validation gives `doc`; fails the test when it is valid."""
    with pytest.raises((ObjectInputError, FormatError)) as info:
        validate_verdict(doc)
    return str(info.value)


def changed(edit: Callable[[Doc], object], base: Callable[[], Doc] = v0) -> Doc:
    doc = base()
    edit(doc)
    return doc


def test_v0_is_valid_with_the_pinned_digest() -> None:
    doc = v0()
    assert dumps(doc) == V0_CANONICAL
    assert len(dumps(doc).encode("utf-8")) == 606
    assert verdict_sha256(doc) == V0_SHA256
    assert hash12(V0_SHA256) == "260f694d794f"
    verdict = validate_verdict(doc)
    assert verdict.sha256 == V0_SHA256
    assert verdict.document == doc
    assert verdict.package == "tiny-demo-bin"
    assert verdict.verdict == "FP"
    assert verdict.confidence == "high"
    assert verdict.rationale == "The install scriptlet did not change in this update."
    assert verdict.transition == Transition("1.0.0-1", "1.0.1-1", "a1" * 20, "b2" * 20)
    assert verdict.evidence == (
        Evidence("R007", "tiny-demo.install", None, "The scriptlet is byte-identical to the previous release.", None),
    )
    assert verdict.proposed_changes == (
        Suppression("R007", "Unchanged install scriptlet re-reported by the analysis."),
    )
    assert verdict.code_fixes == ()


def test_v0_digest_is_of_the_document_as_submitted() -> None:
    doc = v0()
    doc["evidence"][0]["url"] = None  # an optional key given as null stays in the digest
    assert validate_verdict(doc).sha256 != V0_SHA256


# The V0 change table of docs/triage.md §4, row by row.


@pytest.mark.parametrize(("value", "shown"), [(True, "true"), ("1", '"1"'), (1.0, "1.0"), (2, "2"), (None, "null")])
def test_schema_version_is_strictly_the_integer_one(value: object, shown: str) -> None:
    doc = changed(lambda d: d.update(schema_version=value))
    assert error(doc) == f"verdict: $.schema_version: must be the integer 1, got {shown}"


def test_confidence_must_be_a_string() -> None:
    assert (
        error(changed(lambda d: d.update(confidence=0.9))) == "verdict: $.confidence: expected a string, got a number"
    )


def test_unknown_top_level_key() -> None:
    assert error(changed(lambda d: d.update(notes="x"))) == "verdict: $.notes: unknown key"


def test_package_given_twice_in_the_text() -> None:
    doubled = V0_CANONICAL.replace('"package":"tiny-demo-bin"', '"package":"tiny-demo-bin","package":"tiny-demo-bin"')
    with pytest.raises(ObjectInputError) as info:
        load_verdict(doubled)
    assert str(info.value) == 'verdict: duplicate key "package" at $'


@pytest.mark.parametrize("package", ["Tiny-Demo", "a..b"])
def test_package_pattern(package: str) -> None:
    assert (
        error(changed(lambda d: d.update(package=package))) == f'verdict: $.package: "{package}" is not a package name'
    )


def test_em_dash_in_rationale() -> None:
    doc = changed(lambda d: d.update(rationale="Unchanged\u2014really."))
    assert error(doc) == (
        'format gate: $.rationale: em dash U+2014 at index 9 is not allowed (use ":", ";", "," or parentheses)'
    )


def test_double_hyphen_in_claim() -> None:
    doc = changed(lambda d: d["evidence"][0].update(claim="unchanged -- really"))
    assert error(doc) == (
        'format gate: $.evidence[0].claim: "--" sentence separator (U+002D U+002D) at index 10 is not allowed in prose'
    )


def test_fp_needs_a_transition() -> None:
    assert error(changed(lambda d: d.update(transition=None))) == (
        "verdict: $.transition: an FP verdict needs both versions and both commits (X1)"
    )


def test_fp_needs_evidence() -> None:
    assert error(changed(lambda d: d.update(evidence=[]))) == (
        "verdict: $.evidence: an FP verdict needs at least one evidence item (X2)"
    )


def test_suppressions_must_match_the_evidence_rules() -> None:
    doc = changed(lambda d: d["proposed_changes"][0].update(rule_id="R053"))
    assert (
        error(doc) == "verdict: $.proposed_changes: suppressed rules (R053) differ from the evidence rules (R007) (X3)"
    )


def test_fp_refuses_an_added_ioc_change() -> None:
    doc = changed(lambda d: d["proposed_changes"].append(dict(IOC)))
    assert error(doc) == "verdict: $.proposed_changes[1].kind: an FP verdict proposes only suppressions (X3)"


@pytest.mark.parametrize(("rule", "base"), [("R012", "R012"), ("R013b", "R013")])
def test_fatal_rules_never_suppress(rule: str, base: str) -> None:
    def edit(d: Doc) -> None:
        d["evidence"][0]["rule_id"] = rule
        d["proposed_changes"][0]["rule_id"] = rule

    assert (
        error(changed(edit)) == f"verdict: $.evidence[0].rule_id: rule {base} is FATAL and can never be suppressed (X4)"
    )


def test_uncertain_with_a_suppression() -> None:
    assert error(changed(lambda d: d.update(verdict="uncertain"))) == (
        "verdict: $.proposed_changes: an uncertain verdict proposes no changes (X6)"
    )


def test_oversize_document_is_refused_before_anything_else() -> None:
    doc = changed(lambda d: d.update(rationale="\u2014" * 600_000, notes="x"))
    assert error(doc) == "verdict: input is larger than 1,048,576 bytes"


# Validation order: size, then gate, then model, then cross-field rules.


def test_gate_runs_before_the_model() -> None:
    doc = changed(lambda d: d.update(notes="caf\u00e9", package="BAD"))
    assert error(doc) == "format gate: $.notes: character U+00E9 at index 3 is not allowed"


def test_gate_covers_keys_and_unknown_paths_in_line_mode() -> None:
    assert error(changed(lambda d: d.update({"n\u00f6tes": 1}))).startswith(
        'format gate: $["n\\u00f6tes"]: character U+00F6'
    )
    assert error(changed(lambda d: d.update(notes="two\nlines"))) == (
        "format gate: $.notes: character U+000A at index 3 is not allowed"
    )


def test_model_runs_before_cross_field_rules() -> None:
    doc = changed(lambda d: d.update(transition=None, confidence="very"))
    assert error(doc) == 'verdict: $.confidence: "very" is not one of low, medium, high'


def test_unknown_keys_are_reported_before_missing_ones() -> None:
    doc = changed(lambda d: (d.pop("package"), d.update(zzz=1)))
    assert error(doc) == "verdict: $.zzz: unknown key"
    assert error(changed(lambda d: d.pop("package"))) == "verdict: $.package: required key is missing"


def test_fields_are_checked_in_schema_order() -> None:
    doc = changed(lambda d: d.update(code_fixes="x", verdict="fp", package="A"))
    assert error(doc) == 'verdict: $.package: "A" is not a package name'


# Gate modes by path.


@pytest.mark.parametrize(
    ("path", "mode"),
    [
        (("rationale",), "prose_text"),
        (("evidence", 0, "claim"), "prose_line"),
        (("proposed_changes", 3, "reason"), "prose_line"),
        (("proposed_changes", 3, "note"), "prose_line"),
        (("code_fixes", 7, "diff"), None),
        (("code_fixes", 7, "path"), "line"),
        (("evidence", 0, "file"), "line"),
        (("proposed_changes", 0, "provenance"), "prose_line"),
        (("proposed_changes", 0, "campaign"), "line"),
        (("evidence", "0", "claim"), "line"),
        (("claim",), "line"),
        (("rationale", 0), "line"),
        ((), "line"),
    ],
)
def test_verdict_modes(path: tuple[str | int, ...], mode: str | None) -> None:
    assert verdict_mode(path) == mode


def test_rationale_may_span_lines_but_claims_may_not() -> None:
    assert validate_verdict(changed(lambda d: d.update(rationale="line one\nline two")))
    assert error(changed(lambda d: d["evidence"][0].update(claim="a\nb"))).startswith(
        "format gate: $.evidence[0].claim: character U+000A"
    )
    assert error(changed(lambda d: d.update(rationale="a\tb"))).startswith("format gate: $.rationale: character U+0009")


def test_double_hyphen_allowed_outside_prose() -> None:
    doc = changed(lambda d: d["evidence"][0].update(url="https://xn--bcher-kva.example.org/a--b"))
    assert validate_verdict(doc)


def test_diffs_are_left_to_the_code_fix_gate() -> None:
    # Their context lines carry the watcher file's own text; fp_agent_pr gates each fix alone.
    for diff in ("--- a/x\n+\tnew -- text\n", "--- a/x\r\n", " caf\u00e9\n+\u2014\n"):
        fix = {"path": "src/trustsight/a.py", "diff": diff}
        assert validate_verdict(changed(lambda d, fix=fix: d["code_fixes"].append(fix))).code_fixes[0].diff == diff
    fix = {"path": "src/trustsight/a.py", "diff": "\ud800"}
    assert error(changed(lambda d: d["code_fixes"].append(fix))) == (
        "verdict: a string contains a lone surrogate, which UTF-8 cannot encode"
    )


def test_suppression_reason_and_ioc_note_are_prose() -> None:
    assert error(changed(lambda d: d["proposed_changes"][0].update(reason="a -- b"))).startswith(
        'format gate: $.proposed_changes[0].reason: "--"'
    )
    tp = tp_sample()
    tp["proposed_changes"][0]["note"] = "x -- y"
    assert error(tp).startswith('format gate: $.proposed_changes[0].note: "--"')
    tp["proposed_changes"][0]["note"] = "x"
    tp["proposed_changes"][0]["provenance"] = "maintainer report -- see the AUR thread"
    assert error(tp) == (
        'format gate: $.proposed_changes[0].provenance: "--" sentence separator (U+002D U+002D) at index 18 '
        "is not allowed in prose"
    )


# Model: types, enums, lengths and patterns.


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda d: d.update(package=1), "verdict: $.package: expected a string, got an integer"),
        (lambda d: d.update(verdict="fp"), 'verdict: $.verdict: "fp" is not one of FP, TP, uncertain'),
        (lambda d: d.update(confidence="High"), 'verdict: $.confidence: "High" is not one of low, medium, high'),
        (lambda d: d.update(rationale=""), "verdict: $.rationale: must be 1 to 4,000 characters, got 0"),
        (lambda d: d.update(rationale="x" * 4001), "verdict: $.rationale: must be 1 to 4,000 characters, got 4,001"),
        (lambda d: d.update(transition=[]), "verdict: $.transition: expected an object, got an array"),
        (lambda d: d.update(evidence={}), "verdict: $.evidence: expected an array, got an object"),
        (lambda d: d.update(proposed_changes=None), "verdict: $.proposed_changes: expected an array, got null"),
        (lambda d: d.update(code_fixes=True), "verdict: $.code_fixes: expected an array, got a boolean"),
        (lambda d: d.update(package="x" * 200), "verdict: $.package: a string of 200 characters is not a package name"),
    ],
)
def test_top_level_fields(edit: Callable[[Doc], object], expected: str) -> None:
    assert error(changed(edit)) == expected


def test_rationale_of_4000_characters_passes() -> None:
    assert validate_verdict(changed(lambda d: d.update(rationale="x" * 4000)))


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda t: t.pop("old_commit"), "verdict: $.transition.old_commit: required key is missing"),
        (lambda t: t.update(extra=1), "verdict: $.transition.extra: unknown key"),
        (lambda t: t.update(new_version="1.0.1"), 'verdict: $.transition.new_version: "1.0.1" is not a version'),
        (lambda t: t.update(old_version="x"), 'verdict: $.transition.old_version: "x" is not a version'),
        (lambda t: t.update(new_commit="B2B2B2B"), 'verdict: $.transition.new_commit: "B2B2B2B" is not a commit'),
        (lambda t: t.update(old_commit="a1a1"), 'verdict: $.transition.old_commit: "a1a1" is not a commit'),
        (lambda t: t.update(new_version=None), "verdict: $.transition.new_version: expected a string, got null"),
        (lambda t: t.update(new_commit=None), "verdict: $.transition.new_commit: expected a string, got null"),
        (
            lambda t: t.update(old_version=None),
            "verdict: $.transition: old_version and old_commit must both be null or both be set",
        ),
        (
            lambda t: t.update(old_commit=None),
            "verdict: $.transition: old_version and old_commit must both be null or both be set",
        ),
    ],
)
def test_transition_shape(edit: Callable[[Doc], object], expected: str) -> None:
    assert error(changed(lambda d: edit(d["transition"]))) == expected


def test_transition_without_an_old_side_is_valid_for_tp_but_not_fp() -> None:
    def first_release(d: Doc) -> None:
        d["transition"].update(old_version=None, old_commit=None)

    tp = changed(first_release, tp_sample_with_transition)
    assert validate_verdict(tp).transition == Transition(None, "1.0.1-1", None, "b2" * 20)
    assert (
        error(changed(first_release))
        == "verdict: $.transition: an FP verdict needs both versions and both commits (X1)"
    )


def tp_sample_with_transition() -> Doc:
    doc = tp_sample()
    doc["transition"] = v0()["transition"]
    return doc


@pytest.mark.parametrize(("old", "new"), [("b2" * 20, "b2" * 20), ("b2b2b2b", "b2" * 20), ("a1" * 20, "a1a1a1a1")])
def test_fp_commits_must_differ_without_prefixes(old: str, new: str) -> None:
    doc = changed(lambda d: d["transition"].update(old_commit=old, new_commit=new))
    assert error(doc) == (
        "verdict: $.transition: old_commit and new_commit must differ and neither may be a prefix of the other (X1)"
    )


def test_abbreviated_distinct_commits_pass() -> None:
    assert validate_verdict(changed(lambda d: d["transition"].update(old_commit="a1a1a1a", new_commit="b2b2b2b")))


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda e: e.update(rule_id="X12"), 'verdict: $.evidence[0].rule_id: "X12" is not a rule id'),
        (
            lambda e: e.update(file="../PKGBUILD"),
            'verdict: $.evidence[0].file: "../PKGBUILD" is not an evidence file path',
        ),
        (lambda e: e.update(file=""), 'verdict: $.evidence[0].file: "" is not an evidence file path'),
        (lambda e: e.update(line=0), "verdict: $.evidence[0].line: must be an integer 1 to 10,000,000 or null, got 0"),
        (
            lambda e: e.update(line=10_000_001),
            "verdict: $.evidence[0].line: must be an integer 1 to 10,000,000 or null, got 10000001",
        ),
        (
            lambda e: e.update(line=True),
            "verdict: $.evidence[0].line: must be an integer 1 to 10,000,000 or null, got true",
        ),
        (
            lambda e: e.update(line=7.0),
            "verdict: $.evidence[0].line: must be an integer 1 to 10,000,000 or null, got 7.0",
        ),
        (
            lambda e: e.update(line="7"),
            'verdict: $.evidence[0].line: must be an integer 1 to 10,000,000 or null, got "7"',
        ),
        (lambda e: e.update(claim=""), "verdict: $.evidence[0].claim: must be 1 to 500 characters, got 0"),
        (lambda e: e.update(claim="x" * 501), "verdict: $.evidence[0].claim: must be 1 to 500 characters, got 501"),
        (lambda e: e.update(url=""), "verdict: $.evidence[0].url: must be 1 to 2,048 characters, got 0"),
        (
            lambda e: e.update(url="https://" + "a" * 2041),
            "verdict: $.evidence[0].url: must be 1 to 2,048 characters, got 2,049",
        ),
        (
            lambda e: e.update(url="file:///etc/passwd"),
            'verdict: $.evidence[0].url: "file:///etc/passwd" is not an http, https or ftp URL',
        ),
        (lambda e: e.update(url="https://"), 'verdict: $.evidence[0].url: "https://" is not an http, https or ftp URL'),
        (
            lambda e: e.update(url="https://a b"),
            'verdict: $.evidence[0].url: "https://a b" is not an http, https or ftp URL',
        ),
        (lambda e: e.update(url=5), "verdict: $.evidence[0].url: expected a string, got an integer"),
        (lambda e: e.pop("line"), "verdict: $.evidence[0].line: required key is missing"),
        (lambda e: e.update(severity="high"), "verdict: $.evidence[0].severity: unknown key"),
    ],
)
def test_evidence_items(edit: Callable[[Doc], object], expected: str) -> None:
    assert error(changed(lambda d: edit(d["evidence"][0]))) == expected


@pytest.mark.parametrize(
    "edit",
    [
        lambda e: e.update(line=1),
        lambda e: e.update(line=10_000_000),
        lambda e: e.update(url=None),
        lambda e: e.update(url="HTTPS://Example.org/a"),
        lambda e: e.update(url="ftp://mirror.example.org/x"),
        lambda e: e.update(url="https://" + "a" * 2040),
        lambda e: e.update(claim="x" * 500),
        lambda e: e.update(file="a/b/PKGBUILD"),
    ],
)
def test_evidence_items_at_their_limits(edit: Callable[[Doc], object]) -> None:
    assert validate_verdict(changed(lambda d: edit(d["evidence"][0])))


def test_evidence_and_change_counts() -> None:
    item = v0()["evidence"][0]
    too_many = changed(lambda d: d.update(evidence=[dict(item) for _ in range(65)]))
    assert error(too_many) == "verdict: $.evidence: must have at most 64 items, got 65"
    sixty_four = changed(lambda d: d.update(evidence=[dict(item) for _ in range(64)]))
    assert len(validate_verdict(sixty_four).evidence) == 64
    change = v0()["proposed_changes"][0]
    assert error(changed(lambda d: d.update(proposed_changes=[dict(change)] * 65))) == (
        "verdict: $.proposed_changes: must have at most 64 items, got 65"
    )


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("x", "verdict: $.proposed_changes[0]: expected an object, got a string"),
        ({"rule_id": "R007", "reason": "r"}, "verdict: $.proposed_changes[0].kind: required key is missing"),
        (
            {"kind": "Suppression", "rule_id": "R007", "reason": "r"},
            'verdict: $.proposed_changes[0].kind: "Suppression" is not one of suppression, ioc',
        ),
        ({"kind": "suppression", "rule_id": "R007"}, "verdict: $.proposed_changes[0].reason: required key is missing"),
        (
            {"kind": "suppression", "rule_id": "R007", "reason": "r", "note": "n"},
            "verdict: $.proposed_changes[0].note: unknown key",
        ),
        (
            {"kind": "suppression", "rule_id": "r007", "reason": "r"},
            'verdict: $.proposed_changes[0].rule_id: "r007" is not a rule id',
        ),
        (
            {"kind": "suppression", "rule_id": "R007", "reason": ""},
            "verdict: $.proposed_changes[0].reason: must be 1 to 2,000 characters, got 0",
        ),
        (
            {"kind": "suppression", "rule_id": "R007", "reason": "r" * 2001},
            "verdict: $.proposed_changes[0].reason: must be 1 to 2,000 characters, got 2,001",
        ),
    ],
)
def test_suppression_shape(change: object, expected: str) -> None:
    assert error(changed(lambda d: d.update(proposed_changes=[change]))) == expected


def test_suppression_reason_of_2000_characters_passes() -> None:
    assert validate_verdict(changed(lambda d: d["proposed_changes"][0].update(reason="r" * 2000)))


def tp_with(**fields: object) -> Doc:
    doc = tp_sample()
    doc["proposed_changes"] = [{**IOC, **fields}]
    return doc


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (
            {"type": "url"},
            'verdict: $.proposed_changes[0].type: "url" is not one of'
            " package, domain, hash, file_path, pkgbuild_pattern",
        ),
        ({"value": ""}, "verdict: $.proposed_changes[0].value: must be 1 to 2,000 characters, got 0"),
        ({"value": "v" * 2001}, "verdict: $.proposed_changes[0].value: must be 1 to 2,000 characters, got 2,001"),
        (
            {"confidence": "low"},
            'verdict: $.proposed_changes[0].confidence: "low" is not one of confirmed, high, medium',
        ),
        (
            {"provenance": "p" * 1001},
            "verdict: $.proposed_changes[0].provenance: must be 1 to 1,000 characters, got 1,001",
        ),
        ({"campaign": "c" * 129}, "verdict: $.proposed_changes[0].campaign: must be 1 to 128 characters, got 129"),
        ({"incident": ""}, "verdict: $.proposed_changes[0].incident: must be 1 to 128 characters, got 0"),
        ({"note": "n" * 1001}, "verdict: $.proposed_changes[0].note: must be 1 to 1,000 characters, got 1,001"),
        (
            {"expires_at": "2026-02-30"},
            'verdict: $.proposed_changes[0].expires_at: "2026-02-30" is not a date or a YYYY-MM-DDTHH:MM:SSZ timestamp',
        ),
        (
            {"expires_at": "2026-07-01T25:00:00Z"},
            'verdict: $.proposed_changes[0].expires_at: "2026-07-01T25:00:00Z"'
            " is not a date or a YYYY-MM-DDTHH:MM:SSZ timestamp",
        ),
        ({"expires_at": 20260701}, "verdict: $.proposed_changes[0].expires_at: expected a string, got an integer"),
        ({"rule_id": "R007"}, "verdict: $.proposed_changes[0].rule_id: unknown key"),
    ],
)
def test_ioc_shape(fields: dict[str, object], expected: str) -> None:
    assert error(tp_with(**fields)) == expected


def test_ioc_missing_required_key() -> None:
    doc = tp_with()
    del doc["proposed_changes"][0]["provenance"]
    assert error(doc) == "verdict: $.proposed_changes[0].provenance: required key is missing"


def test_ioc_optional_fields_absent_null_or_at_their_limits() -> None:
    limits = tp_with(campaign="c" * 128, incident="i" * 128, note="n" * 1000, provenance="p" * 1000, value="v" * 2000)
    assert validate_verdict(limits)
    nulls = tp_with(campaign=None, incident="INC-1", expires_at=None, note=None)
    change = validate_verdict(nulls).proposed_changes[0]
    assert change == IocChange("domain", "evil.net", "high", "maintainer report", None, "INC-1", None, None)
    dated = tp_with(type="package", value="tiny-typo", expires_at="2026-07-01T12:00:00Z")
    assert validate_verdict(dated)


def test_the_tp_sample_is_valid() -> None:
    verdict = validate_verdict(tp_sample())
    assert [c.type for c in verdict.proposed_changes if isinstance(c, IocChange)] == ["hash", "domain"]


@pytest.mark.parametrize(
    ("fixes", "expected"),
    [
        ([{"path": "", "diff": "d"}], "verdict: $.code_fixes[0].path: must be 1 to 1,024 characters, got 0"),
        (
            [{"path": "p" * 1025, "diff": "d"}],
            "verdict: $.code_fixes[0].path: must be 1 to 1,024 characters, got 1,025",
        ),
        ([{"path": "a", "diff": ""}], "verdict: $.code_fixes[0].diff: must be 1 to 262,144 UTF-8 bytes, got 0"),
        (
            [{"path": "a", "diff": "d" * 262_145}],
            "verdict: $.code_fixes[0].diff: must be 1 to 262,144 UTF-8 bytes, got 262,145",
        ),
        ([{"path": "a", "diff": 1}], "verdict: $.code_fixes[0].diff: expected a string, got an integer"),
        ([{"path": "a"}], "verdict: $.code_fixes[0].diff: required key is missing"),
        (
            [{"path": "a", "diff": "d"}, {"path": "a", "diff": "e"}],
            "verdict: $.code_fixes[1].path: duplicate of $.code_fixes[0].path",
        ),
        ([{"path": str(i), "diff": "d"} for i in range(9)], "verdict: $.code_fixes: must have at most 8 items, got 9"),
        (
            [{"path": str(i), "diff": "d" * 262_144} for i in range(3)] + [{"path": "3", "diff": "d"}],
            "verdict: $.code_fixes: diffs total 786,433 bytes, over 786,432",
        ),
    ],
)
def test_code_fixes_shape(fixes: list[object], expected: str) -> None:
    assert error(changed(lambda d: d.update(code_fixes=fixes))) == expected


def test_code_fixes_at_their_limits() -> None:
    fixes = [{"path": f"src/trustsight/{i}.py", "diff": "d" * 262_144} for i in range(3)]
    verdict = validate_verdict(changed(lambda d: d.update(code_fixes=fixes)))
    assert len(verdict.code_fixes) == 3 and verdict.code_fixes[0] == CodeFix("src/trustsight/0.py", "d" * 262_144)
    eight = [{"path": "p" * 1024 if i == 0 else str(i), "diff": "d"} for i in range(8)]
    assert len(validate_verdict(changed(lambda d: d.update(code_fixes=eight))).code_fixes) == 8


def test_code_fix_paths_are_not_path_gated_here() -> None:
    # The full path and diff gate belongs to fp_agent_pr (docs/triage.md §11.5), so a bad fix never blocks a suppression.
    fixes = [{"path": "../etc/passwd", "diff": "not a diff"}]
    assert validate_verdict(changed(lambda d: d.update(code_fixes=fixes)))


# Cross-field rules X1 to X7.


def test_fp_suppressions_must_be_unique() -> None:
    doc = changed(lambda d: d["proposed_changes"].append(dict(d["proposed_changes"][0])))
    assert error(doc) == "verdict: $.proposed_changes[1].rule_id: rule R007 is suppressed twice (X3)"


def test_fp_needs_a_suppression() -> None:
    assert error(changed(lambda d: d.update(proposed_changes=[]))) == (
        "verdict: $.proposed_changes: an FP verdict needs at least one suppression (X3)"
    )


def test_fp_suppressions_cover_every_cited_rule() -> None:
    def cite_two(d: Doc) -> None:
        d["evidence"].append({**d["evidence"][0], "rule_id": "H016", "file": "PKGBUILD", "line": 6})

    assert error(changed(cite_two)) == (
        "verdict: $.proposed_changes: suppressed rules (R007) differ from the evidence rules (H016, R007) (X3)"
    )

    def cite_and_suppress_two(d: Doc) -> None:
        cite_two(d)
        d["proposed_changes"].append({**d["proposed_changes"][0], "rule_id": "H016"})

    assert validate_verdict(changed(cite_and_suppress_two))


def test_fatal_suppression_without_fatal_evidence_fails_x3_first() -> None:
    doc = changed(lambda d: d["proposed_changes"][0].update(rule_id="R012"))
    assert "(X3)" in error(doc)


@pytest.mark.parametrize("verdict", ["TP", "uncertain"])
def test_tp_and_uncertain_may_cite_fatal_rules(verdict: str) -> None:
    def edit(d: Doc) -> None:
        d["verdict"] = verdict
        d["evidence"] = [{"rule_id": "R012", "file": "PKGBUILD", "line": 3, "claim": "Prompt injection."}]
        if verdict == "uncertain":
            d["proposed_changes"] = []

    assert validate_verdict(changed(edit, tp_sample)).evidence[0].rule_id == "R012"


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda d: d.update(proposed_changes=[]),
            "verdict: $.proposed_changes: a TP verdict needs at least one ioc change (X5)",
        ),
        (
            lambda d: d["proposed_changes"].append({"kind": "suppression", "rule_id": "R007", "reason": "r"}),
            "verdict: $.proposed_changes[2].kind: a TP verdict proposes only ioc changes (X5)",
        ),
        (
            lambda d: d.update(code_fixes=[{"path": "src/trustsight/a.py", "diff": "d"}]),
            "verdict: $.code_fixes: a TP verdict carries no code fixes (X5)",
        ),
    ],
)
def test_tp_rules(edit: Callable[[Doc], object], expected: str) -> None:
    assert error(changed(edit, tp_sample)) == expected


def test_uncertain_carries_no_code_fixes() -> None:
    def edit(d: Doc) -> None:
        d.update(verdict="uncertain", proposed_changes=[], code_fixes=[{"path": "a", "diff": "d"}])

    assert error(changed(edit)) == "verdict: $.code_fixes: an uncertain verdict carries no code fixes (X6)"
    assert validate_verdict(changed(lambda d: d.update(verdict="uncertain", proposed_changes=[])))


def test_uncertain_needs_no_transition_or_evidence() -> None:
    assert validate_verdict(
        changed(lambda d: d.update(verdict="uncertain", proposed_changes=[], transition=None, evidence=[]))
    )


def test_ioc_needs_a_campaign_or_an_incident() -> None:
    assert (
        error(tp_with(campaign=None))
        == "verdict: $.proposed_changes[0]: an ioc change needs a campaign or an incident (X7)"
    )
    assert validate_verdict(tp_with(campaign=None, incident="INC-7"))


def test_package_indicator_needs_an_expiry() -> None:
    assert error(tp_with(type="package", value="tiny-typo")) == (
        "verdict: $.proposed_changes[0].expires_at: a package indicator needs expires_at (X7)"
    )
    assert error(tp_with(type="package", value="tiny-typo", expires_at=None)) == (
        "verdict: $.proposed_changes[0].expires_at: a package indicator needs expires_at (X7)"
    )
    assert validate_verdict(tp_with(type="package", value="tiny-typo", expires_at="2026-07-01"))


def test_past_expiry_is_accepted() -> None:
    assert validate_verdict(tp_with(type="package", value="tiny-typo", expires_at="2001-01-01"))


def test_load_verdict_reads_text_files_and_objects(tmp_path: Any) -> None:
    path = tmp_path / "v.json"
    path.write_text(V0_CANONICAL)
    assert load_verdict(str(path)).sha256 == V0_SHA256
    assert load_verdict(v0()).sha256 == V0_SHA256
    assert load_verdict(V0_CANONICAL).sha256 == V0_SHA256


def test_errors_are_value_errors() -> None:
    assert issubclass(ObjectInputError, ValueError)
    assert issubclass(FormatError, ValueError)

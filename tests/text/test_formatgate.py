"""The format gate (docs/triage.md §3): modes, the `--` rule, messages, paths, check_tree and cell()."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.text.formatgate import MODES, FormatError, cell, check, check_tree, json_path, violation

EM = 'em dash U+2014 at index {i} is not allowed (use ":", ";", "," or parentheses)'
EN = 'en dash U+2013 at index {i} is not allowed (use "-" or "to")'
CHAR = "character U+{cp} at index {i} is not allowed"
DASHES = '"--" sentence separator (U+002D U+002D) at index {i} is not allowed in prose'


def gate(text: str, mode: str) -> str | None:
    """The message for `text` at path `$`, or None when it passes."""
    try:
        check(text, mode)  # type: ignore[arg-type]
    except FormatError as exc:
        return str(exc)
    return None


def refused(detail: str) -> str:
    return f"format gate: $: {detail}"


@pytest.mark.parametrize(
    ("value", "mode", "expected"),
    [
        ("Benign update of the hook.", "prose_line", None),
        ("keep it -- simple", "prose_line", refused(DASHES.format(i=8))),
        ("well--known", "prose_line", refused(DASHES.format(i=4))),
        ("ends with --", "prose_line", refused(DASHES.format(i=10))),
        ("well--known", "line", None),
        ("run harness fp_agent_pr --date 2026-01-15", "prose_line", None),
        ("a\nb", "prose_line", refused(CHAR.format(cp="000A", i=1))),
        ("a\nb", "prose_text", None),
        ("a\tb", "prose_text", refused(CHAR.format(cp="0009", i=1))),
        ("a\tb", "diff", None),
        ("a\r\nb", "diff", refused(CHAR.format(cp="000D", i=1))),
        ("xn--bcher-kva.ch", "line", None),
        ("--- a/x.py\n-old -- text\n+new\n", "diff", None),
    ],
)
def test_spec_vectors(value: str, mode: str, expected: str | None) -> None:
    assert gate(value, mode) == expected


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("old\u2014new", EM.format(i=3)),
        ("2.0\u20132.1", EN.format(i=3)),
        ("caf\u00e9", CHAR.format(cp="00E9", i=3)),
        ("a\u00a0b", CHAR.format(cp="00A0", i=1)),
        ("a\u200bb", CHAR.format(cp="200B", i=1)),
        ("a\u007fb", CHAR.format(cp="007F", i=1)),
    ],
)
def test_refused_in_every_mode(value: str, mode: str, expected: str) -> None:
    assert gate(value, mode) == refused(expected)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "ch", ["\r", "\x00", "\x1b", "\x7f", "\u00a0", "\u202e", "\u2018", "\u201c", "\u2026", "\ufeff", "\U0001f600"]
)
def test_controls_and_non_ascii_refused_everywhere(ch: str, mode: str) -> None:
    message = gate(f"ok{ch}", mode)
    assert message is not None and "at index 2 " in message


def test_code_points_beyond_the_bmp_use_their_full_hex() -> None:
    assert gate("x\U0001f600", "line") == refused(CHAR.format(cp="1F600", i=1))


def test_index_counts_code_points_not_bytes() -> None:
    assert gate("\u00e9\u00e9\u2014", "document") == refused(CHAR.format(cp="00E9", i=0))
    assert violation("ab\u2014", "line") == (2, EM.format(i=2))


@pytest.mark.parametrize(
    ("mode", "newline", "tab"),
    [
        ("line", False, False),
        ("prose_line", False, False),
        ("prose_text", True, False),
        ("document", True, False),
        ("diff", True, True),
    ],
)
def test_mode_character_sets(mode: str, newline: bool, tab: bool) -> None:
    printable = "".join(chr(c) for c in range(0x20, 0x7F)).replace("--", "")
    assert gate(printable, mode) is None
    assert (gate("a\nb", mode) is None) is newline
    assert (gate("a\tb", mode) is None) is tab


@pytest.mark.parametrize(
    "value",
    ["--verdict", "a --flag b", "---", "|---|---|", "a--1", "1--a", "x---y", "a-b-c", "--x", "x--"],
)
def test_double_hyphen_that_is_not_a_separator_passes_prose(value: str) -> None:
    assert gate(value, "prose_text") is None


@pytest.mark.parametrize(
    ("value", "index"),
    [
        ("--", 0),
        ("a --", 2),
        ("-- a", 0),
        ("x\n--\ny", 2),
        ("a--b", 1),
        ("Z--z", 1),
        ("a -- b--c", 2),
        ("x--y -- z", 1),
    ],
)
def test_double_hyphen_separator_refused_in_prose(value: str, index: int) -> None:
    assert gate(value, "prose_text") == refused(DASHES.format(i=index))
    assert gate(value, "document") is None


def test_character_scan_runs_before_the_double_hyphen_rule() -> None:
    assert gate("a -- b \u2014", "prose_line") == refused(EM.format(i=7))


def test_nothing_is_normalized() -> None:
    text = "  spaced\ttab  "
    assert gate(text, "diff") is None
    assert cell(text) == text


def test_unknown_mode_is_a_programming_error() -> None:
    with pytest.raises(KeyError):
        check("x", "bogus")  # type: ignore[arg-type]


def test_format_error_is_a_value_error_with_path_and_index() -> None:
    with pytest.raises(ValueError) as info:
        check("ab\u00e9", "line", ("evidence", 0, "claim"))
    assert isinstance(info.value, FormatError)
    assert info.value.path == "$.evidence[0].claim"
    assert info.value.index == 2


@pytest.mark.parametrize(
    ("segments", "expected"),
    [
        ((), "$"),
        (("rationale",), "$.rationale"),
        (("evidence", 0, "claim"), "$.evidence[0].claim"),
        (("_x9",), "$._x9"),
        (("9x",), '$["9x"]'),
        (("a b", 3), '$["a b"][3]'),
        (('q"', "caf\u00e9"), '$["q\\""]["caf\\u00e9"]'),
        (("",), '$[""]'),
    ],
)
def test_json_paths(segments: tuple[str | int, ...], expected: str) -> None:
    assert json_path(segments) == expected


def line_everywhere(path: tuple[str | int, ...]) -> str:
    return "line"


def test_check_tree_names_the_json_path() -> None:
    doc = {"evidence": [{"claim": "fine"}, {"claim": "bad\u2014"}]}
    with pytest.raises(FormatError) as info:
        check_tree(doc, line_everywhere)
    assert str(info.value) == "format gate: $.evidence[1].claim: " + EM.format(i=3)


def test_check_tree_gates_keys_in_line_mode() -> None:
    with pytest.raises(FormatError) as info:
        check_tree({"ok": 1, "caf\u00e9": 2}, lambda path: "document")
    assert str(info.value) == 'format gate: $["caf\\u00e9"]: ' + CHAR.format(cp="00E9", i=3)
    with pytest.raises(FormatError):
        check_tree({"a\nb": "x"}, lambda path: "document")


def test_check_tree_walks_depth_first_with_sorted_keys() -> None:
    # "b" sorts before "c"; the nested violation under "b" wins over the key "c\u00e9" and "a" is clean.
    doc = {"c\u00e9": "x", "b": {"z": "\u00a0", "y": ["ok", "\u2013"]}, "a": "fine"}
    with pytest.raises(FormatError) as info:
        check_tree(doc, line_everywhere)
    assert info.value.path == "$.b.y[1]"


def test_check_tree_gates_a_key_before_its_value_and_before_later_members() -> None:
    with pytest.raises(FormatError) as info:
        check_tree({"a\u00e9": "\u2014", "b": "\u2014"}, line_everywhere)
    assert info.value.path == '$["a\\u00e9"]'
    with pytest.raises(FormatError) as info:
        check_tree({"a": "\u2014", "b\u00e9": "x"}, line_everywhere)
    assert info.value.path == "$.a"


def test_check_tree_uses_the_mode_for_each_path() -> None:
    seen: list[tuple[str | int, ...]] = []

    def mode_for(path: tuple[str | int, ...]) -> str:
        seen.append(path)
        return "prose_text" if path == ("rationale",) else "line"

    check_tree({"rationale": "two\nlines", "items": ["a--b", 3, None, True]}, mode_for)  # type: ignore[arg-type]
    assert seen == [("items", 0), ("rationale",)]
    with pytest.raises(FormatError):
        check_tree({"items": ["two\nlines"]}, mode_for)  # type: ignore[arg-type]


def test_check_tree_leaves_a_path_without_a_mode_to_its_own_gate() -> None:
    check_tree({"diff": "caf\u00e9\r\n"}, lambda path: None if path == ("diff",) else "line")
    with pytest.raises(FormatError):
        check_tree({"caf\u00e9": "x"}, lambda path: None)


def test_check_tree_on_a_bare_string_uses_the_root_path() -> None:
    with pytest.raises(FormatError) as info:
        check_tree("x\u00e9", line_everywhere)
    assert info.value.path == "$"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("a|b", "a\\|b"), ("x\\|y", "x\\\\|y"), ("l1\nl2", "l1 l2"), ("||\n\n", "\\|\\|  "), ("plain", "plain")],
)
def test_cell(text: str, expected: str) -> None:
    assert cell(text) == expected


REFERENCE_DASHES = re.compile(r"(?<!\S)--(?!\S)|(?<=[A-Za-z])--(?=[A-Za-z])")
ALLOWED = {
    "line": set(map(chr, range(0x20, 0x7F))),
    "prose_line": set(map(chr, range(0x20, 0x7F))),
    "prose_text": set(map(chr, range(0x20, 0x7F))) | {"\n"},
    "document": set(map(chr, range(0x20, 0x7F))) | {"\n"},
    "diff": set(map(chr, range(0x20, 0x7F))) | {"\n", "\t"},
}


def reference_violation(text: str, mode: str) -> int | None:
    """A slow, obviously correct statement of docs/triage.md §3 rules (1) and (2)."""
    for i, ch in enumerate(text):
        if ch not in ALLOWED[mode]:
            return i
    if mode in ("prose_line", "prose_text"):
        found = REFERENCE_DASHES.search(text)
        if found:
            return found.start()
    return None


@given(st.text(alphabet=st.sampled_from("ab Z-\n\t\r|\u2014\u00e9\\"), max_size=40), st.sampled_from(MODES))
def test_gate_agrees_with_the_reference_reading(text: str, mode: str) -> None:
    found = violation(text, mode)  # type: ignore[arg-type]
    assert (None if found is None else found[0]) == reference_violation(text, mode)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda kids: st.lists(kids) | st.dictionaries(st.text(), kids),
        max_leaves=20,
    ),
    st.sampled_from(MODES),
)
def test_check_tree_raises_only_format_errors(tree: object, mode: str) -> None:
    try:
        check_tree(tree, lambda path: mode)  # type: ignore[arg-type, return-value]
    except FormatError:
        pass

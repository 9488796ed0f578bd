"""Sanitizing agent-visible text (docs/investigate.md §1.2)."""

from __future__ import annotations

import json
import unicodedata

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from harness.text.sanitize import INVISIBLE, WS, echo, is_clean, sanitize_field, strip_invisible

MARKER = " [truncated]"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a\nb\tc\rd", "a b c d"),
        ("  x  ", "x"),
        ("\u202eevil\u202c", "evil"),
        ("ab\u200bc", "abc"),
        ("x\u0000y\u007fz\u0085w", "xyzw"),
        ("hi\U000e0041\U000e0042", "hi"),
        ("a\u2028b", "a b"),
        ("\n\t", ""),
        (" \u200b padded \u00a0", "padded"),
        ("a" * 1024, "a" * 1024),
        ("a" * 1025, "a" * 1012 + MARKER),
        ("é" * 600, "é" * 506 + MARKER),
        ("€" * 400, "€" * 337 + MARKER),
    ],
)
def test_spec_vectors(raw: str, expected: str) -> None:
    assert sanitize_field(raw) == expected


@pytest.mark.parametrize(("raw", "size"), [("a" * 1025, 1024), ("é" * 600, 1024), ("€" * 400, 1023)])
def test_truncated_sizes(raw: str, size: int) -> None:
    assert len(sanitize_field(raw).encode("utf-8")) == size


def test_ws_folds_one_for_one_without_collapsing() -> None:
    assert sanitize_field("a\n\n\tb\u2029c") == "a   b c"


def test_cap_measures_after_removal_and_strip() -> None:
    # 1,024 visible bytes plus invisible and edge whitespace: nothing is truncated.
    raw = "  " + "\u200b".join(["a" * 512, "b" * 512]) + "\n"
    assert sanitize_field(raw) == "a" * 512 + "b" * 512


def test_four_byte_code_points_cut_on_whole_code_points() -> None:
    out = sanitize_field("😀" * 300)
    assert out == "😀" * 253 + MARKER
    assert len(out.encode("utf-8")) == 1024


@pytest.mark.parametrize(
    "ch",
    [
        *map(chr, [c for c in range(0x20) if chr(c) not in "\t\n\r"]),
        "\x7f",
        *map(chr, range(0x80, 0xA0)),
        "\u00ad",  # soft hyphen
        "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff",  # zero-width, joiners, word joiner, BOM
        "\u202a", "\u202b", "\u202c", "\u202d", "\u202e",  # bidi embeddings and overrides
        "\u2066", "\u2067", "\u2068", "\u2069",  # bidi isolates
        "\u200e", "\u200f", "\u061c",  # bidi marks
        "\U000e0001", "\U000e0020", "\U000e007f",  # tag characters
        "\ud800", "\udfff",  # lone surrogates
    ],
)  # fmt: skip
def test_invisible_members_are_dropped(ch: str) -> None:
    assert ch in INVISIBLE
    assert sanitize_field(f"a{ch}b") == "ab"
    assert strip_invisible(f"a{ch}b") == "ab"
    assert not is_clean(f"a{ch}b")
    assert not is_clean(f"a{ch}b", multiline=True)


@pytest.mark.parametrize("ch", ["\u00a0", "\u3000", "é", "€", "😀", "\u0301", "\ue000"])
def test_visible_non_ascii_is_kept(ch: str) -> None:
    assert ch not in INVISIBLE
    assert sanitize_field(f"a{ch}b") == f"a{ch}b"
    assert is_clean(f"a{ch}b")


def test_invisible_is_exactly_the_spec_set() -> None:
    controls = {chr(c) for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))} - WS
    formats = {chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) in ("Cf", "Cs")}
    assert INVISIBLE == controls | formats
    assert WS == {"\t", "\n", "\r", "\u2028", "\u2029"}


def test_strip_invisible_keeps_ws_and_edges_and_length() -> None:
    raw = "  line1\r\n\tline2\u2028\u200b " + "x" * 5000
    assert strip_invisible(raw) == "  line1\r\n\tline2\u2028 " + "x" * 5000


@pytest.mark.parametrize(
    ("text", "clean", "clean_multiline"),
    [
        ("admin-user", True, True),
        ("", True, True),
        (" spaced out ", True, True),
        ("été", True, True),
        ("a\nb", False, True),
        ("a\tb", False, True),
        ("a\rb", False, False),
        ("a\u2028b", False, False),
        ("a\u2029b", False, False),
        ("a\u200bb", False, False),
        ("a\x00b", False, False),
        ("a\u00a0b", True, True),
    ],
)
def test_is_clean(text: str, clean: bool, clean_multiline: bool) -> None:
    assert is_clean(text) is clean
    assert is_clean(text, multiline=True) is clean_multiline


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("x", '"x"'), ('say "hi"\n', '"say \\"hi\\""'), ("\u202eé", '"é"'), ("a\\b", '"a\\\\b"')],
)
def test_echo_is_json_string_of_sanitized(raw: str, expected: str) -> None:
    assert echo(raw) == expected


def test_echo_of_long_input_is_capped() -> None:
    assert json.loads(echo("z" * 5000)) == "z" * 1012 + MARKER


ANY_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(),  # includes lone surrogates (category Cs)
        st.sampled_from(sorted(WS) + ["\u200b", "\u202e", "\U000e0041", "\x85", " ", "\u00a0", "€", "😀"]),
    ),
    max_size=1400,
)


@given(ANY_TEXT)
@example("\ud800" * 3 + "a")
@example("é" * 600)
@example("a" * 1011 + " b" + "c" * 20)
def test_sanitize_properties(raw: str) -> None:
    out = sanitize_field(raw)
    assert sanitize_field(out) == out
    assert len(out.encode("utf-8")) <= 1024
    assert not INVISIBLE.intersection(out)
    assert not (WS - {" "}).intersection(out)
    assert is_clean(out)


@given(ANY_TEXT)
def test_strip_invisible_properties(raw: str) -> None:
    out = strip_invisible(raw)
    assert not INVISIBLE.intersection(out)
    assert out == "".join(ch for ch in raw if ch not in INVISIBLE)
    assert is_clean(raw, multiline=True) == (out == raw and not {"\r", "\u2028", "\u2029"}.intersection(raw))


@given(ANY_TEXT)
def test_is_clean_matches_definition(raw: str) -> None:
    assert is_clean(raw) == (not INVISIBLE.intersection(raw) and not WS.intersection(raw))

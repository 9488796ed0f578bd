"""Canonical JSON and the strict reader (docs/investigate.md §0 and docs/investigate.md §5, docs/triage.md §2 "Strict reading")."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.text.canonjson import StrictJSONError, depth, dumps, dumps_bytes, loads_strict, pretty


def test_canonical_form() -> None:
    obj = {"b": [1, 2.5, None, True], "a": {"z": "é", "y": "\u2028"}, "€": ""}
    assert dumps(obj) == '{"a":{"y":"\u2028","z":"é"},"b":[1,2.5,null,true],"€":""}'
    assert dumps(obj) == json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    assert dumps_bytes(obj) == dumps(obj).encode("utf-8")


def test_pretty_is_sorted_and_indented() -> None:
    assert pretty({"b": 1, "a": ["é"]}) == '{\n  "a": [\n    "é"\n  ],\n  "b": 1\n}'


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_dumps_refuses_non_finite(value: float) -> None:
    with pytest.raises(ValueError):
        dumps({"x": value})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a":1,"a":2}', 'duplicate key "a" at $'),
        ('{"a":1,"b":{"c":[1,{"d":0,"d":0}]}}', 'duplicate key "d" at $.b.c[1]'),
        ('[{"x":{}}, {"k y":{"z":1,"z":1}}]', 'duplicate key "z" at $[1]["k y"]'),
        ('{"a":{"k":1,"k":2},"a":3}', 'duplicate key "a" at $'),
        ('{"o":{"a":{"k":1,"k":2},"a":3}}', 'duplicate key "a" at $.o'),
        ('{"\\u202ea":1,"\\u202ea":2}', 'duplicate key "a" at $'),
        ("NaN", "the constant NaN is not allowed"),
        ('{"x":[Infinity]}', "the constant Infinity is not allowed"),
        ("-Infinity", "the constant -Infinity is not allowed"),
        ("1e400", 'number "1e400" overflows to infinity'),
        ("[-1.5E+999]", 'number "-1.5E+999" overflows to infinity'),
        ("9223372036854775808", 'integer "9223372036854775808" is outside the signed 64-bit range'),
        ("-9223372036854775809", 'integer "-9223372036854775809" is outside the signed 64-bit range'),
        ("[100000000000000000000]", 'integer "100000000000000000000" is outside the signed 64-bit range'),
        ('"\\ud800"', "string at $ contains a lone surrogate, which UTF-8 cannot encode"),
        ('{"a":["ok","\\udfff"]}', "string at $.a[1] contains a lone surrogate, which UTF-8 cannot encode"),
        ('{"\\udc00":1}', "key at $ contains a lone surrogate, which UTF-8 cannot encode"),
        ("{", "malformed JSON at line 1 column 2: Expecting property name enclosed in double quotes"),
        ('{"a":1}\n{"b":2}', "malformed JSON at line 2 column 1: Extra data"),
        ("", "malformed JSON at line 1 column 1: Expecting value"),
        ("[01]", "malformed JSON at line 1 column 3: Expecting ',' delimiter"),
        ('"a\nb"', "malformed JSON at line 1 column 3: Invalid control character at"),
    ],
)
def test_refusals(text: str, message: str) -> None:
    with pytest.raises(StrictJSONError) as info:
        loads_strict(text)
    assert str(info.value) == message
    assert isinstance(info.value, ValueError)


def test_huge_integer_is_a_strict_error_not_a_conversion_error() -> None:
    # Beyond int()'s 4,300-digit limit; the message echo is capped like any echoed input.
    with pytest.raises(StrictJSONError, match="outside the signed 64-bit range") as info:
        loads_strict("7" * 5000)
    assert len(str(info.value).encode("utf-8")) < 1100


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("9223372036854775807", 2**63 - 1),
        ("-9223372036854775808", -(2**63)),
        ("-0", 0),
        ("1e-400", 0.0),
        ("1.7976931348623157e308", 1.7976931348623157e308),
        ('"\\\\ud800"', "\\ud800"),  # an escaped backslash, not a surrogate escape
        ('"\\ud83d\\ude00"', "😀"),  # a valid surrogate pair
        ('{"a":{"a":1},"b":[{"a":2}]}', {"a": {"a": 1}, "b": [{"a": 2}]}),
        (' \n{"A":1,"a":2}\t', {"A": 1, "a": 2}),
    ],
)
def test_accepted(text: str, value: object) -> None:
    assert loads_strict(text) == value


def test_bytes_must_be_strict_utf8() -> None:
    assert loads_strict('{"k":"é"}'.encode()) == {"k": "é"}
    with pytest.raises(StrictJSONError, match=r"^invalid UTF-8 at byte 6$"):
        loads_strict(b'{"k":"\xff"}')
    with pytest.raises(StrictJSONError, match="^invalid UTF-8 at byte 1$"):
        loads_strict(b'"\xed\xa0\x80"')  # an encoded surrogate is not UTF-8
    with pytest.raises(StrictJSONError, match="BOM"):
        loads_strict(b"\xef\xbb\xbf{}")
    with pytest.raises(StrictJSONError):
        loads_strict('{"a":1}'.encode("utf-16"))


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize(
    ("value", "expected"),
    [(1, 0), ("x", 0), (None, 0), ([], 1), ({}, 1), ([1, 2], 1), ({"a": [{"b": {}}]}, 4), ([[], [[[]]]], 4)],
)
def test_depth(value: object, expected: int) -> None:
    assert depth(value) == expected


def test_depth_cap_boundary() -> None:
    assert depth(loads_strict(nested(16), max_depth=16)) == 16
    assert loads_strict('{"a":' * 16 + "1" + "}" * 16, 16)["a"]["a"]["a"]
    with pytest.raises(StrictJSONError, match="^nesting is deeper than 16 levels$"):
        loads_strict(nested(17), max_depth=16)
    with pytest.raises(StrictJSONError, match="^nesting is deeper than 16 levels$"):
        loads_strict('{"a":' * 17 + "1" + "}" * 17, max_depth=16)


def test_nesting_beyond_recursion_limit_is_a_strict_error() -> None:
    with pytest.raises(StrictJSONError, match="^nesting is too deep$"):
        loads_strict(nested(200_000))
    with pytest.raises(StrictJSONError, match="^nesting is deeper than 16 levels$"):
        loads_strict(nested(200_000), max_depth=16)


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec="utf-8")),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(st.characters(codec="utf-8"), max_size=4), children, max_size=4),
    max_leaves=20,
)


@given(JSON_VALUES)
def test_canonical_round_trip(value: object) -> None:
    text = dumps(value)
    assert loads_strict(text) == value
    assert loads_strict(dumps_bytes(value)) == value
    assert dumps(loads_strict(text)) == text


@given(JSON_VALUES, st.text(st.characters(codec="utf-8"), min_size=1, max_size=4))
def test_duplicate_key_refused_anywhere(value: object, key: str) -> None:
    inner = json.dumps(key, ensure_ascii=False)
    duplicated = "{" + f"{inner}:1,{inner}:2" + "}"
    document = f'{{"wrap":[{dumps(value)},{duplicated}]}}'
    with pytest.raises(StrictJSONError, match="^duplicate key .* at \\$"):
        loads_strict(document)


@given(
    JSON_VALUES,
    st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400", "-2E+308", "9223372036854775808", '"\\udbff"']),
)
def test_forbidden_leaf_refused_anywhere(value: object, leaf: str) -> None:
    with pytest.raises(StrictJSONError):
        loads_strict(f'{{"ok":{dumps(value)},"bad":[{leaf}]}}')

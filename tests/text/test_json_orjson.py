"""orjson stands in for json where it gives the same answer (docs/decisions.md, "JSON through orjson"): stored lines
read as json.loads reads them, and the known-secret boundary's text with every string written as json writes it."""

from __future__ import annotations

import json
import math
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.text.canonjson import loads_line
from harness.text.redact_known import json_text


def _same(a: Any, b: Any) -> bool:
    """Equal, with the same types all the way down, -0.0 apart from 0.0 and NaN equal to NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or repr(a) == repr(b)
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False), st.text(), st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)),
)  # fmt: skip
_trees = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner), st.dictionaries(st.text(), inner)),
                      max_leaves=30)
# Number texts as a stored line could spell them, the long, signed and exponent forms included.
_numbers = st.from_regex(r"\A-?(0|[1-9][0-9]{0,24})(\.[0-9]{1,24})?([eE][+-]?[0-9]{1,3})?\Z")


@settings(max_examples=600, deadline=None)
@given(_trees)
def test_a_line_reads_as_json_reads_it(tree: Any) -> None:
    line = json.dumps(tree, ensure_ascii=False).encode("utf-8", "surrogatepass")
    assert _same(loads_line(line), json.loads(line))


@settings(max_examples=600, deadline=None)
@given(_numbers)
def test_every_number_reads_as_json_reads_it(number: str) -> None:
    for line in (number, f'{{"n":{number}}}', f"[{number},1]"):
        assert _same(loads_line(line.encode()), json.loads(line)), line


def test_the_lines_orjson_would_read_otherwise_go_to_json() -> None:
    cases = [
        b"-9223372036854775809",  # orjson: a float
        b"18446744073709551616",  # orjson: a float
        b'{"n":123456789012345678901234567890}',
        b'"\\ud800"',  # orjson refuses a lone surrogate
        b"[NaN, Infinity]",  # json's constants
        b"1e400",  # json: inf
        b'{"a":1,"b":2,"a":3}',
    ]
    for line in cases:
        assert _same(loads_line(line), json.loads(line)), line
    assert type(orjson.loads(b"-9223372036854775809")) is float  # why the guard exists


def test_every_character_is_written_as_json_writes_it() -> None:
    # The boundary searches json_text for each known value as json_text writes it inside a string; a character
    # escaped otherwise would hide a value. Every code point, one string of all of them, and a surrogate.
    characters = [chr(code) for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF]
    for chunk in range(0, len(characters), 4096):
        piece = characters[chunk:chunk + 4096]
        assert json_text(piece) == json.dumps(piece, ensure_ascii=False, separators=(",", ":")).encode()
    lone = ["a\ud800b"]
    assert json_text(lone) == json.dumps(lone, ensure_ascii=False).encode("utf-8", "surrogatepass")


@settings(max_examples=600, deadline=None)
@given(_trees)
def test_every_string_of_a_tree_is_written_as_json_writes_it(tree: Any) -> None:
    text = json_text(tree)
    expected = json.dumps(tree, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")

    def has_float(node: Any) -> bool:
        if isinstance(node, float):
            return True
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        return any(has_float(child) for child in children)

    if not has_float(tree):
        assert text == expected
    # Floats may be spelled otherwise (1e+16 against 1e16, NaN against null); strings never are.
    strings: list[str] = []

    def collect(node: Any) -> None:
        if isinstance(node, str):
            strings.append(node)
        elif isinstance(node, dict):
            strings.extend(node)
            for child in node.values():
                collect(child)
        elif isinstance(node, list):
            for child in node:
                collect(child)

    collect(tree)
    for string in strings:
        assert json.dumps(string, ensure_ascii=False).encode("utf-8", "surrogatepass") in text


def test_what_orjson_refuses_is_written_by_json() -> None:
    for tree in ({1: "int key"}, [2**64], {"s": "\udc80"}, (1, "tuple")):
        assert json_text(tree) == json.dumps(tree, ensure_ascii=False, separators=(",", ":")).encode(
            "utf-8", "surrogatepass"
        )

"""Strict reading of object inputs (docs/triage.md §2): size caps, files, UTF-8, duplicates, constants, depth."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from triage_samples import V0_CANONICAL, V0_SHA256

from harness.triage.verdict import (
    MAX_DEPTH,
    RESULT_MAX_BYTES,
    VERDICT_MAX_BYTES,
    ObjectInputError,
    load_verdict,
    read_object,
    read_object_file,
    read_object_received,
    read_object_text,
)


def refusal(source: object, cap: int = VERDICT_MAX_BYTES, label: str = "verdict") -> str:
    with pytest.raises(ObjectInputError) as info:
        read_object(source, cap, label)
    return str(info.value)


def padded(text: str, size: int) -> str:
    """`text` (a JSON object) with trailing spaces up to exactly `size` bytes."""
    return text + " " * (size - len(text.encode("utf-8")))


def test_text_file_and_received_object_give_the_same_object(tmp_path: Path) -> None:
    path = tmp_path / "v.json"
    path.write_text(V0_CANONICAL)
    expected = json.loads(V0_CANONICAL)
    assert read_object(V0_CANONICAL, VERDICT_MAX_BYTES) == expected
    assert read_object(str(path), VERDICT_MAX_BYTES) == expected
    assert read_object(path, VERDICT_MAX_BYTES) == expected
    assert read_object(expected, VERDICT_MAX_BYTES) == expected


def test_text_is_recognized_by_its_first_non_blank_character(tmp_path: Path) -> None:
    assert read_object(" \n\t" + V0_CANONICAL, VERDICT_MAX_BYTES)["package"] == "tiny-demo-bin"
    assert refusal("[1]") == "verdict: the top level is not a JSON object"
    assert refusal("missing.json").startswith('verdict: file "missing.json" does not exist')


def test_digest_ignores_key_order_and_indentation() -> None:
    reordered = json.dumps(dict(reversed(list(json.loads(V0_CANONICAL).items()))), indent=4)
    assert load_verdict(reordered).sha256 == V0_SHA256


def test_verdict_cap_passes_at_the_limit_and_refuses_one_more_byte() -> None:
    assert len(V0_CANONICAL) == 606
    exact = padded(V0_CANONICAL, VERDICT_MAX_BYTES)
    assert load_verdict(exact).sha256 == V0_SHA256
    assert refusal(exact + " ") == "verdict: input is larger than 1,048,576 bytes"


def test_size_is_checked_before_anything_else() -> None:
    garbage = "{" + "\u00e9" * (VERDICT_MAX_BYTES // 2)  # 1,048,577 bytes of malformed, non-ASCII JSON
    assert len(garbage.encode("utf-8")) == VERDICT_MAX_BYTES + 1
    assert refusal(garbage) == "verdict: input is larger than 1,048,576 bytes"


def test_result_cap_is_two_mebibytes() -> None:
    exact = padded('{"a":1}', RESULT_MAX_BYTES)
    assert read_object(exact, RESULT_MAX_BYTES, "result") == {"a": 1}
    assert refusal(exact + " ", RESULT_MAX_BYTES, "result") == "result: input is larger than 2,097,152 bytes"


def test_duplicate_keys_name_their_path() -> None:
    doubled = V0_CANONICAL.replace('"package":"tiny-demo-bin"', '"package":"tiny-demo-bin","package":"x"')
    assert refusal(doubled) == 'verdict: duplicate key "package" at $'
    nested = '{"evidence":[{"a":1},{"line":1,"line":2}]}'
    assert refusal(nested) == 'verdict: duplicate key "line" at $.evidence[1]'


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_constants_refused(constant: str) -> None:
    assert refusal('{"a":' + constant + "}") == f"verdict: the constant {constant} is not allowed"


def test_malformed_json_refused() -> None:
    assert refusal('{"a":}').startswith("verdict: malformed JSON at line 1 column 6")


def test_depth_sixteen_passes_and_seventeen_is_refused() -> None:
    def nested(levels: int) -> str:
        return '{"a":' * levels + "1" + "}" * levels

    assert read_object(nested(MAX_DEPTH), VERDICT_MAX_BYTES)
    assert refusal(nested(MAX_DEPTH + 1)) == "verdict: nesting is deeper than 16 levels"
    assert refusal('{"a":' + "[" * 5000 + "]" * 5000 + "}") == "verdict: nesting is deeper than 16 levels"


def test_file_must_be_strict_utf8(tmp_path: Path) -> None:
    path = tmp_path / "v.json"
    path.write_bytes(b'{"a":"\xff"}')
    assert refusal(str(path)) == "verdict: invalid UTF-8 at byte 6"


def test_text_with_a_lone_surrogate_refused() -> None:
    assert "lone surrogate" in refusal('{"a":"\\ud800"}')
    assert "lone surrogate" in refusal('{"a":"\ud800"}')


def test_file_cap_passes_at_the_limit_and_refuses_one_more_byte(tmp_path: Path) -> None:
    path = tmp_path / "v.json"
    path.write_text(padded(V0_CANONICAL, VERDICT_MAX_BYTES))
    assert load_verdict(str(path)).sha256 == V0_SHA256
    path.write_text(padded(V0_CANONICAL, VERDICT_MAX_BYTES + 1))
    assert refusal(str(path)) == "verdict: input is larger than 1,048,576 bytes"


def test_symlinks_are_refused_even_to_a_valid_file(tmp_path: Path) -> None:
    target = tmp_path / "v.json"
    target.write_text(V0_CANONICAL)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert refusal(str(link)) == f'verdict: file "{link}" is a symbolic link'


def test_directories_and_fifos_are_not_regular_files(tmp_path: Path) -> None:
    assert refusal(str(tmp_path)) == f'verdict: file "{tmp_path}" is not a regular file'
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert refusal(str(fifo)) == f'verdict: file "{fifo}" is not a regular file'


def test_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    assert refusal(missing) == f'verdict: file "{missing}" does not exist'


def test_unreadable_parent_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "file.json"
    path.write_text("{}")
    assert "cannot be read" in refusal(str(path / "below.json"))


def test_file_size_is_checked_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b"{" + b" " * 10)
    with pytest.raises(ObjectInputError) as info:
        read_object_file(path, 10)
    assert str(info.value) == "verdict: input is larger than 10 bytes"


@pytest.mark.skipif(not os.path.isfile("/proc/self/status"), reason="needs Linux procfs")
def test_a_file_whose_size_lies_is_still_capped_by_the_read() -> None:
    # procfs files are regular files that report size 0, so only the cap + 1 read can catch them.
    assert os.lstat("/proc/self/status").st_size == 0
    with pytest.raises(ObjectInputError) as info:
        read_object_file("/proc/self/status", 10)
    assert str(info.value) == "verdict: input is larger than 10 bytes"


def test_received_object_cap_applies_to_canonical_json() -> None:
    # Canonical JSON drops the whitespace a text form would carry, so only the value counts.
    body = {"a": "x" * (VERDICT_MAX_BYTES - len('{"a":""}'))}
    assert read_object_received(body, VERDICT_MAX_BYTES) == body
    body["a"] += "x"
    with pytest.raises(ObjectInputError, match="larger than 1,048,576 bytes"):
        read_object_received(body, VERDICT_MAX_BYTES)


def test_received_non_ascii_counts_utf8_bytes() -> None:
    body = {"a": "\u00e9" * ((VERDICT_MAX_BYTES - 8) // 2 + 1)}
    with pytest.raises(ObjectInputError, match="larger than"):
        read_object_received(body, VERDICT_MAX_BYTES)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([1], "verdict: the top level is not a JSON object"),
        ({"a": float("nan")}, "verdict: not a JSON value"),
        ({"a": float("inf")}, "verdict: not a JSON value"),
        ({"a": object()}, "verdict: not a JSON value"),
        ({"a": "\ud800"}, "verdict: a string contains a lone surrogate, which UTF-8 cannot encode"),
    ],
)
def test_received_objects_refused(value: object, expected: str) -> None:
    assert refusal(value).startswith(expected)


def test_received_depth_limits() -> None:
    deep: dict[str, object] = {}
    node = deep
    for _ in range(MAX_DEPTH):
        child: dict[str, object] = {}
        node["a"] = child
        node = child
    assert refusal(deep) == "verdict: nesting is deeper than 16 levels"
    very_deep: list[object] = []
    for _ in range(100_000):
        very_deep = [very_deep]
    assert refusal({"a": very_deep}) == "verdict: nesting is deeper than 16 levels"


def test_received_object_is_detached_from_the_caller() -> None:
    original = json.loads(V0_CANONICAL)
    copy = read_object_received(original, VERDICT_MAX_BYTES)
    copy["package"] = "changed"
    assert original["package"] == "tiny-demo-bin"


def test_text_reader_measures_utf8_bytes() -> None:
    text = '{"a":"' + "\u00e9" * 5 + '"}'
    assert len(text) == 13 and len(text.encode("utf-8")) == 18
    with pytest.raises(ObjectInputError, match="larger than 17 bytes"):
        read_object_text(text, 17)
    assert read_object_text(text, 18) == {"a": "\u00e9" * 5}

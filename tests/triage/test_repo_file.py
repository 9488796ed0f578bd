"""repo_file (docs/triage.md §13 and its table, A22) against a real watcher checkout, through the CLI and MCP."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest
from doors import Answer, call_both, call_mcp
from hypothesis import given
from hypothesis import strategies as st
from render_support import OBJECT_FILES, render_workspace
from watcher import RULES_PATH, make_watcher, rules_text, tree_state

from harness.triage.repo_file import head_text


@pytest.fixture(scope="module")
def watcher(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_watcher(tmp_path_factory.mktemp("watcher") / "checkout")


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory, watcher: Path) -> Path:
    return render_workspace(tmp_path_factory.mktemp("repo_file") / "ws", watcher)


def read(ws: Path, path: str, **extra: Any) -> Answer:
    return call_both(ws, "repo_file", {"path": path, **extra}, encode=OBJECT_FILES)


def test_a_whole_file(ws: Path, watcher: Path) -> None:
    before = tree_state(watcher)
    answer = read(ws, RULES_PATH)
    text = rules_text()
    assert answer.document == {
        "path": RULES_PATH,
        "bytes": 3_072,
        "sha256": hashlib.sha256(text.encode()).hexdigest(),
        "text": text,
        "truncated": False,
    }
    assert tree_state(watcher) == before


def test_truncation_cuts_back_to_a_whole_character(ws: Path) -> None:
    data = "abcdefghi\u00e9xyz".encode()
    answer = read(ws, "src/trustsight/accent.txt", max_bytes=10)
    assert answer.document == {
        "path": "src/trustsight/accent.txt",
        "bytes": 14,
        "sha256": hashlib.sha256(data).hexdigest(),
        "text": "abcdefghi",
        "truncated": True,
    }
    assert read(ws, "src/trustsight/accent.txt", max_bytes=11).document["text"] == "abcdefghi\u00e9"
    assert read(ws, "src/trustsight/accent.txt", max_bytes=14).document["truncated"] is False


def test_the_default_max_bytes_is_65536(tmp_path: Path) -> None:
    checkout = make_watcher(tmp_path / "big")
    (checkout / "tests/big.txt").write_text("a" * 70_000)
    answer = read(render_workspace(tmp_path / "ws", checkout), "tests/big.txt")
    assert (answer.document["bytes"], len(answer.document["text"]), answer.document["truncated"]) == (70_000, 65_536, True)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("tests/../src/x.py", "path has a dot component"),
        ("/etc/passwd", "absolute path"),
        ("docs/index.md", "path outside the allowlist"),
        ("src/trustsight\\x.py", "path contains a backslash"),
        ("src/trustsight/.env", "path has a dot component"),
        ("src/trustsight/link.py", "src/trustsight/link.py is a symbolic link"),
        ("src/trustsight/ld/x.py", "path component src/trustsight/ld is a symbolic link"),
        ("src/trustsight/pkg", "src/trustsight/pkg is not a regular file"),
        ("src/trustsight/rules.py/x", "path component src/trustsight/rules.py is not a directory"),
        ("tests/fixtures/latin1.txt", "not UTF-8 text"),
        ("src/trustsight/nul.py", "binary file"),
    ],
)
def test_refusals(ws: Path, path: str, message: str) -> None:
    answer = read(ws, path)
    assert (answer.exit_code, answer.error) == (5, {"code": "refused", "message": message, "operation": "repo_file"})


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"path": "src/trustsight/x.py", "max_bytes": 0}, "max_bytes: must be at least 1, got 0"),
        ({"path": "src/trustsight/x.py", "max_bytes": 1_048_577}, "max_bytes: must be at most 1048576, got 1048577"),
        ({"path": ""}, "path: must be 1 to 1,024 characters, got 0"),
        ({"path": "tests/" + "a" * 1_019}, "path: must be 1 to 1,024 characters, got 1,025"),
        ({"path": "tests/caf\u00e9.py"}, "path: format gate: $.path: character U+00E9 at index 9 is not allowed"),
        ({}, "path: is required"),
    ],
)
def test_invalid_input(ws: Path, arguments: dict[str, Any], message: str) -> None:
    answer = call_both(ws, "repo_file", arguments, encode=OBJECT_FILES)
    assert (answer.exit_code, answer.error["code"], answer.error["message"]) == (2, "invalid_input", message)


def test_a_nul_in_the_path_is_invalid_input(ws: Path) -> None:
    # argv cannot carry NUL, so this one goes through MCP only.
    answer = call_mcp(ws, "repo_file", {"path": "src/trustsight/a\x00b"})
    assert (answer.exit_code, answer.error["code"]) == (2, "invalid_input")
    assert answer.error["message"] == "path: format gate: $.path: character U+0000 at index 16 is not allowed"


def test_missing_files_are_not_found(ws: Path) -> None:
    for path in ("src/trustsight/missing.py", "src/trustsight/nodir/x.py"):
        answer = read(ws, path)
        assert (answer.exit_code, answer.error["code"]) == (1, "not_found")
    assert read(ws, "src/trustsight/missing.py").error["message"] == (
        "src/trustsight/missing.py does not exist in the watcher checkout"
    )


def test_an_unconfigured_or_missing_checkout_is_upstream_unavailable(tmp_path: Path) -> None:
    bare = render_workspace(tmp_path / "bare", None)
    assert read(bare, RULES_PATH).error == {
        "code": "upstream_unavailable",
        "message": "watcher checkout not configured",
        "operation": "repo_file",
    }
    gone = render_workspace(tmp_path / "gone", tmp_path / "nowhere")
    answer = read(gone, RULES_PATH)
    assert (answer.exit_code, answer.error["message"]) == (3, "watcher checkout is not a directory")


def test_path_rules_come_before_the_checkout(tmp_path: Path) -> None:
    assert read(render_workspace(tmp_path / "bare", None), "/etc/passwd").error["code"] == "refused"


def test_a_relative_watcher_repo_resolves_against_the_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    make_watcher(workspace / "watcher")
    (workspace / "harness.toml").write_text('[triage]\nwatcher_repo = "watcher"\n')
    assert read(workspace, RULES_PATH).document["bytes"] == 3_072


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    checkout = make_watcher(tmp_path / "fifo")
    os.mkfifo(checkout / "tests/pipe.txt")
    answer = read(render_workspace(tmp_path / "ws", checkout), "tests/pipe.txt")
    assert answer.error["message"] == "tests/pipe.txt is not a regular file"


def test_the_8_mib_limit(tmp_path: Path) -> None:
    checkout = make_watcher(tmp_path / "large")
    (checkout / "tests/exact.txt").write_bytes(b"a" * 8 * 1_048_576)
    (checkout / "tests/over.txt").write_bytes(b"a" * (8 * 1_048_576 + 1))
    workspace = render_workspace(tmp_path / "ws", checkout)
    exact = read(workspace, "tests/exact.txt", max_bytes=4).document
    assert (exact["bytes"], exact["text"], exact["truncated"]) == (8 * 1_048_576, "aaaa", True)
    assert read(workspace, "tests/over.txt").error == {
        "code": "refused",
        "message": "tests/over.txt is larger than 8 MiB",
        "operation": "repo_file",
    }


def test_repository_content_is_returned_as_is_not_gated(tmp_path: Path) -> None:
    checkout = make_watcher(tmp_path / "prose")
    (checkout / "tests/prose.md").write_text("caf\u00e9 \u2014 well -- known | a\tb\r\n")
    answer = read(render_workspace(tmp_path / "ws", checkout), "tests/prose.md")
    assert answer.document["text"] == "caf\u00e9 \u2014 well -- known | a\tb\r\n"


@given(st.text(max_size=40), st.integers(min_value=1, max_value=200))
def test_head_text_is_the_longest_whole_character_prefix(text: str, max_bytes: int) -> None:
    data = text.encode("utf-8", "surrogatepass")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return
    head = head_text(data, max_bytes)
    encoded = head.encode("utf-8")
    assert data.startswith(encoded) and len(encoded) <= max_bytes
    if len(encoded) < min(max_bytes, len(data)):
        next_char = data[len(encoded) :].decode("utf-8")[0].encode("utf-8")
        assert len(encoded) + len(next_char) > max_bytes

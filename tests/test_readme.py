"""The README's checked examples are real: each `<!-- checked -->` console block is rerun in a fresh
sample workspace and must print exactly what the README shows (and exit as it shows)."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest
from runners import run_cli

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK = re.compile(r"<!-- checked -->\n```console\n\$ harness (?P<cmd>.*?)\n(?P<body>.*?)```\n", re.S)


def checked_blocks() -> list[tuple[list[str], str, int]]:
    blocks = []
    for match in BLOCK.finditer(README.read_text()):
        body = match.group("body")
        expected_exit = 0
        if "$ echo $?\n" in body:
            body, _, code = body.partition("$ echo $?\n")
            expected_exit = int(code.strip())
        blocks.append((shlex.split(match.group("cmd")), body, expected_exit))
    return blocks


def test_the_readme_has_checked_examples_of_every_investigation_operation() -> None:
    commands = {" ".join(args) for args, _, _ in checked_blocks()}
    for operation in ("search_events", "search_findings", "check_baseline", "lookup_rules", "get_raw_event"):
        assert any(operation in command for command in commands), operation


def test_checked_examples_print_what_the_readme_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HARNESS_ROOT", "HARNESS_CONVERSATION_ID", "HARNESS_RULES_SHA256", "HARNESS_LEDGER_URL",
                 "HARNESS_SERVE_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    assert run_cli(["--workspace", ".harness", "init"]).exit_code == 0
    for args, expected, expected_exit in checked_blocks():
        result = run_cli(args)
        assert result.stdout == expected, f"harness {shlex.join(args)}"
        assert result.exit_code == expected_exit, f"harness {shlex.join(args)}"
    assert os.path.isdir(tmp_path / ".harness" / "store")

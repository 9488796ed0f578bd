"""The README's "Loading your data" vendor examples are real, and its mapping tables are the adapters' tables."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from runners import run_cli

from scripts.adapter_tables import render

README = Path(__file__).resolve().parents[2] / "README.md"
FILE = re.compile(r"<!-- loading-file: (?P<name>\S+) -->\n```json\n(?P<body>.*?)```\n", re.S)
# Commits carry the wall-clock time, so their ids differ from run to run; everything else must match.
COMMIT = re.compile(r'"commit":"[0-9a-f]{40}"')
BLOCK = re.compile(r"<!-- loading -->\n```console\n\$ harness (?P<cmd>.*?)\n(?P<body>.*?)```\n", re.S)


def test_the_mapping_tables_are_generated_from_the_adapters() -> None:
    text = README.read_text()
    start = text.index("<!-- adapter-tables:start -->\n") + len("<!-- adapter-tables:start -->\n")
    assert text[start : text.index("<!-- adapter-tables:end -->")] == render()


def test_loading_examples_print_what_the_readme_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HARNESS_ROOT", "HARNESS_CONVERSATION_ID", "HARNESS_RULES_SHA256", "HARNESS_LEDGER_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    text = README.read_text()
    files = {m.group("name"): m.group("body") for m in FILE.finditer(text)}
    # One real-shaped record of every format, loaded by the console blocks that follow.
    assert set(files) == {
        "cloudtrail.json",
        "okta.json",
        "github-audit.jsonl",
        "entra-signin.json",
        "m365.json",
        "entra-audit.json",
        "azure-activity.json",
        "google-workspace.json",
        "slack-audit.json",
        "gcp-audit.jsonl",
        "ocsf.json",
    }
    for name, body in files.items():
        (tmp_path / name).write_text(body)
    assert run_cli(["--workspace", ".harness", "init"]).exit_code == 0
    blocks = list(BLOCK.finditer(text))
    assert len(blocks) >= 19
    for block in blocks:
        body, _, code = block.group("body").partition("$ echo $?\n")
        result = run_cli(shlex.split(block.group("cmd")))
        if "--format auto" in block.group("cmd"):  # each example file is named after the format auto must pick
            assert result.stderr.splitlines() == [
                f"ingest: {name}: format {Path(name).stem} (auto)" for name in block.group("cmd").split()[6:]
            ]
        assert COMMIT.sub('"commit":"<id>"', result.stdout) == COMMIT.sub('"commit":"<id>"', body), block.group("cmd")
        assert result.exit_code == (int(code) if code else 0)

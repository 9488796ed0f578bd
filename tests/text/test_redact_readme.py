"""The README's table of redaction families is the rule file's (scripts/redaction_families.py renders it)."""

from __future__ import annotations

from pathlib import Path

from harness.text.redact_rules import CATALOGUE
from scripts.redaction_families import END, START, render

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_lists_exactly_the_families_of_the_rule_file() -> None:
    text = README.read_text(encoding="utf-8")
    start = text.index(START)
    assert text[start : text.index(END, start) + len(END)] == render()


def test_every_rule_appears_in_the_table() -> None:
    table = render()
    assert all(f"`{rule.rule_id}`" in table for rule in CATALOGUE)
    assert f"{len(CATALOGUE)} rules" in table

"""The README's checked examples are real: each `<!-- checked -->` console block is a cog block that
scripts/readme_cog.py regenerates by running the command in a fresh sample workspace, and `cog --check`
fails when what the README shows is not exactly what the harness prints (and exits with)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from cogapp import Cog

README = Path(__file__).resolve().parent.parent / "README.md"
CHECKED = re.compile(r"<!-- checked -->\n(?P<next>[^\n]*)\n")
GENERATED = re.compile(r'<!-- \[\[\[cog console\("""(?P<args>.*?)"""\) \]\]\] -->')


def generated_commands() -> list[list[str]]:
    """The arguments of every checked example, in README order."""
    return [shlex.split(match["args"]) for match in GENERATED.finditer(README.read_text())]


def test_every_checked_example_is_generated() -> None:
    """A checked block pasted by hand would drift: wrap it in `console("...")` and run `cog -r README.md`."""
    followers = [match["next"] for match in CHECKED.finditer(README.read_text())]
    assert followers, "the README has no checked examples"
    assert [line for line in followers if not GENERATED.fullmatch(line)] == []


def test_the_readme_has_checked_examples_of_every_investigation_operation() -> None:
    commands = {" ".join(args) for args in generated_commands()}
    for operation in ("search_events", "search_findings", "check_baseline", "lookup_rules", "get_raw_event"):
        assert any(operation in command for command in commands), operation


def test_cog_check_finds_the_readme_up_to_date(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("HARNESS_ROOT", "HARNESS_CONVERSATION_ID", "HARNESS_RULES_SHA256", "HARNESS_LEDGER_URL",
                 "HARNESS_SERVE_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    status = Cog().main(["cog", "--check", "--diff", str(README)])
    assert status == 0, capsys.readouterr().out


def test_cog_check_fails_when_an_example_no_longer_matches(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = README.read_text()
    first = GENERATED.search(text)
    assert first is not None
    # The line after the block's `$ harness ...` line is the first line the command printed.
    command_line = text.index("\n$ harness ", first.end()) + 1
    output_end = text.index("\n", text.index("\n", command_line) + 1)
    stale = text[:output_end] + " (edited by hand)" + text[output_end:]
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "readme_cog.py").write_bytes((README.parent / "scripts" / "readme_cog.py").read_bytes())
    (tmp_path / "README.md").write_text(stale)
    assert Cog().main(["cog", "--check", str(tmp_path / "README.md")]) != 0
    assert "(changed)" in capsys.readouterr().out

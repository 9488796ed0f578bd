"""The text half of the code-fix gate (triage.md §11.5 steps 1 to 3): path, size and characters, grammar.

The grammar is checked by hand rather than with unidiff: unidiff skips lines it does not know and
accepts several files per patch, while the gate must refuse anything outside the one-file grammar
and name the refused header.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.text.formatgate import violation
from harness.triage.paths import path_problem

MAX_DIFF_BYTES = 262_144
MAX_HUNKS = 200
MAX_LINES = 10_000
NO_NEWLINE_MARKER = "\\ No newline at end of file"
# Reasons end up in the PR body, which has its own cap; a name echoed from the diff is kept short.
MAX_ECHO_CHARS = 200

# Headers that would make git change modes, rename, copy, delete or write binaries; named in the reason.
_REFUSED_HEADERS = (
    "GIT binary patch",
    "Binary files",
    "old mode",
    "new mode",
    "new file mode",
    "deleted file mode",
    "similarity index",
    "dissimilarity index",
    "rename from",
    "rename to",
    "copy from",
    "copy to",
)
_REFUSED_INDEX_MODES = frozenset({"120000", "160000", "100755"})

_DIFF_GIT = re.compile(r"diff --git a/(\S+) b/(\S+)")
_INDEX = re.compile(r"index [0-9a-f]{7,64}\.\.[0-9a-f]{7,64}(?: ([0-7]{6}))?")
_OLD_FILE = re.compile(r"--- (?:a/([^\t]+)|(/dev/null))(?:\t.*)?")
_NEW_FILE = re.compile(r"\+\+\+ (?:b/([^\t]+)|(/dev/null))(?:\t.*)?")
_HUNK = re.compile(r"@@ -([0-9]{1,9})(?:,([0-9]{1,9}))? \+([0-9]{1,9})(?:,([0-9]{1,9}))? @@(?: .*)?")


class DiffRejected(ValueError):
    """A fix refused by the text gate; the message is the reason shown in the PR."""


@dataclass(frozen=True)
class ScreenedDiff:
    """A fix whose path and diff passed steps 1 to 3; `creation` when the old side is /dev/null."""

    path: str
    diff: str
    creation: bool
    added: int
    removed: int


def _refused_header(line: str) -> str:
    for header in _REFUSED_HEADERS:
        if line == header or line.startswith(header + " "):
            return header
    return ""


def _expect_name(named: str, path: str) -> None:
    if named != path:
        shown = named if len(named) <= MAX_ECHO_CHARS else named[:MAX_ECHO_CHARS] + "..."
        raise DiffRejected(f"diff names {shown}, expected {path}")


class _Parser:
    """A cursor over the diff's lines; each method consumes one grammar element or rejects."""

    def __init__(self, lines: list[str], path: str) -> None:
        self.lines = lines
        self.path = path
        self.at = 0
        self.added = 0
        self.removed = 0

    def peek(self) -> str | None:
        return self.lines[self.at] if self.at < len(self.lines) else None

    def unexpected(self, expected: str) -> DiffRejected:
        line = self.peek()
        if line is not None:
            header = _refused_header(line)
            if header:
                return DiffRejected(f'diff header "{header}" is not allowed')
        return DiffRejected(f"diff line {self.at + 1}: expected {expected}")

    def headers(self) -> bool:
        line = self.peek()
        if line is not None and line.startswith("diff --git "):
            found = _DIFF_GIT.fullmatch(line)
            if found is None:
                raise DiffRejected("diff line 1: malformed diff --git header")
            _expect_name(found[1], self.path)
            _expect_name(found[2], self.path)
            self.at += 1
        line = self.peek()
        if line is not None and line.startswith("index "):
            found = _INDEX.fullmatch(line)
            if found is None:
                raise DiffRejected(f"diff line {self.at + 1}: malformed index header")
            if found[1] in _REFUSED_INDEX_MODES:
                raise DiffRejected(f'diff header "index mode {found[1]}" is not allowed')
            if found[1] not in (None, "100644"):
                raise DiffRejected(f"diff line {self.at + 1}: index mode {found[1]} is not 100644")
            self.at += 1
        old = _OLD_FILE.fullmatch(self.peek() or "")
        if old is None:
            raise self.unexpected("a --- a/<path> or --- /dev/null header")
        if old[1] is not None:
            _expect_name(old[1], self.path)
        self.at += 1
        new = _NEW_FILE.fullmatch(self.peek() or "")
        if new is None:
            raise self.unexpected("a +++ b/<path> header")
        if new[2] is not None:
            raise DiffRejected('diff header "+++ /dev/null" is not allowed')
        _expect_name(new[1], self.path)
        self.at += 1
        return old[2] is not None

    def hunk(self, number: int) -> None:
        found = _HUNK.fullmatch(self.peek() or "")
        if found is None:
            line = self.peek() or ""
            if number > 1 and (line.startswith("--- ") or line.startswith("diff --git ")):
                raise DiffRejected("diff has more than one file section")
            if number > 1 and line[:1] in (" ", "+", "-"):
                raise DiffRejected(f"hunk {number - 1} has more lines than its @@ header counts")
            raise self.unexpected("a @@ hunk header")
        self.at += 1
        old_left = 1 if found[2] is None else int(found[2])
        new_left = 1 if found[4] is None else int(found[4])
        previous_is_body = False
        while old_left or new_left or (previous_is_body and self.peek() == NO_NEWLINE_MARKER):
            line = self.peek()
            kind = "" if line is None else line[:1]
            if line == NO_NEWLINE_MARKER and previous_is_body:
                previous_is_body = False
            elif kind == " " and old_left and new_left:
                old_left, new_left = old_left - 1, new_left - 1
                previous_is_body = True
            elif kind == "-" and old_left:
                old_left -= 1
                self.removed += 1
                previous_is_body = True
            elif kind == "+" and new_left:
                new_left -= 1
                self.added += 1
                previous_is_body = True
            else:
                raise DiffRejected(f"hunk {number} does not have the lines its @@ header counts")
            self.at += 1


def _check_text(diff: str) -> None:
    try:
        size = len(diff.encode("utf-8"))
    except UnicodeEncodeError:
        raise DiffRejected("diff is not UTF-8") from None
    if size > MAX_DIFF_BYTES:
        raise DiffRejected(f"diff is larger than {MAX_DIFF_BYTES:,} bytes")
    if "\r" in diff:
        raise DiffRejected("diff contains CR")
    found = violation(diff, "diff")
    if found is not None:
        raise DiffRejected(f"format gate: diff: {found[1]}")


def screen(path: str, diff: str) -> ScreenedDiff:
    """Run §11.5 steps 1 to 3 on one fix; DiffRejected carries the reason."""
    problem = path_problem(path)
    if problem:
        raise DiffRejected(problem)
    _check_text(diff)
    lines = (diff[:-1] if diff.endswith("\n") else diff).split("\n")
    if len(lines) > MAX_LINES:
        raise DiffRejected(f"diff has more than {MAX_LINES:,} lines")
    parser = _Parser(lines, path)
    creation = parser.headers()
    hunks = 0
    while hunks == 0 or parser.peek() is not None:
        hunks += 1
        if hunks > MAX_HUNKS:
            raise DiffRejected(f"diff has more than {MAX_HUNKS} hunks")
        parser.hunk(hunks)
    return ScreenedDiff(path, diff, creation, parser.added, parser.removed)

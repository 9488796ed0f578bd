"""The text half of the code-fix gate (docs/triage.md §11.5 steps 1 to 3): path, size and characters, grammar.

The grammar is checked by hand rather than with unidiff: unidiff skips lines it does not know and
accepts several files per patch, while the gate must refuse anything outside the one-file grammar
and name the refused header. The character gate applies to what the fix writes (headers and added
lines); context and removed lines carry what the watcher's file holds, and `git apply` checks them
against it (docs/decisions.md, Triage rendering).
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
class Hunk:
    """One hunk as its header places it: 1-based starts and counts, and the lines of each side.

    Each side's lines end in "\n" except one followed by the no-newline marker.
    """

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    old_lines: tuple[str, ...]
    new_lines: tuple[str, ...]


@dataclass(frozen=True)
class ScreenedDiff:
    """A fix whose path and diff passed steps 1 to 3; `creation` when the old side is /dev/null."""

    path: str
    diff: str
    creation: bool
    added: int
    removed: int
    hunks: tuple[Hunk, ...]


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
        self.hunks: list[Hunk] = []

    def peek(self) -> str | None:
        return self.lines[self.at] if self.at < len(self.lines) else None

    def gated(self) -> str | None:
        """The current line after the character gate: it is written by the fix (a header or an added line)."""
        line = self.peek()
        if line is not None:
            _gate_line(line, self.at + 1)
        return line

    def unexpected(self, expected: str) -> DiffRejected:
        line = self.peek()
        if line is not None:
            header = _refused_header(line)
            if header:
                return DiffRejected(f'diff header "{header}" is not allowed')
        return DiffRejected(f"diff line {self.at + 1}: expected {expected}")

    def headers(self) -> bool:
        line = self.gated()
        if line is not None and line.startswith("diff --git "):
            found = _DIFF_GIT.fullmatch(line)
            if found is None:
                raise DiffRejected("diff line 1: malformed diff --git header")
            _expect_name(found[1], self.path)
            _expect_name(found[2], self.path)
            self.at += 1
        line = self.gated()
        if line is not None and line.startswith("index "):
            found = _INDEX.fullmatch(line)
            if found is None:
                raise DiffRejected(f"diff line {self.at + 1}: malformed index header")
            if found[1] in _REFUSED_INDEX_MODES:
                raise DiffRejected(f'diff header "index mode {found[1]}" is not allowed')
            if found[1] not in (None, "100644"):
                raise DiffRejected(f"diff line {self.at + 1}: index mode {found[1]} is not 100644")
            self.at += 1
        old = _OLD_FILE.fullmatch(self.gated() or "")
        if old is None:
            raise self.unexpected("a --- a/<path> or --- /dev/null header")
        if old[1] is not None:
            _expect_name(old[1], self.path)
        self.at += 1
        new = _NEW_FILE.fullmatch(self.gated() or "")
        if new is None:
            raise self.unexpected("a +++ b/<path> header")
        if new[2] is not None:
            raise DiffRejected('diff header "+++ /dev/null" is not allowed')
        _expect_name(new[1], self.path)
        self.at += 1
        return old[2] is not None

    def hunk(self, number: int) -> None:
        # Not gated: the ranges are digits by the pattern, and the section text after them is ignored by
        # git (and may quote the file's own, say UTF-8, content).
        found = _HUNK.fullmatch(self.peek() or "")
        if found is None:
            line = self.peek() or ""
            if number > 1 and (line.startswith("--- ") or line.startswith("diff --git ")):
                raise DiffRejected("diff has more than one file section")
            if number > 1 and line[:1] in (" ", "+", "-"):
                raise DiffRejected(f"hunk {number - 1} has more lines than its @@ header counts")
            raise self.unexpected("a @@ hunk header")
        self.at += 1
        old_count = 1 if found[2] is None else int(found[2])
        new_count = 1 if found[4] is None else int(found[4])
        old_left, new_left = old_count, new_count
        old_lines: list[str] = []
        new_lines: list[str] = []
        # The sides the previous body line belongs to, so a no-newline marker can cut its newline.
        previous: tuple[list[str], ...] = ()
        while old_left or new_left or (previous and self.peek() == NO_NEWLINE_MARKER):
            line = self.peek() or ""
            kind = line[:1]
            if line == NO_NEWLINE_MARKER and previous:
                for side in previous:
                    side[-1] = side[-1].removesuffix("\n")
                previous = ()
            elif kind == " " and old_left and new_left:
                old_left, new_left = old_left - 1, new_left - 1
                old_lines.append(line[1:] + "\n")
                new_lines.append(line[1:] + "\n")
                previous = (old_lines, new_lines)
            elif kind == "-" and old_left:
                old_left -= 1
                self.removed += 1
                old_lines.append(line[1:] + "\n")
                previous = (old_lines,)
            elif kind == "+" and new_left:
                _gate_line(line, self.at + 1)
                new_left -= 1
                self.added += 1
                new_lines.append(line[1:] + "\n")
                previous = (new_lines,)
            else:
                raise DiffRejected(f"hunk {number} does not have the lines its @@ header counts")
            self.at += 1
        self.hunks.append(
            Hunk(int(found[1]), old_count, int(found[3]), new_count, tuple(old_lines), tuple(new_lines))
        )


def _gate_line(line: str, number: int) -> None:
    """A line the fix writes: printable ASCII or tab (mode `diff`), named by its 1-based number."""
    if "\r" in line:
        raise DiffRejected(f"diff line {number} contains CR")
    found = violation(line, "diff")
    if found is not None:
        raise DiffRejected(f"format gate: diff line {number}: {found[1]}")


def _check_size(diff: str) -> None:
    try:
        size = len(diff.encode("utf-8"))
    except UnicodeEncodeError:
        raise DiffRejected("diff is not UTF-8") from None
    if size > MAX_DIFF_BYTES:
        raise DiffRejected(f"diff is larger than {MAX_DIFF_BYTES:,} bytes")


def screen(path: str, diff: str) -> ScreenedDiff:
    """Run docs/triage.md §11.5 steps 1 to 3 on one fix; DiffRejected carries the reason."""
    problem = path_problem(path)
    if problem:
        raise DiffRejected(problem)
    _check_size(diff)
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
    return ScreenedDiff(path, diff, creation, parser.added, parser.removed, tuple(parser.hunks))


def _file_lines(text: str) -> list[str]:
    """Lines with their newline kept; only "\\n" ends a line, as in git."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _index(start: int, count: int) -> int:
    # An empty side's start names the line after which it sits (0 for the top of the file).
    return start - 1 if count else start


def place(original: str, fix: ScreenedDiff) -> str:
    """The text the fix gives when every hunk applies exactly where its header says; DiffRejected otherwise."""
    lines = _file_lines(original)
    result: list[str] = []
    cursor = 0
    for number, hunk in enumerate(fix.hunks, start=1):
        at = _index(hunk.old_start, hunk.old_count)
        if at < cursor or at + hunk.old_count > len(lines):
            raise DiffRejected(f"hunk {number} (-{hunk.old_start}) lies outside the file or before the previous hunk")
        if tuple(lines[at : at + hunk.old_count]) != hunk.old_lines:
            raise DiffRejected(f"hunk {number} does not match the file at line {hunk.old_start}")
        result.extend(lines[cursor:at])
        if _index(hunk.new_start, hunk.new_count) != len(result):
            raise DiffRejected(f"hunk {number} says +{hunk.new_start}, but -{hunk.old_start} puts it elsewhere")
        result.extend(hunk.new_lines)
        cursor = at + hunk.old_count
    result.extend(lines[cursor:])
    return "".join(result)

"""The conservative PKGBUILD prologue scanner (docs/triage.md §6): resolved scalars and source elements.

Nothing is executed. What the scanner cannot resolve is left out, so the declared set only
shrinks; constructs it cannot follow (heredocs, unterminated quotes) end the scan. Every loop
jumps with compiled regexes between the characters that matter, so the scan is linear.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from harness.aur.urls import elements_to_urls

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_FUNCTION_NAME = r"[A-Za-z_][A-Za-z0-9_.:-]*"
_GAP = r"(?:[ \t\n;]++|\\\n|#[^\n]*+)*+"
_ARRAY_GAP = re.compile(r"(?:[ \t\n]++|\\\n|#[^\n]*+)*+")
# A word of plain characters needs no expansion; the fast paths below read a scalar assignment
# of one, or a run of them inside an array, with one regex call instead of the general reader.
_PLAIN_WORD = r"[^ \t\n;&|<>()\\'\"$`*?\[{~#][^ \t\n;&|<>()\\'\"$`*?\[{]*+"
# One match per statement: the gap before it (blank space, `;`, comments, continuations), then a
# function start, or an assignment head with an array `(` or a plain value ending the line.
_STATEMENT = re.compile(
    _GAP
    + rf"(?:(?P<function>function[ \t]+{_FUNCTION_NAME}|{_FUNCTION_NAME}[ \t]*\([ \t]*\))"
    + rf"|(?P<name>{_NAME})(?P<append>\+?)="
    + rf"(?:(?P<array>\()|(?P<plain>(?:{_PLAIN_WORD})?)(?=[ \t]++#|[ \t]*+(?:\n|\Z)))?)?"
)
# A function defined after `;`, `&&` or `||` on a line that is otherwise skipped still ends the scan,
# so its body is never read as prologue.
_FUNCTION_AFTER_SEPARATOR = re.compile(rf"[ \t]*(?:function[ \t]+{_FUNCTION_NAME}|{_FUNCTION_NAME}[ \t]*\([ \t]*\))")
_SIMPLE_ARRAY_RUN = re.compile(rf"(?:[ \t\n]++|\\\n|#[^\n]*+|{_PLAIN_WORD}(?=[ \t\n)]))*+")
_SIMPLE_ARRAY_WORD = re.compile(r"#[^\n]*|([^ \t\n\\#][^ \t\n]*)")
_VARIABLE = re.compile(_NAME)
_BRACED_VARIABLE = re.compile(rf"\$\{{({_NAME})\}}")
_BLANKS = re.compile(r"[ \t]*")

# Runs of characters with no meaning to the reader in each context.
_UNQUOTED_PLAIN = re.compile(r"[^ \t\n;&|<>()\\'\"$`*?\[{]+")
_DQUOTE_PLAIN = re.compile(r"[^\"\\$`]*")
_STATEMENT_SPECIAL = re.compile(r"[\n\\'\"`$#<;&|]")
_NESTED_SPECIAL = {
    "cmd": re.compile(r"[\\'\"`$()#<]"),
    "brace": re.compile(r"[\\'\"`$}]"),
    "dq": re.compile(r"[\\\"`$]"),
}
_BACKTICK_SPECIAL = re.compile(r"[\\`]")
_ANSI_SPECIAL = re.compile(r"[\\']")

_WORD_BREAK = frozenset(" \t\n;&|<>()")
_METACHARACTERS = frozenset(";&|<>()")
_GLOB = frozenset("*?[{")
_SPECIAL_PARAMETERS = frozenset("0123456789@*#?-$!")
_DQUOTE_ESCAPABLE = frozenset('$`"\\')


class PkgbuildError(ValueError):
    """A PKGBUILD that cannot be scanned at all (not strict UTF-8)."""


class _EndScan(Exception):
    """A construct the scanner cannot follow: the scan stops and keeps what it has."""


class _Unusable(enum.Enum):
    """Marker values of variables that expansions may not use."""

    UNRESOLVABLE = "unresolvable"
    ARRAY = "array"


_UNRESOLVABLE = _Unusable.UNRESOLVABLE
_ARRAY = _Unusable.ARRAY


@dataclass(frozen=True)
class Prologue:
    """What the prologue declares: resolvable scalars and the final source array elements."""

    scalars: Mapping[str, str] = field(default_factory=dict)
    sources: tuple[str, ...] = ()

    @property
    def install(self) -> str | None:
        """The `install=` scriptlet name when it is a resolvable scalar."""
        return self.scalars.get("install")

    @property
    def source_urls(self) -> tuple[str, ...]:
        """The normalized URLs among the source elements."""
        return elements_to_urls(self.sources)


def _is_source_name(name: str) -> bool:
    # `^source(?:_[A-Za-z0-9_]+)?$` for a name already known to match `[A-Za-z_][A-Za-z0-9_]*`.
    return name == "source" or (name.startswith("source_") and len(name) > 7)


def _newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode(data: bytes) -> str:
    """Strict UTF-8 with CRLF and lone CR turned into LF."""
    try:
        return _newlines(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise PkgbuildError("PKGBUILD is not UTF-8") from None


def scan_prologue(data: bytes | str) -> Prologue:
    """Scan the statements before the first function for scalars and source arrays."""
    text = decode(data) if isinstance(data, bytes) else _newlines(data)
    scanner = _Scanner(text)
    try:
        scanner.run()
    except _EndScan:
        pass
    scalars = {name: value for name, value in scanner.variables.items() if isinstance(value, str)}
    sources = tuple(element for elements in scanner.sources.values() for element in elements)
    return Prologue(scalars, sources)


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.end = len(text)
        self.variables: dict[str, str | _Unusable] = {}
        self.sources: dict[str, list[str]] = {}

    # -- statements ---------------------------------------------------------------------------

    def run(self) -> None:
        text, end, match, variables = self.text, self.end, _STATEMENT.match, self.variables
        pos = 0
        while True:
            statement = match(text, pos)
            assert statement is not None  # every part of the pattern is optional
            function, name, append, array, value = statement.groups()
            pos = statement.end()
            if function is not None:
                return
            if name is None:
                if pos >= end:
                    return
                pos = self.skip_statement(pos)
            elif array is not None:
                pos = self.array_assignment(name, append == "+", pos)
            else:
                if value is None:
                    value, pos = self.read_word(pos, in_array=False)
                    rest = _BLANKS.match(text, pos).end()  # type: ignore[union-attr]
                    if not (rest >= end or text[rest] in "\n#"):
                        value = None
                        pos = self.skip_statement(rest)
                if append or name.startswith("source"):
                    self.assign_scalar(name, append == "+", value)
                elif variables.get(name) is not _ARRAY:
                    # The common case, inlined: a plain `NAME=word` to an ordinary variable.
                    variables[name] = _UNRESOLVABLE if value is None else value

    def assign_scalar(self, name: str, append: bool, value: str | None) -> None:
        if _is_source_name(name):
            # A scalar assignment to a source array rewrites element 0; dropping the whole
            # array keeps the declared set from growing.
            self.sources[name] = []
            self.variables[name] = _ARRAY
            return
        previous = self.variables.get(name)
        if previous is _ARRAY:
            return
        if append:
            value = previous + value if isinstance(previous, str) and value is not None else None
        self.variables[name] = _UNRESOLVABLE if value is None else value

    def array_assignment(self, name: str, append: bool, pos: int) -> int:
        words, pos = self.read_array(pos)
        rest = _BLANKS.match(self.text, pos).end()  # type: ignore[union-attr]
        clean = rest >= self.end or self.text[rest] in "\n#;"
        if not clean:
            pos = self.skip_statement(rest)
        self.variables[name] = _ARRAY
        if _is_source_name(name):
            elements = self.sources.setdefault(name, [])
            if not append:
                elements.clear()
            # Trailing words turn the assignment into a command prefix bash does not keep.
            if clean:
                elements.extend(word for word in words if word is not None)
        return pos

    def skip_statement(self, pos: int) -> int:
        """Skip to the end of the line, honouring quotes, continuations and substitutions."""
        text = self.text
        while True:
            found = _STATEMENT_SPECIAL.search(text, pos)
            if found is None:
                return self.end
            pos = found.start()
            ch = text[pos]
            if ch == "\n":
                return pos + 1
            if ch == "\\":
                pos += 2
            elif ch == "'":
                pos = self.skip_single_quote(pos + 1)
            elif ch == '"':
                pos = self.skip_nested(pos + 1, "dq")
            elif ch == "`":
                pos = self.skip_backtick(pos + 1)
            elif ch == "$":
                pos = self.skip_dollar(pos)
            elif ch == "#":
                if self.at_word_start(pos):
                    newline = text.find("\n", pos)
                    return self.end if newline < 0 else newline + 1
                pos += 1
            elif ch in ";&|":
                if _FUNCTION_AFTER_SEPARATOR.match(text, pos + 1):
                    raise _EndScan
                pos += 1
            elif text.startswith("<<", pos):
                raise _EndScan
            else:
                pos += 1

    # -- words ----------------------------------------------------------------------------------

    def read_array(self, pos: int) -> tuple[list[str | None], int]:
        words: list[str | None] = []
        while True:
            run = _SIMPLE_ARRAY_RUN.match(self.text, pos)
            if run is not None and run.end() > pos:
                words.extend(word for word in _SIMPLE_ARRAY_WORD.findall(self.text, pos, run.end()) if word)
                pos = run.end()
            pos = _ARRAY_GAP.match(self.text, pos).end()  # type: ignore[union-attr]
            if pos >= self.end:
                raise _EndScan
            if self.text[pos] == ")":
                return words, pos + 1
            word, pos = self.read_word(pos, in_array=True)
            words.append(word)

    def read_word(self, pos: int, *, in_array: bool) -> tuple[str | None, int]:
        """One shell word: its value, or None when it is unresolvable; and the position after it."""
        text = self.text
        parts: list[str] = []
        resolvable = not text.startswith("~", pos)
        while pos < self.end:
            ch = text[pos]
            if ch in _WORD_BREAK:
                if in_array and ch in _METACHARACTERS and ch != ")":
                    raise _EndScan
                break
            if ch == "\\":
                escaped = text[pos + 1 : pos + 2]
                if escaped != "\n":
                    # A backslash at the very end of the text stays itself.
                    parts.append(escaped or "\\")
                pos += 1 + len(escaped)
            elif ch == "'":
                close = text.find("'", pos + 1)
                if close < 0:
                    raise _EndScan
                parts.append(text[pos + 1 : close])
                pos = close + 1
            elif ch == '"':
                value, pos = self.read_double_quoted(pos + 1)
                if value is None:
                    resolvable = False
                else:
                    parts.append(value)
            elif ch == "$":
                value, pos = self.read_dollar(pos, quoted=False)
                if value is None:
                    resolvable = False
                else:
                    parts.append(value)
            elif ch == "`":
                pos = self.skip_backtick(pos + 1)
                resolvable = False
            elif ch in _GLOB:
                resolvable = False
                pos += 1
            else:
                run = _UNQUOTED_PLAIN.match(text, pos)
                assert run is not None  # every other character is plain
                parts.append(run.group())
                pos = run.end()
        return ("".join(parts) if resolvable else None), pos

    def read_double_quoted(self, pos: int) -> tuple[str | None, int]:
        text = self.text
        parts: list[str] = []
        resolvable = True
        while True:
            run = _DQUOTE_PLAIN.match(text, pos)
            assert run is not None  # the pattern matches the empty string
            parts.append(run.group())
            pos = run.end()
            if pos >= self.end:
                raise _EndScan
            ch = text[pos]
            if ch == '"':
                return ("".join(parts) if resolvable else None), pos + 1
            if ch == "\\":
                following = text[pos + 1 : pos + 2]
                if not following:
                    raise _EndScan
                if following in _DQUOTE_ESCAPABLE:
                    parts.append(following)
                    pos += 2
                elif following == "\n":
                    pos += 2
                else:
                    parts.append("\\")
                    pos += 1
            elif ch == "`":
                pos = self.skip_backtick(pos + 1)
                resolvable = False
            else:
                value, pos = self.read_dollar(pos, quoted=True)
                if value is None:
                    resolvable = False
                else:
                    parts.append(value)

    def read_dollar(self, pos: int, *, quoted: bool) -> tuple[str | None, int]:
        """Expand `$NAME` or `${NAME}` from a resolvable scalar; any other `$` form is unresolvable."""
        text = self.text
        following = text[pos + 1 : pos + 2]
        if following == "{":
            braced = _BRACED_VARIABLE.match(text, pos)
            if braced is not None:
                return self.lookup(braced.group(1)), braced.end()
            return None, self.skip_nested(pos + 2, "brace")
        if following == "(":
            return None, self.skip_nested(pos + 2, "cmd")
        if following == "'" and not quoted:
            return None, self.skip_ansi_quote(pos + 2)
        name = _VARIABLE.match(text, pos + 1)
        if name is not None:
            return self.lookup(name.group()), name.end()
        if following and following in _SPECIAL_PARAMETERS:
            return None, pos + 2
        # A lone `$`, or `$"..."` whose quoted text the caller reads next.
        return None, pos + 1

    def lookup(self, name: str) -> str | None:
        value = self.variables.get(name)
        return value if isinstance(value, str) else None

    # -- skipping -------------------------------------------------------------------------------

    def at_word_start(self, pos: int) -> bool:
        return pos == 0 or self.text[pos - 1] in _WORD_BREAK

    def skip_single_quote(self, pos: int) -> int:
        close = self.text.find("'", pos)
        if close < 0:
            raise _EndScan
        return close + 1

    def skip_escaped_until(self, pos: int, special: re.Pattern[str], closer: str) -> int:
        while True:
            found = special.search(self.text, pos)
            if found is None:
                raise _EndScan
            pos = found.start()
            if self.text[pos] == closer:
                return pos + 1
            pos += 2

    def skip_backtick(self, pos: int) -> int:
        return self.skip_escaped_until(pos, _BACKTICK_SPECIAL, "`")

    def skip_ansi_quote(self, pos: int) -> int:
        return self.skip_escaped_until(pos, _ANSI_SPECIAL, "'")

    def skip_dollar(self, pos: int) -> int:
        following = self.text[pos + 1 : pos + 2]
        if following == "(":
            return self.skip_nested(pos + 2, "cmd")
        if following == "{":
            return self.skip_nested(pos + 2, "brace")
        if following == "'":
            return self.skip_ansi_quote(pos + 2)
        return pos + 1

    def skip_nested(self, pos: int, kind: str) -> int:
        """Skip to the end of a `$(`, `${` or double-quoted span; an explicit stack bounds nesting."""
        text = self.text
        stack = [kind]
        while stack:
            top = stack[-1]
            found = _NESTED_SPECIAL[top].search(text, pos)
            if found is None:
                raise _EndScan
            pos = found.start()
            ch = text[pos]
            if ch == "\\":
                pos += 2
            elif ch == "`":
                pos = self.skip_backtick(pos + 1)
            elif ch == "$":
                following = text[pos + 1 : pos + 2]
                if following in ("(", "{"):
                    stack.append("cmd" if following == "(" else "brace")
                    pos += 2
                elif following == "'" and top != "dq":
                    pos = self.skip_ansi_quote(pos + 2)
                else:
                    pos += 1
            elif top == "dq":
                stack.pop()
                pos += 1
            elif ch == "'":
                pos = self.skip_single_quote(pos + 1)
            elif ch == '"':
                stack.append("dq")
                pos += 1
            elif ch == "}" or ch == ")":
                stack.pop()
                pos += 1
            elif ch == "(":
                stack.append("cmd")
                pos += 1
            elif ch == "#":
                if self.at_word_start(pos):
                    newline = text.find("\n", pos)
                    if newline < 0:
                        raise _EndScan
                    pos = newline
                else:
                    pos += 1
            elif text.startswith("<<", pos):
                raise _EndScan
            else:
                pos += 1
        return pos

""".SRCINFO parsing (docs/triage.md §6): pkgbase, pkgnames, version, install and source values."""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.aur.urls import elements_to_urls

MAX_LINES = 100_000
MAX_VALUES_PER_KEY = 4_096

_KEY = re.compile(r"[a-z][a-z0-9_]*")
_SOURCE_KEY = re.compile(r"source(?:_[A-Za-z0-9_]+)?")
_VERSION_KEYS = ("epoch", "pkgver", "pkgrel")


class SrcinfoError(ValueError):
    """A malformed .SRCINFO; `what` is the bare problem, the message names the commit."""

    def __init__(self, commit: str, what: str) -> None:
        super().__init__(f".SRCINFO at commit {commit} is malformed: {what}")
        self.commit = commit
        self.what = what


@dataclass(frozen=True)
class Srcinfo:
    """What the checks read from a .SRCINFO; sources are raw elements from every section."""

    pkgbase: str
    pkgnames: frozenset[str]
    version: str
    install: tuple[str, ...]
    sources: tuple[str, ...]

    @property
    def source_urls(self) -> tuple[str, ...]:
        """The normalized URLs among the source elements."""
        return elements_to_urls(self.sources)


def _lines(data: bytes, commit: str) -> list[str]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SrcinfoError(commit, "not UTF-8") from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if len(lines) > MAX_LINES:
        raise SrcinfoError(commit, f"more than {MAX_LINES:,} lines")
    return lines


def parse_srcinfo(data: bytes, commit: str) -> Srcinfo:
    """Parse raw .SRCINFO bytes fetched at `commit` (named only in error messages)."""
    pkgbase: str | None = None
    in_pkgbase_section = True
    pkgnames: set[str] = set()
    version_parts: dict[str, str] = {}
    install: list[str] = []
    sources: list[str] = []
    counts: dict[str, int] = {}
    for number, raw in enumerate(_lines(data, commit), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, separator, value = line.partition("=")
        if not separator:
            raise SrcinfoError(commit, f'line {number} has no "="')
        key, value = key.strip(), value.strip()
        if _KEY.fullmatch(key) is None:
            raise SrcinfoError(commit, f"line {number} has an invalid key")
        counts[key] = counts.get(key, 0) + 1
        if counts[key] > MAX_VALUES_PER_KEY:
            raise SrcinfoError(commit, f"more than {MAX_VALUES_PER_KEY:,} values for {key}")
        if pkgbase is None:
            if key != "pkgbase":
                raise SrcinfoError(commit, f"line {number}: the first key is {key}, not pkgbase")
            pkgbase = value
            continue
        if key == "pkgbase":
            raise SrcinfoError(commit, f"line {number}: a second pkgbase line")
        if key == "pkgname":
            in_pkgbase_section = False
            pkgnames.add(value)
        elif key in _VERSION_KEYS and in_pkgbase_section:
            if key in version_parts:
                raise SrcinfoError(commit, f"line {number}: {key} is set twice in the pkgbase section")
            version_parts[key] = value
        elif key == "install":
            install.append(value)
        elif _SOURCE_KEY.fullmatch(key):
            sources.append(value)
    if pkgbase is None:
        raise SrcinfoError(commit, "no pkgbase line")
    for required in ("pkgver", "pkgrel"):
        if required not in version_parts:
            raise SrcinfoError(commit, f"no {required} in the pkgbase section")
    version = f"{version_parts['pkgver']}-{version_parts['pkgrel']}"
    epoch = version_parts.get("epoch", "0")
    if epoch != "0":
        version = f"{epoch}:{version}"
    return Srcinfo(pkgbase, frozenset(pkgnames), version, tuple(install), tuple(sources))

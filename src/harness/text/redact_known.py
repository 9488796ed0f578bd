"""Layer (a) of the redactor: known secret values collected once at startup (ledger.md §6.4)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from urllib.parse import quote, quote_plus, unquote

import ahocorasick_rs

from harness.text.redact_spans import EXACT, Span
from harness.text.redact_text import sanitize

KNOWN_SECRET_ID = "known_secret"
MIN_VALUE_BYTES = 8
MAX_VALUE_BYTES = 65536
MAX_VALUES = 256

NAME_SUBSTRINGS = (
    "SECRET",
    "TOKEN",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "APIKEY",
    "API_KEY",
    "ACCESS_KEY",
    "PRIVATE_KEY",
    "SESSION_KEY",
    "SIGNING_KEY",
    "WEBHOOK",
)
NAME_WORDS = frozenset({"AUTH", "DSN", "PAT"})
# Such variables hold locations (a socket, a file), not secrets.
EXCLUDED_SUFFIXES = ("_SOCK", "_FILE", "_PATH", "_DIR")

_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,31}://[^/\s:@]{0,256}:([^/\s@]{1,4096})@")
_ALL_DIGITS = re.compile(r"[0-9]+")


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name marks its value as a secret (before exclusions)."""
    upper = name.upper()
    if any(part in upper for part in NAME_SUBSTRINGS):
        return True
    return not NAME_WORDS.isdisjoint(upper.split("_"))


def is_excluded_name(name: str) -> bool:
    """Whether a name is a location by its suffix (`SSH_AUTH_SOCK`, `..._FILE`)."""
    return name.upper().endswith(EXCLUDED_SUFFIXES)


def url_passwords(value: str) -> list[str]:
    """The userinfo passwords of the URLs inside `value`, as written and percent-decoded."""
    found: list[str] = []
    for match in _URL_PASSWORD.finditer(value):
        raw = match.group(1)
        found.append(raw)
        decoded = unquote(raw)
        if decoded != raw:
            found.append(decoded)
    return found


def _acceptable(value: str) -> bool:
    size = len(value.encode("utf-8"))
    return MIN_VALUE_BYTES <= size <= MAX_VALUE_BYTES and _ALL_DIGITS.fullmatch(value) is None


def encoded_forms(value: str) -> list[str]:
    """The value plus its JSON-escaped and percent-encoded forms, without duplicates, in a fixed order."""
    forms = [
        value,
        json.dumps(value, ensure_ascii=False)[1:-1],
        json.dumps(value)[1:-1],
        quote(value, safe=""),
        quote(value),
        quote_plus(value),
    ]
    return list(dict.fromkeys(forms))


class KnownSecrets:
    """Secret values to redact wherever they appear; repr shows the count and source names, never values."""

    def __init__(self) -> None:
        self._sources: dict[str, set[str]] = {}

    @classmethod
    def from_environment(
        cls,
        environ: Mapping[str, str],
        extra_names: Iterable[str] = (),
        excluded_names: Iterable[str] = (),
    ) -> KnownSecrets:
        """Collect secret-named variables and URL passwords; explicit `extra_names` win over every exclusion."""
        extra = {name.upper() for name in extra_names}
        excluded = {name.upper() for name in excluded_names}
        known = cls()
        for name in sorted(environ):
            value = environ[name]
            upper = name.upper()
            if upper in extra:
                known.add(value, name)
            elif upper in excluded or is_excluded_name(name):
                continue
            elif is_secret_name(name):
                known.add(value, name)
            for password in url_passwords(value):
                known.add(value, name)
                known.add(password, name)
        return known

    def add(self, value: str, source: str) -> bool:
        """Register one value (ignored when under 8 bytes, over 64 KiB or all digits); True if kept."""
        value = sanitize(value)
        if not _acceptable(value):
            return False
        self._sources.setdefault(value, set()).add(source)
        return True

    @property
    def count(self) -> int:
        """How many distinct values are registered."""
        return len(self._sources)

    @property
    def sources(self) -> tuple[str, ...]:
        """The sorted names the values came from."""
        return tuple(sorted(set().union(*self._sources.values())))

    def patterns(self) -> tuple[bytes, ...]:
        """The byte strings to search: the 256 longest values and their encoded forms, longest first."""
        chosen = sorted(self._sources, key=lambda v: (-len(v.encode("utf-8")), v))[:MAX_VALUES]
        forms = {form.encode("utf-8") for value in chosen for form in encoded_forms(value)}
        return tuple(sorted(forms, key=lambda b: (-len(b), b)))

    def __repr__(self) -> str:
        return f"KnownSecrets(count={self.count}, sources={list(self.sources)!r})"


class KnownMatcher:
    """Finds every occurrence of every known value in a body, overlapping ones included."""

    __slots__ = ("_automaton", "_patterns")

    def __init__(self, patterns: tuple[bytes, ...]) -> None:
        self._patterns = patterns
        self._automaton = ahocorasick_rs.BytesAhoCorasick(list(patterns)) if patterns else None

    @property
    def count(self) -> int:
        """How many byte patterns are searched."""
        return len(self._patterns)

    def spans(self, buf: bytes) -> list[Span]:
        """Exact, case-sensitive occurrences as `known_secret` spans."""
        if self._automaton is None:
            return []
        return [
            Span(start, end, EXACT, 0, KNOWN_SECRET_ID)
            for _, start, end in self._automaton.find_matches_as_indexes(buf, overlapping=True)
        ]

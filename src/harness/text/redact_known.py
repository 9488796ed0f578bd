"""Layer (a) of the redactor: known secret values collected once at startup (docs/ledger.md §6.4)."""

from __future__ import annotations

import bisect
import itertools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from urllib.parse import quote, quote_plus, unquote

import ahocorasick_rs
import orjson

from harness.text.redact_spans import EXACT, Span, merge, rebuild, usable
from harness.text.redact_text import sanitize

KNOWN_SECRET_ID = "known_secret"
MIN_VALUE_BYTES = 4
# Values shorter than this match only as a whole token: `test` is removed from `password=test`, not from `latest`.
BOUNDED_BELOW_BYTES = 8
# A capped text whose tail is at least this long a prefix of a known value loses that tail (docs/decisions.md).
CUT_PREFIX_MIN_BYTES = 4
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
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
# Flag values, not secrets; as JSON literals they would also corrupt any JSON text they were removed from.
NOT_SECRET_WORDS = frozenset({"true", "false", "null", "none"})
_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


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
    return (
        MIN_VALUE_BYTES <= size <= MAX_VALUE_BYTES
        and any(ch.isalnum() for ch in value)
        and _JSON_NUMBER.fullmatch(value) is None
        and value.lower() not in NOT_SECRET_WORDS
    )


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
        """Register one value; True if kept. Ignored: under 4 bytes, over 64 KiB, without a letter or digit, a
        JSON number (all digits included), or true/false/null/none in any case."""
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
        return tuple(pattern for pattern, _ in self.bounded_patterns())

    def bounded_patterns(self) -> tuple[tuple[bytes, bool], ...]:
        """`patterns()`, each with whether it matches only as a whole token (its value is under 8 bytes); a form
        shared by a short and a long value matches anywhere."""
        chosen = sorted(self._sources, key=lambda v: (-len(v.encode("utf-8")), v))[:MAX_VALUES]
        forms: dict[bytes, bool] = {}
        for value in chosen:
            bounded = len(value.encode("utf-8")) < BOUNDED_BELOW_BYTES
            for form in encoded_forms(value):
                key = form.encode("utf-8")
                forms[key] = forms.get(key, True) and bounded
        return tuple(sorted(forms.items(), key=lambda item: (-len(item[0]), item[0])))

    def __repr__(self) -> str:
        return f"KnownSecrets(count={self.count}, sources={list(self.sources)!r})"


def json_text(node: object) -> bytes:
    """A JSON tree serialized compactly with every string as its characters, escaped only where JSON requires (lone
    surrogates kept as their bytes); raises TypeError, ValueError or RecursionError for what is not such a tree
    (a cycle is a RecursionError: the circular check costs more than the serialization).

    orjson writes it where it can (a fifth of the time on a 2,000-event result): it escapes every character as json
    does, checked for every code point by tests/text/test_json_orjson.py. It writes floats in another form and NaN as
    null, which moves no string. What it refuses (a lone surrogate, a key that is not a string, an integer past 64
    bits, a cycle) goes to json (docs/decisions.md, "JSON through orjson")."""
    try:
        return orjson.dumps(node)
    except TypeError:
        pass
    return json.dumps(node, ensure_ascii=False, separators=(",", ":"), check_circular=False).encode(
        "utf-8", "surrogatepass"
    )


def _whole_token(buf: bytes, start: int, end: int) -> bool:
    return (start == 0 or buf[start - 1] not in _WORD_BYTES) and (end == len(buf) or buf[end] not in _WORD_BYTES)


class KnownMatcher:
    """Finds every occurrence of every known value in a body, overlapping ones included."""

    __slots__ = ("_automaton", "_bounded", "_heads", "_in_json", "_longest", "_patterns", "_sorted")

    def __init__(self, patterns: tuple[tuple[bytes, bool], ...]) -> None:
        self._patterns = tuple(pattern for pattern, _ in patterns)
        self._bounded = tuple(bounded for _, bounded in patterns)
        self._automaton = ahocorasick_rs.BytesAhoCorasick(list(self._patterns)) if patterns else None
        # Cut tails: the first CUT_PREFIX_MIN_BYTES of each pattern find candidate starts, a sorted list confirms.
        self._sorted = sorted(patterns)
        self._longest = max((len(pattern) for pattern in self._patterns), default=0)
        heads = {pattern[:CUT_PREFIX_MIN_BYTES] for pattern in self._patterns if len(pattern) > CUT_PREFIX_MIN_BYTES}
        self._heads = ahocorasick_rs.BytesAhoCorasick(sorted(heads)) if heads else None
        # Each pattern as `json_text` writes it inside a string. JSON escapes character by character, so a string
        # that holds a pattern is written as text that holds the pattern's escaped form: a serialized tree without
        # any of these holds no string with a pattern.
        in_json = {json_text(pattern.decode("utf-8"))[1:-1] for pattern in self._patterns}
        self._in_json = ahocorasick_rs.BytesAhoCorasick(sorted(in_json)) if in_json else None

    @property
    def count(self) -> int:
        """How many byte patterns are searched."""
        return len(self._patterns)

    def spans(self, buf: bytes) -> list[Span]:
        """Exact, case-sensitive occurrences as `known_secret` spans (short values only as whole tokens)."""
        if self._automaton is None:
            return []
        bounded = self._bounded
        return [
            Span(start, end, EXACT, 0, KNOWN_SECRET_ID)
            for index, start, end in self._automaton.find_matches_as_indexes(buf, overlapping=True)
            if not bounded[index] or _whole_token(buf, start, end)
        ]

    def redact(self, s: str) -> str:
        """`s` with every occurrence replaced by its placeholder (`s` itself when none occurs)."""
        if self._automaton is None:
            return s
        buf = s.encode("utf-8", "surrogatepass")
        red = self.redact_bytes(buf)
        return s if red is buf else red.decode("utf-8", "surrogatepass")

    def redact_bytes(self, buf: bytes) -> bytes:
        """`redact` over bytes (the same object when nothing matched); placeholders already present are kept, so
        filtering twice changes nothing."""
        spans = usable(buf, self.spans(buf)) if self._automaton is not None else []
        return rebuild(buf, merge(spans)) if spans else buf

    def holders(self, bufs: Sequence[bytes]) -> set[int]:
        """The indexes of the bodies holding an occurrence of some pattern (whole token or not), found by one search
        over them all joined by NUL: no pattern holds NUL (a value is sanitized first, and sanitizing turns NUL
        into text), so no occurrence spans two bodies. A superset of the bodies `spans` finds anything in."""
        if self._automaton is None or not bufs:
            return set()
        starts = list(itertools.accumulate((len(buf) + 1 for buf in bufs[:-1]), initial=0))
        matches = self._automaton.find_matches_as_indexes(b"\x00".join(bufs), overlapping=True)
        return {bisect.bisect_right(starts, start) - 1 for _, start, _ in matches}

    def in_json(self, serialized: bytes) -> bool:
        """Whether some string of the tree that `json_text` serialized may hold a pattern: False proves that none
        does (a cheaper question than `holders` over every string of a large tree)."""
        return self._in_json is not None and bool(self._in_json.find_matches_as_indexes(serialized))

    def cut_tail(self, buf: bytes) -> list[Span]:
        """The longest tail of `buf` (at least CUT_PREFIX_MIN_BYTES) that is a proper prefix of a known value, as a
        span: `buf` ends where a cap cut it, so the value may have gone on."""
        if self._heads is None or len(buf) < CUT_PREFIX_MIN_BYTES:
            return []
        window = max(0, len(buf) - self._longest + 1)
        starts = sorted({start for _, start, _ in self._heads.find_matches_as_indexes(buf[window:], overlapping=True)})
        for start in starts:
            at = window + start
            if self._is_prefix(buf, at):
                return [Span(at, len(buf), EXACT, 0, KNOWN_SECRET_ID)]
        return []

    def _is_prefix(self, buf: bytes, at: int) -> bool:
        tail = buf[at:]
        index = bisect.bisect_left(self._sorted, (tail, False))
        for pattern, bounded in self._sorted[index:]:
            if not pattern.startswith(tail):
                return False
            if len(pattern) > len(tail) and (not bounded or at == 0 or buf[at - 1] not in _WORD_BYTES):
                return True
        return False

"""Indicator normalization and refusal for TP verdicts (docs/triage.md §8), without the AUR lookup."""

from __future__ import annotations

import hashlib
import ipaddress
import re
import re._constants as sre_constants  # type: ignore[import-not-found]  # private, so typeshed has no stub
import re._parser as sre_parser  # type: ignore[import-not-found]
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from harness.triage.names import is_package_name
from harness.triage.verdict import IocChange, Suppression

MAX_FILE_PATH_CHARS = 1_024
MAX_PATTERN_CHARS = 2_000
MAX_DOMAIN_CHARS = 253

_HEX = re.compile(r"[0-9a-f]+")
_EMPTY_DIGESTS = {
    hashlib.new(name, b"").hexdigest(): name for name in ("md5", "sha1", "sha224", "sha256", "sha384", "sha512")
}
_HASH_LENGTHS = (32, 40, 56, 64, 96, 128)
_DOMAIN_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_DIGITS = re.compile(r"[0-9]+")
_PORT_SUFFIX = re.compile(r":[0-9]+\Z")
_URL_PATH_START = re.compile(r"[/?#]")
_RESERVED_DOMAINS = ("example.com", "example.net", "example.org")
_RESERVED_LAST_LABELS = frozenset({"example", "test", "invalid", "localhost", "local"})
_SLASH_RUNS = re.compile(r"/{2,}")

_REPEATS = frozenset({sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT})
_LOOKAROUNDS = frozenset({sre_constants.ASSERT, sre_constants.ASSERT_NOT})
_BACKREFERENCES = frozenset({sre_constants.GROUPREF, sre_constants.GROUPREF_EXISTS})


class IndicatorError(ValueError):
    """An indicator refused by docs/triage.md §8; the message is the bare reason (`nested quantifier`)."""


def normalize_hash(value: str) -> str:
    """Lowercase hex digest of a known length that is neither degenerate nor the digest of nothing."""
    digest = value.lower()
    if _HEX.fullmatch(digest) is None:
        raise IndicatorError("hash is not hexadecimal")
    if len(digest) not in _HASH_LENGTHS:
        raise IndicatorError(f"hash length {len(digest)} is not 32, 40, 56, 64, 96 or 128")
    if digest == digest[0] * len(digest):
        raise IndicatorError("hash is one repeated character")
    if digest in _EMPTY_DIGESTS:
        raise IndicatorError(f"hash is the {_EMPTY_DIGESTS[digest]} digest of empty input")
    return digest


def _is_ip_literal(host: str) -> bool:
    if host.startswith("["):
        return True
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return all(_DIGITS.fullmatch(label) for label in host.split("."))
    return True


def normalize_domain(value: str) -> str:
    """The lowercase host of a domain or URL-like value; IP literals and reserved names are refused."""
    host = value.lower()
    host = host.partition("://")[2] if "://" in host else host
    host = _URL_PATH_START.split(host, maxsplit=1)[0]
    host = host.rpartition("@")[2]
    # An unbracketed IPv6 address ends in what looks like a port, so it is also tested unstripped.
    unported = host
    host = _PORT_SUFFIX.sub("", host)
    if host.endswith("."):
        host = host[:-1]
    if _is_ip_literal(host) or _is_ip_literal(unported):
        raise IndicatorError("domain is an IP literal (write C2 addresses as bounded pkgbuild_pattern entries)")
    labels = host.split(".")
    if (
        len(host) > MAX_DOMAIN_CHARS
        or len(labels) < 2
        or not all(_DOMAIN_LABEL.fullmatch(label) for label in labels)
        or _DIGITS.fullmatch(labels[-1])
    ):
        raise IndicatorError("domain is not a host name of two or more valid labels")
    if labels[-1] in _RESERVED_LAST_LABELS or any(
        host == reserved or host.endswith(f".{reserved}") for reserved in _RESERVED_DOMAINS
    ):
        raise IndicatorError("domain is reserved")
    return host


def normalize_package(value: str) -> str:
    """A lowercase package name that is not a reserved `.example` name."""
    name = value.lower()
    if not is_package_name(name):
        raise IndicatorError("package is not a package name")
    if name.endswith(".example"):
        raise IndicatorError("package name ends with .example")
    return name


def normalize_file_path(value: str) -> str:
    """Forward slashes, single separators, no leading `./` or trailing `/`; `..` is refused."""
    path = _SLASH_RUNS.sub("/", value.replace("\\", "/"))
    while path.startswith("./"):
        path = path[2:]
    if path.endswith("/"):
        path = path[:-1]
    if path in ("", "."):
        raise IndicatorError("file path is empty")
    if len(path) > MAX_FILE_PATH_CHARS:
        raise IndicatorError(f"file path is over {MAX_FILE_PATH_CHARS:,} characters")
    if ".." in path.split("/"):
        raise IndicatorError("file path has a .. component")
    return path


def _unsafe_construct(tree: Any) -> str | None:
    """The first construct that can backtrack badly, walking the parse tree in pattern order."""
    # Each frame: the items still to visit, and whether an enclosing quantifier allows more than one.
    stack: list[tuple[Iterator[tuple[Any, Any]], bool]] = [(iter(tree), False)]
    while stack:
        items, repeated = stack[-1]
        item = next(items, None)
        if item is None:
            stack.pop()
            continue
        op, av = item
        if op in _REPEATS:
            if repeated:
                return "nested quantifier"
            stack.append((iter(av[2]), av[1] > 1))
        elif op is sre_constants.BRANCH:
            if repeated:
                return "quantified alternation"
            stack.append((iter([entry for alternative in av[1] for entry in alternative]), repeated))
        elif op in _BACKREFERENCES:
            return "backreference"
        elif op is sre_constants.SUBPATTERN:
            stack.append((iter(av[3]), repeated))
        elif op in _LOOKAROUNDS:
            stack.append((iter(av[1]), repeated))
        elif op is sre_constants.ATOMIC_GROUP:
            stack.append((iter(av), repeated))
    return None


def check_pattern(value: str) -> str:
    """A PKGBUILD regex that compiles, never matches empty text and cannot backtrack badly."""
    if len(value) > MAX_PATTERN_CHARS:
        raise IndicatorError(f"pattern is over {MAX_PATTERN_CHARS:,} characters")
    try:
        # The parser warns about syntax whose meaning may change (nested sets); that is not a refusal.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            compiled = re.compile(value)
            tree = sre_parser.parse(value)
        shortest = tree.getwidth()[0]
    except re.error as exc:
        raise IndicatorError(f"pattern does not compile: {exc}") from None
    except (RecursionError, OverflowError, ValueError):
        raise IndicatorError("pattern does not compile") from None
    if shortest == 0 or compiled.match("") is not None:
        raise IndicatorError("pattern matches the empty string")
    problem = _unsafe_construct(tree)
    if problem is not None:
        raise IndicatorError(f"pattern is unsafe: {problem}")
    return value


NORMALIZERS: dict[str, Callable[[str], str]] = {
    "hash": normalize_hash,
    "domain": normalize_domain,
    "package": normalize_package,
    "file_path": normalize_file_path,
    "pkgbuild_pattern": check_pattern,
}


def normalize_indicator(indicator_type: str, value: str) -> str:
    """The normalized value of one indicator, or IndicatorError with the reason it is refused."""
    return NORMALIZERS[indicator_type](value)


@dataclass(frozen=True)
class IndicatorCheck:
    """The outcome for one `ioc` change; `index` is its position in `proposed_changes`."""

    index: int
    type: str
    value: str
    normalized_value: str | None
    reason: str

    @property
    def passed(self) -> bool:
        """True when the indicator normalized and repeats no earlier one."""
        return not self.reason


def check_indicators(changes: Sequence[Suppression | IocChange]) -> tuple[IndicatorCheck, ...]:
    """Normalize every `ioc` change in order; a repeat of an earlier (type, value) is refused."""
    first: dict[tuple[str, str], int] = {}
    checks: list[IndicatorCheck] = []
    for index, change in enumerate(changes):
        if not isinstance(change, IocChange):
            continue
        try:
            normalized = normalize_indicator(change.type, change.value)
        except IndicatorError as exc:
            checks.append(IndicatorCheck(index, change.type, change.value, None, str(exc)))
            continue
        key = (change.type, normalized)
        reason = f"duplicate of entry {first[key]}" if key in first else ""
        first.setdefault(key, index)
        checks.append(IndicatorCheck(index, change.type, change.value, normalized, reason))
    return tuple(checks)


def ioc_entries(changes: Sequence[Suppression | IocChange], checks: Sequence[IndicatorCheck]) -> list[dict[str, Any]]:
    """The normalized entries of passing checks, sorted by (type, value), every key present."""
    entries = []
    for check in checks:
        change = changes[check.index]
        if not check.passed or not isinstance(change, IocChange):
            continue
        entries.append(
            {
                "type": change.type,
                "value": check.normalized_value,
                "confidence": change.confidence,
                "provenance": change.provenance,
                "campaign": change.campaign,
                "incident": change.incident,
                "expires_at": change.expires_at,
                "note": change.note,
            }
        )
    return sorted(entries, key=lambda entry: (entry["type"], entry["value"]))

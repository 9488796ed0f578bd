"""URL normalization N(u), routable hosts without DNS, and source elements to URLs (docs/triage.md §6)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

_DEFAULT_PORTS = {"http": 80, "https": 443, "ftp": 21}
_PRINTABLE = re.compile(r"[\x21-\x7e]+")
# scheme "://" authority path [? query] [# fragment]; the authority ends at the first / ? #.
_URL = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)([^?#]*)(?:\?([^#]*))?(?:#.*)?")
_PORT = re.compile(r"[0-9]{1,5}")
_VCS_PREFIX = re.compile(r"(?:git|hg|svn|bzr|fossil)\+(?=(?i:https?|ftp)://)")

_NUMERIC_LABEL = re.compile(r"0x[0-9a-f]*|[0-9]+")
_CANONICAL_IPV4 = re.compile(
    r"(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
)
_SPECIAL_LAST_LABELS = frozenset({"local", "test", "example", "invalid", "onion", "internal", "localhost"})


@dataclass(frozen=True)
class NormalizedUrl:
    """A normalized URL and the host it names (lowercase, no trailing dot, IPv6 in brackets)."""

    url: str
    scheme: str
    host: str
    port: int | None


def parse_url(text: str) -> NormalizedUrl | None:
    """N(u) with its parts, or None when `text` is not an http, https or ftp URL."""
    if _PRINTABLE.fullmatch(text) is None:
        return None
    found = _URL.fullmatch(text)
    if found is None:
        return None
    scheme, authority, path, query = found.groups()
    scheme = scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        return None
    hostport = authority.rpartition("@")[2]
    if hostport.startswith("["):
        close = hostport.find("]")
        if close < 0:
            return None
        host, rest = hostport[: close + 1].lower(), hostport[close + 1 :]
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return None
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else None
    else:
        host, colon, port_text_raw = hostport.partition(":")
        host = host.lower()
        if host.endswith("."):
            host = host[:-1]
        port_text = port_text_raw if colon else None
    if not host:
        return None
    port: int | None = None
    if port_text is not None:
        if _PORT.fullmatch(port_text) is None or not 0 < int(port_text) <= 65535:
            return None
        port = int(port_text)
        if port == _DEFAULT_PORTS[scheme]:
            port = None
    if not path:
        path = "/"
    elif path != "/" and path.endswith("/"):
        path = path[:-1]
    netloc = host if port is None else f"{host}:{port}"
    url = f"{scheme}://{netloc}{path}" + (f"?{query}" if query else "")
    return NormalizedUrl(url, scheme, host, port)


def normalize_url(text: str) -> str | None:
    """N(u) as text, or None when `text` is not a URL."""
    parsed = parse_url(text)
    return None if parsed is None else parsed.url


def _ip_is_routable(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_global and not (
        address.is_loopback
        or address.is_private
        or address.is_link_local
        or address.is_reserved
        or address.is_multicast
        or address.is_unspecified
    )


def is_routable_host(host: str) -> bool:
    """Whether a normalized host may be a public internet destination; no DNS lookup is made."""
    if host.startswith("[") and host.endswith("]"):
        try:
            return _ip_is_routable(ipaddress.IPv6Address(host[1:-1]))
        except ValueError:
            return False
    if _CANONICAL_IPV4.fullmatch(host):
        return _ip_is_routable(ipaddress.IPv4Address(host))
    labels = host.split(".")
    last = labels[-1]
    if len(labels) < 2 or last.isdigit() or last in _SPECIAL_LAST_LABELS:
        return False
    if host.endswith(".home.arpa") or host == "home.arpa":
        return False
    # Hex and short dotted forms (0x7f.1, 127.1, 017.0.0.1) are IPv4 addresses to some resolvers.
    return not all(_NUMERIC_LABEL.fullmatch(label) for label in labels)


def element_to_url(element: str) -> str | None:
    """A source array element as a normalized URL, or None when it names no URL (`LICENSE`, `git://`)."""
    _, separator, rest = element.partition("::")
    if separator:
        element = rest
    prefix = _VCS_PREFIX.match(element)
    if prefix is not None:
        element = element[prefix.end() :]
    return normalize_url(element)


def elements_to_urls(elements: Iterable[str]) -> tuple[str, ...]:
    """The distinct URLs among source elements, in first-seen order."""
    urls: dict[str, None] = {}
    for element in elements:
        url = element_to_url(element)
        if url is not None:
            urls.setdefault(url)
    return tuple(urls)

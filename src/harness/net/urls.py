"""The allowed origin, the check every request URL passes, and builders for safe paths and queries."""

from __future__ import annotations

import ipaddress
import re
import string
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote, unquote, urljoin, urlsplit

from harness.net.errors import ClientConfigError, RequestRefused

DEFAULT_PORT = 443

# RFC 3986 pchar plus "/" and "%"; anything else must arrive percent-encoded, so nothing is re-encoded here.
_PATH_CHARS = frozenset(string.ascii_letters + string.digits + "-._~!$&'()*+,;=:@/%")
# Query values may carry literal brackets (the AUR's `arg[]` key); IPv6 hosts use them too.
_URL_CHARS = _PATH_CHARS | frozenset("?[]")
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
# A lower-case DNS host name (urlsplit lower-cases hostname); pull/sources.py reads `--domain` with it too.
DNS_HOST = re.compile(r"[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?")


@dataclass(frozen=True)
class Origin:
    """One allowed origin: https, a host, a port and an optional path prefix without trailing slash."""

    host: str
    port: int
    prefix: str

    @property
    def root(self) -> str:
        """`https://host[:port]`, the key that request spacing is shared under."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"https://{host}" if self.port == DEFAULT_PORT else f"https://{host}:{self.port}"

    @property
    def base(self) -> str:
        """The root plus the prefix: what a request path is appended to."""
        return self.root + self.prefix


def parse_origin(text: str) -> Origin:
    """Parse `https://host[:port][/prefix]`; raise ClientConfigError("origin", ...) for anything else."""
    problem = _origin_problem(text)
    if problem:
        raise ClientConfigError("origin", f"{problem} (expected https://host[:port] with an optional path prefix)")
    parts = urlsplit(text)
    assert parts.hostname is not None
    return Origin(parts.hostname, parts.port or DEFAULT_PORT, parts.path.rstrip("/"))


def _origin_problem(text: str) -> str:
    if not isinstance(text, str) or not text:
        return "empty"
    if "#" in text or "?" in text:
        return "has a query or fragment"
    if any(c not in _URL_CHARS for c in text):
        return "has characters that are not percent-encoded"
    parts = urlsplit(text)
    if parts.scheme != "https":
        return "scheme is not https"
    if "@" in parts.netloc:
        return "has userinfo"
    if not _valid_host(parts.hostname):
        return "has no valid host"
    try:
        port = parts.port
    except ValueError:
        return "has an invalid port"
    if port == 0:
        return "has an invalid port"
    path = parts.path.rstrip("/")
    if path and (_path_problem(path) or "[" in path or "]" in path):
        return "has an invalid path prefix"
    return ""


def _valid_host(host: str | None) -> bool:
    if not host:
        return False
    if ":" in host:
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return False
        return True
    return DNS_HOST.fullmatch(host) is not None


def _path_problem(path: str) -> str:
    if not path.startswith("/"):
        return "path does not start with /"
    if _BAD_PERCENT.search(path):
        return "URL has a malformed percent escape"
    if any(unquote(segment) in (".", "..") for segment in path.split("/")):
        return "path has a dot segment"
    return ""


def display_url(url: str) -> str:
    """The URL for messages: no query, fragment or userinfo, one printable line."""
    cut = re.split(r"[?#]", url, maxsplit=1)[0]
    cut = re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/]*@", r"\1", cut)
    return "".join(c if c.isascii() and c.isprintable() and c != " " else quote(c, safe="") for c in cut)


def resolve(origin: Origin, path_and_query: str) -> str:
    """A path (`/...`, relative to the origin's base) or an absolute URL, checked: see check_url."""
    if path_and_query.startswith("/"):
        return check_url(origin, origin.base + path_and_query)
    if "://" not in path_and_query:
        raise RequestRefused(display_url(path_and_query), "not a path starting with / or an https URL")
    return check_url(origin, path_and_query)


def check_url(origin: Origin, url: str) -> str:
    """Return the URL rebuilt from its checked parts, or raise RequestRefused naming why it is outside the origin."""
    problem = _url_problem(origin, url)
    if problem:
        raise RequestRefused(display_url(url), problem)
    parts = urlsplit(url)
    path = parts.path or "/"
    return origin.root + path + (f"?{parts.query}" if parts.query else "")


def _url_problem(origin: Origin, url: str) -> str:
    if "#" in url:
        return "URL has a fragment"
    if any(c not in _URL_CHARS for c in url):
        return "URL has characters that are not percent-encoded"
    parts = urlsplit(url)
    if parts.scheme != "https":
        return "scheme is not https"
    if "@" in parts.netloc:
        return "URL has userinfo"
    if parts.hostname != origin.host:
        return f"host is not {origin.host}"
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError:
        return "URL has an invalid port"
    if port != origin.port:
        return f"port is not {origin.port}"
    path = parts.path or "/"
    if "[" in path or "]" in path:
        return "URL has characters that are not percent-encoded"
    problem = _path_problem(path)
    if problem:
        return problem
    if _BAD_PERCENT.search(parts.query):
        return "URL has a malformed percent escape"
    if origin.prefix and path != origin.prefix and not path.startswith(origin.prefix + "/"):
        return f"path is outside the allowed prefix {origin.prefix}"
    return ""


def resolve_redirect(origin: Origin, request_url: str, location: str) -> str | None:
    """The absolute target of a Location header when it stays on the origin and prefix, else None."""
    if not location or any(c not in _URL_CHARS for c in location) or "#" in location:
        return None
    try:
        return check_url(origin, urljoin(request_url, location))
    except RequestRefused:
        return None


def build_path(segments: Iterable[str]) -> str:
    """`/a/b` from validated segments, each percent-encoded with no safe characters."""
    encoded = []
    for segment in segments:
        if segment in ("", ".", ".."):
            raise ValueError(f"path segment {segment!r} is empty or a dot segment")
        encoded.append(quote(segment, safe=""))
    if not encoded:
        raise ValueError("a path needs at least one segment")
    return "/" + "/".join(encoded)


def build_query(pairs: Iterable[tuple[str, str]]) -> str:
    """`?k=v&...` (or "" for no pairs): values fully percent-encoded, keys keep literal brackets (`arg[]`)."""
    items = [f"{quote(key, safe='[]')}={quote(value, safe='')}" for key, value in pairs]
    return "?" + "&".join(items) if items else ""

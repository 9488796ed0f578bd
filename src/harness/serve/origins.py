"""Which Host and Origin header values a bind accepts (pure functions; the ASGI guard applies them).

The MCP streamable HTTP transport must validate Origin to stop DNS rebinding: a page on a foreign site
that resolves its own name to this server's address sends that foreign name as Host and its own Origin.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 in any spelling (bracketed or not) and localhost."""
    name = host.strip("[]").lower().rstrip(".")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def split_host(value: str) -> tuple[str, int | None] | None:
    """`name[:port]` or `[v6][:port]` as (lowercase name without brackets, port); None when malformed."""
    parts = urlsplit(f"//{value}")
    try:
        port = parts.port
    except ValueError:
        return None
    name = parts.hostname
    if not name or parts.username is not None or parts.password is not None or parts.path or parts.query:
        return None
    if value.endswith(":") or any(c.isspace() for c in value):
        return None
    return name.lower(), port


def split_origin(value: str) -> tuple[str, str, int] | None:
    """`scheme://host[:port]` as (scheme, host, port with the scheme's default filled); None when not one."""
    parts = urlsplit(value)
    if parts.scheme not in DEFAULT_PORTS or parts.path or parts.query or parts.fragment or value.endswith(("?", "#")):
        return None
    host = split_host(parts.netloc)
    if host is None:
        return None
    name, port = host
    return parts.scheme, name, DEFAULT_PORTS[parts.scheme] if port is None else port


def check_allowed_host(value: str) -> str:
    """A `[serve] allowed_hosts` entry: `name` (any port) or `name:port`; returned lowercase."""
    if split_host(value) is None:
        raise ValueError(f"expected host or host:port, got {value!r}")
    return value.lower()


def check_allowed_origin(value: str) -> str:
    """A `[serve] allowed_origins` entry: `http(s)://host[:port]`; returned in its canonical form."""
    origin = split_origin(value)
    if origin is None:
        raise ValueError(f"expected scheme://host[:port] (http or https, no path), got {value!r}")
    return format_origin(origin)


def format_origin(origin: tuple[str, str, int]) -> str:
    scheme, name, port = origin
    shown = f"[{name}]" if ":" in name else name
    return f"{scheme}://{shown}" if DEFAULT_PORTS[scheme] == port else f"{scheme}://{shown}:{port}"


@dataclass(frozen=True)
class HostPolicy:
    """What one bind accepts: loopback binds only loopback names; other binds only the configured lists.

    An absent Origin is accepted on every bind (agents and CLIs send none); a present one must be allowed.
    """

    loopback: bool
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()

    def host_allowed(self, value: str) -> bool:
        host = split_host(value)
        if host is None:
            return False
        name, port = host
        if self.loopback:
            return is_loopback(name)
        for entry in self.allowed_hosts:
            allowed = split_host(entry)
            if allowed is not None and allowed[0] == name and (allowed[1] is None or allowed[1] == port):
                return True
        return False

    def origin_allowed(self, value: str | None) -> bool:
        if value is None:
            return True
        origin = split_origin(value)
        if origin is None:
            return False
        if self.loopback:
            return is_loopback(origin[1])
        return format_origin(origin) in self.allowed_origins

    def refusal(self, host: str | None, origin: str | None) -> str:
        """Empty when the request may proceed, else which header is refused."""
        if host is None or not self.host_allowed(host):
            return "Host"
        if not self.origin_allowed(origin):
            return "Origin"
        return ""

"""The `Link` response header (RFC 8288) as both APIs send it: `<url>; rel="next", <url>; rel="self"`."""

from __future__ import annotations

import re

_LINK = re.compile(r'<([^<>]*)>((?:\s*;\s*[A-Za-z*-]+\s*=\s*(?:"[^"]*"|[^;,\s]*))*)')
_REL = re.compile(r'(?i)\brel\s*=\s*(?:"([^"]*)"|([^;,\s]+))')


def next_link(header: str) -> str:
    """The target of the link whose rel includes `next`, or "" when there is none."""
    for match in _LINK.finditer(header):
        rel = _REL.search(match.group(2))
        if rel is not None and "next" in (rel.group(1) or rel.group(2) or "").lower().split():
            return match.group(1).strip()
    return ""

"""The two pulled APIs as data: endpoint, first query, cursor key, adapter and rate-limit reset header."""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.errors import InvalidInput
from harness.net import build_path, build_query
from harness.net.urls import DNS_HOST
from harness.text.sanitize import echo

PAGE_SIZE = 100
_ORG = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,98}[A-Za-z0-9])?")
_DOMAIN = re.compile(DNS_HOST.pattern + r"(?::[0-9]{1,5})?")


@dataclass(frozen=True)
class Source:
    """One pull target. `endpoint` is relative to the client's origin; every next link must stay on it."""

    name: str
    format_name: str
    key: str
    endpoint: str
    fixed_query: tuple[tuple[str, str], ...]
    since_key: str
    since_template: str
    reset_header: str
    token_name: str

    def first_path(self, since: str) -> str:
        """The first page: the endpoint with its fixed query and, when known, where to start."""
        pairs = list(self.fixed_query)
        if since:
            pairs.append((self.since_key, self.since_template.format(since=since)))
        return self.endpoint + build_query(pairs)


def github_audit_source(org: str) -> Source:
    """`GET /orgs/{org}/audit-log`, oldest first, so a cursor always moves forward in time."""
    if _ORG.fullmatch(org) is None:
        raise InvalidInput(f"--org: must be a GitHub organization name (letters, digits, hyphens), got {echo(org)}")
    return Source(
        name="github-audit",
        format_name="github-audit",
        key=f"github-audit-{org.lower()}",
        endpoint=build_path(["orgs", org, "audit-log"]),
        fixed_query=(("per_page", str(PAGE_SIZE)), ("order", "asc")),
        since_key="phrase",
        since_template="created:>={since}",
        reset_header="x-ratelimit-reset",
        token_name="GITHUB_TOKEN",
    )


def okta_domain(domain: str) -> str:
    """The validated `--domain` (`example.okta.com`, or `host:port`), lowercased."""
    value = domain.strip().lower()
    port = value.rpartition(":")[2] if ":" in value else ""
    if _DOMAIN.fullmatch(value) is None or (port and not 0 < int(port) < 65536):
        raise InvalidInput(f"--domain: must be an Okta host name such as example.okta.com, got {echo(domain)}")
    return value


def okta_source(domain: str) -> Source:
    """`GET /api/v1/logs` on `https://<domain>`: ascending from `since`, paginated by `Link: rel="next"`."""
    return Source(
        name="okta",
        format_name="okta",
        key="okta-" + okta_domain(domain).replace(":", "_"),
        endpoint="/api/v1/logs",
        fixed_query=(("limit", str(PAGE_SIZE)),),
        since_key="since",
        since_template="{since}",
        reset_header="x-rate-limit-reset",
        token_name="OKTA_API_TOKEN",
    )

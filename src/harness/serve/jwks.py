"""The issuer's signing keys: discovered, fetched through the guarded client, cached, refetched on an unknown kid."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import jwt

from harness.net import GuardedClient, NetError
from harness.serve.settings import ServeSettings

log = logging.getLogger("harness.serve")

JWKS_BODY_CAP = 256 * 1024
# An unknown kid refetches the key set at most this often, so random kids cannot make the server hammer the issuer.
REFETCH_INTERVAL_S = 2.0


@dataclass(frozen=True)
class SigningKey:
    """One issuer key and the alg its JWK declares (empty when it declares none)."""

    key: Any
    alg: str
    kty: str


class KeyUnavailable(Exception):
    """No usable key for a token (unknown kid after a refetch, or the key set cannot be fetched)."""


def _client(url: str, ca_file: str) -> GuardedClient:
    parts = urlsplit(url)
    return GuardedClient(
        origin=f"{parts.scheme}://{parts.netloc}",
        ca_file=ca_file or None,
        connect_timeout_s=5,
        read_timeout_s=5,
        deadline_s=10,
        max_body_bytes=JWKS_BODY_CAP,
        follow_redirects="never",
        headers={"Accept": "application/json"},
    )


def _path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "") or "/"


def _get_json(url: str, ca_file: str) -> Any:
    with _client(url, ca_file) as client:
        response = client.get(_path(url))
    if response.status != 200:
        raise KeyUnavailable(f"{url} answered {response.status}")
    try:
        return json.loads(response.body)
    except ValueError:
        raise KeyUnavailable(f"{url} is not JSON") from None


def metadata_urls(issuer: str) -> list[str]:
    """Where the issuer's metadata lives: RFC 8414 (well-known before the issuer's path), then OpenID Connect."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    base = f"{parts.scheme}://{parts.netloc}"
    return [f"{base}/.well-known/oauth-authorization-server{path}", f"{base}{path}/.well-known/openid-configuration"]


def discover_jwks_url(issuer: str, ca_file: str) -> str:
    """The jwks_uri of the issuer's metadata, which must name the configured issuer exactly."""
    problems = []
    for url in metadata_urls(issuer):
        try:
            document = _get_json(url, ca_file)
        except (KeyUnavailable, NetError) as exc:
            problems.append(str(exc))
            continue
        if not isinstance(document, dict) or document.get("issuer") != issuer:
            problems.append(f"{url} does not name the issuer {issuer}")
            continue
        jwks_uri = document.get("jwks_uri")
        if not isinstance(jwks_uri, str) or urlsplit(jwks_uri).scheme != "https":
            problems.append(f"{url} has no https jwks_uri")
            continue
        return jwks_uri
    raise KeyUnavailable("issuer metadata unusable: " + "; ".join(problems))


class JwksCache:
    """Signing keys by kid; thread-safe; a miss refetches (rate-limited) so a rotated key is picked up."""

    def __init__(self, settings: ServeSettings, *, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._issuer = settings.issuer
        self._jwks_url = settings.jwks_url
        self._ca_file = settings.ca_file
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._keys: dict[str, SigningKey] = {}
        self._fetched_at: float | None = None

    def key(self, kid: str) -> SigningKey:
        """The key with this kid; raises KeyUnavailable."""
        # A known kid never waits behind a refetch: the set is replaced whole, never changed in place.
        found = self._keys.get(kid)
        if found is not None:
            return found
        with self._lock:
            found = self._keys.get(kid)
            if found is not None:
                return found
            now = self._monotonic()
            if self._fetched_at is None or now - self._fetched_at >= REFETCH_INTERVAL_S:
                self._fetched_at = now
                self._keys = self._fetch()
            found = self._keys.get(kid)
        if found is None:
            raise KeyUnavailable(f"no key with kid {kid!r} in the issuer's key set")
        return found

    def _fetch(self) -> dict[str, SigningKey]:
        try:
            url = self._jwks_url or discover_jwks_url(self._issuer, self._ca_file)
            document = _get_json(url, self._ca_file)
        except (KeyUnavailable, NetError) as exc:
            log.warning("JWKS fetch failed: %s", exc)
            return self._keys
        keys: dict[str, SigningKey] = {}
        for entry in document.get("keys", []) if isinstance(document, dict) else []:
            if not isinstance(entry, dict) or not isinstance(entry.get("kid"), str) or entry.get("use", "sig") != "sig":
                continue
            # A symmetric key in a public key set is never a signing key of the issuer's.
            if entry.get("kty") not in ("RSA", "EC", "OKP"):
                continue
            try:
                keys[entry["kid"]] = SigningKey(jwt.PyJWK.from_dict(entry).key, str(entry.get("alg", "")), entry["kty"])
            except (jwt.PyJWKError, jwt.InvalidKeyError):
                log.warning("JWKS: key %r skipped: unsupported or malformed", entry["kid"])
        return keys

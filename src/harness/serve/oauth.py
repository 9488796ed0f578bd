"""OAuth 2.1 resource-server mode: JWT access tokens verified against the issuer's JWKS (the SDK's
TokenVerifier seam; the SDK's middleware answers 401 with WWW-Authenticate and serves RFC 9728 metadata)."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import jwt
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings

from harness.serve.jwks import JwksCache, KeyUnavailable
from harness.serve.settings import TOKEN_LEEWAY_S, ServeSettings

log = logging.getLogger("harness.serve")

# Asymmetric algorithms only, each with the key type it needs: "none" and the HMAC family are refused
# whatever the token's header says, and a key is used only with an algorithm of its own type.
ALGORITHM_KEY_TYPES = {
    "RS256": "RSA", "RS384": "RSA", "RS512": "RSA", "PS256": "RSA", "PS384": "RSA", "PS512": "RSA",
    "ES256": "EC", "ES384": "EC", "ES512": "EC", "EdDSA": "OKP",
}
REQUIRED_CLAIMS = ["exp", "iss", "aud", "sub"]


def token_scopes(claims: dict[str, Any]) -> list[str]:
    """`scope` (a space-separated string, RFC 9068 and RFC 8693) or `scp` (an array, a common variant)."""
    scope = claims.get("scope")
    if isinstance(scope, str):
        return scope.split()
    scp = claims.get("scp")
    if isinstance(scp, list):
        return [s for s in scp if isinstance(s, str)]
    return []


class JwtVerifier:
    """Verifies a bearer JWT: an allowed asymmetric alg, a key of the issuer by kid, signature, issuer,
    audience (this resource, RFC 8707), exp and nbf within TOKEN_LEEWAY_S. Any failure is None (401)."""

    def __init__(self, settings: ServeSettings, keys: JwksCache | None = None) -> None:
        self._settings = settings
        self._keys = keys or JwksCache(settings)

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            return await anyio.to_thread.run_sync(self._verify, token)
        except (jwt.PyJWTError, KeyUnavailable, ValueError, TypeError) as exc:
            log.info("access token refused: %s", exc)
            return None

    def _verify(self, token: str) -> AccessToken:
        header = jwt.get_unverified_header(token)
        algorithm = header.get("alg")
        if algorithm not in ALGORITHM_KEY_TYPES:
            raise ValueError(f"alg {algorithm!r} is not an allowed asymmetric algorithm")
        kid = header.get("kid")
        if not isinstance(kid, str) or not kid:
            raise ValueError("the token header names no kid")
        key = self._keys.key(kid)
        if (key.alg and key.alg != algorithm) or key.kty != ALGORITHM_KEY_TYPES[algorithm]:
            raise ValueError(f"key {kid!r} ({key.kty} {key.alg}) does not fit alg {algorithm}")
        claims = jwt.decode(
            token,
            key.key,
            algorithms=[algorithm],
            audience=self._settings.audience,
            issuer=self._settings.issuer,
            leeway=TOKEN_LEEWAY_S,
            options={"require": REQUIRED_CLAIMS, "verify_nbf": True},
        )
        client_id = claims.get("client_id") or claims.get("azp") or ""
        return AccessToken(
            token=token,
            client_id=str(client_id),
            scopes=token_scopes(claims),
            # The SDK's backend refuses a token past expires_at with no leeway of its own: the leeway goes here.
            expires_at=int(claims["exp"]) + TOKEN_LEEWAY_S,
            resource=self._settings.audience,
            subject=str(claims["sub"]),
            claims={"iss": claims["iss"]},
        )


def auth_settings(settings: ServeSettings) -> AuthSettings:
    """The SDK's resource-server settings: metadata at /.well-known/oauth-protected-resource{audience path}."""
    return AuthSettings(
        issuer_url=settings.issuer,
        resource_server_url=settings.audience,
        # The audience is checked by JwtVerifier against the token's aud claim itself.
        validate_token_resource=False,
    )

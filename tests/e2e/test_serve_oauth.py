"""OAuth resource-server mode of a real `harness serve --http`, driven by the SDK's streamable HTTP client.

The issuer is a loopback HTTPS server (trustme) serving RFC 8414 metadata and a JWKS with real RS256 and
ES256 keys; tokens are signed with PyJWT. Every token the server must refuse is a 401 whose
WWW-Authenticate names the RFC 9728 metadata."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import jwt
import pytest
import trustme
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from procs import clean_env, free_port, harness_argv, wait_for_port

from tests.net.https_server import HttpsServer, Recorded, Reply

pytestmark = pytest.mark.anyio

ALL_SCOPES = "harness:investigate harness:triage"
INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "e2e", "version": "1"}},
}
ACCEPT = {"accept": "application/json, text/event-stream"}


@dataclass
class SigningKey:
    kid: str
    alg: str
    private: Any

    def jwk(self) -> dict[str, Any]:
        algorithm = jwt.algorithms.RSAAlgorithm if self.alg == "RS256" else jwt.algorithms.ECAlgorithm
        return {**json.loads(algorithm.to_jwk(self.private.public_key())), "kid": self.kid, "use": "sig"}


class Issuer:
    """A loopback authorization server: metadata, a JWKS whose keys the test changes, and a token minter."""

    def __init__(self, server: HttpsServer) -> None:
        self.server = server
        self.issuer = server.origin
        self.rsa = SigningKey("rsa-1", "RS256", rsa.generate_private_key(public_exponent=65537, key_size=2048))
        self.ec = SigningKey("ec-1", "ES256", ec.generate_private_key(ec.SECP256R1()))
        self.published = [self.rsa, self.ec]
        metadata = {"issuer": self.issuer, "jwks_uri": server.url("/jwks"), "response_types_supported": ["code"]}
        json_type = [("Content-Type", "application/json")]
        server.script("/.well-known/oauth-authorization-server", Reply(200, json_type, json.dumps(metadata).encode()))
        server.script("/jwks", self._jwks)

    def _jwks(self, request: Recorded) -> Reply:
        body = json.dumps({"keys": [key.jwk() for key in self.published]}).encode()
        return Reply(200, [("Content-Type", "application/json")], body)

    def jwks_fetches(self) -> int:
        return sum(1 for target in self.server.targets() if target == "/jwks")

    def token(self, audience: str, key: SigningKey | None = None, **claims: Any) -> str:
        key = key or self.rsa
        now = int(time.time())
        body = {"iss": self.issuer, "aud": audience, "sub": "alice@example.test", "client_id": "agent-7",
                "scope": ALL_SCOPES, "iat": now, "exp": now + 300, **claims}
        body = {name: value for name, value in body.items() if value is not None}
        return jwt.encode(body, key.private, algorithm=key.alg, headers={"kid": key.kid})


@dataclass
class Served:
    url: str
    audience: str
    workspace: Path
    issuer: Issuer
    proc: subprocess.Popen

    def post(self, token: str | None, scheme: str = "Bearer") -> httpx2.Response:
        headers = {**ACCEPT, **({"authorization": f"{scheme} {token}"} if token is not None else {})}
        return httpx2.post(self.url, json=INITIALIZE, headers=headers)

    def client(self, token: str, timeout_s: float = 5.0) -> Client:
        http = httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}, timeout=timeout_s)
        return Client(streamable_http_client(self.url, http_client=http), mode="legacy")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    workspace = tmp_path_factory.mktemp("oauth-ws")
    with HttpsServer(trustme.CA()) as https:
        issuer = Issuer(https)
        port = free_port()
        audience = f"http://127.0.0.1:{port}/mcp"
        (workspace / "harness.toml").write_text(
            f'[serve]\nauth = "oauth"\nissuer = "{issuer.issuer}"\naudience = "{audience}"\n'
            f'ca_file = "{https.ca_file}"\n'
        )
        argv = harness_argv("--workspace", str(workspace), "serve", "--http", f"127.0.0.1:{port}", test_registry=True)
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env())
        try:
            wait_for_port(port, proc)
            yield Served(audience, audience, workspace, issuer, proc)
        finally:
            proc.terminate()
            _, err = proc.communicate(timeout=10)
    assert "Traceback" not in err
    # Refused tokens are log lines without the token.
    assert "eyJ" not in err


@pytest.mark.parametrize("which", ["rsa", "ec"])
async def test_a_valid_token_reaches_the_tools_through_the_sdk_client(served: Served, which: str) -> None:
    key = getattr(served.issuer, which)
    async with served.client(served.issuer.token(served.audience, key)) as client:
        tools = (await client.list_tools()).tools
        result = await client.call_tool("test_echo", {"required_name": which})
    assert {tool.name for tool in tools} == {"test_echo", "test_fail", "test_big"}
    assert not result.is_error and json.loads(result.content[0].text)["name"] == which


def test_no_token_is_401_naming_the_protected_resource_metadata(served: Served) -> None:
    reply = served.post(None)
    assert reply.status_code == 401
    challenge = reply.headers["www-authenticate"]
    metadata_url = served.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
    assert challenge.startswith("Bearer ") and f'resource_metadata="{metadata_url}"' in challenge
    metadata = httpx2.get(metadata_url).json()
    assert metadata["resource"] == served.audience
    assert metadata["authorization_servers"] == [served.issuer.issuer]


def _refused_tokens(issuer: Issuer, audience: str) -> dict[str, str]:
    now = int(time.time())
    good = issuer.token(audience)
    header, payload, signature = good.split(".")
    tampered_payload = jwt.utils.base64url_encode(
        json.dumps({**jwt.decode(good, options={"verify_signature": False}), "sub": "mallory"}).encode()
    ).decode()
    public_pem = issuer.rsa.private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    unsigned = jwt.encode(
        {"iss": issuer.issuer, "aud": audience, "sub": "x", "exp": now + 300}, None, algorithm="none",
        headers={"kid": issuer.rsa.kid},
    )
    stranger = SigningKey("rsa-1", "RS256", rsa.generate_private_key(public_exponent=65537, key_size=2048))
    return {
        "wrong audience": issuer.token("http://127.0.0.1:1/mcp"),
        "audience of another resource on this host": issuer.token(audience + "/other"),
        "wrong issuer": issuer.token(audience, iss="https://issuer.evil.test"),
        "expired beyond the leeway": issuer.token(audience, iat=now - 600, exp=now - 120),
        "not yet valid beyond the leeway": issuer.token(audience, nbf=now + 120),
        "no exp": issuer.token(audience, exp=None),
        "no sub": issuer.token(audience, sub=None),
        "unknown kid": issuer.token(audience, SigningKey("nope", "RS256", issuer.rsa.private)),
        "signed by another key under a known kid": issuer.token(audience, stranger),
        "tampered payload": f"{header}.{tampered_payload}.{signature}",
        "tampered signature": f"{header}.{payload}.{signature[:-4]}{'AAAA' if signature[-4:] != 'AAAA' else 'BBBB'}",
        "alg none": unsigned,
        "HS256 keyed with the public key": _hmac_token(issuer, audience, public_pem),
        "RS256 header on the EC key": _retagged(issuer.token(audience, issuer.ec), "RS256"),
        "not a JWT": "not-a-jwt",
    }


def _hmac_token(issuer: Issuer, audience: str, secret: bytes) -> str:
    """An HS256 token keyed with the RSA public key (the classic alg-confusion forgery), built by hand since
    PyJWT itself refuses to use a PEM public key as an HMAC secret."""
    import hashlib
    import hmac

    encode = jwt.utils.base64url_encode
    header = encode(json.dumps({"alg": "HS256", "typ": "JWT", "kid": issuer.rsa.kid}).encode())
    claims = {"iss": issuer.issuer, "aud": audience, "sub": "x", "exp": int(time.time()) + 300}
    payload = encode(json.dumps(claims).encode())
    signature = encode(hmac.new(secret, header + b"." + payload, hashlib.sha256).digest())
    return (header + b"." + payload + b"." + signature).decode()


def _retagged(token: str, alg: str) -> str:
    header, payload, signature = token.split(".")
    fields = json.loads(jwt.utils.base64url_decode(header))
    retagged = jwt.utils.base64url_encode(json.dumps({**fields, "alg": alg}).encode()).decode()
    return ".".join([retagged, payload, signature])


def test_every_bad_token_is_401(served: Served) -> None:
    for name, token in _refused_tokens(served.issuer, served.audience).items():
        reply = served.post(token)
        assert reply.status_code == 401, name
        assert "resource_metadata=" in reply.headers["www-authenticate"], name
    # The same tokens' good twin passes, in any case of the scheme.
    assert served.post(served.issuer.token(served.audience), scheme="bearer").status_code == 200


def test_exp_and_nbf_have_a_small_leeway(served: Served) -> None:
    now = int(time.time())
    assert served.post(served.issuer.token(served.audience, iat=now - 600, exp=now - 10)).status_code == 200
    assert served.post(served.issuer.token(served.audience, nbf=now + 10)).status_code == 200


def test_a_rotated_key_is_fetched_on_its_unknown_kid(served: Served) -> None:
    issuer = served.issuer
    assert served.post(issuer.token(served.audience)).status_code == 200
    before = issuer.jwks_fetches()
    rotated = SigningKey("rsa-2", "RS256", rsa.generate_private_key(public_exponent=65537, key_size=2048))
    issuer.published = [rotated, issuer.ec]
    time.sleep(2.1)  # past the refetch interval the unknown-kid test may have started
    assert served.post(issuer.token(served.audience, rotated)).status_code == 200
    assert issuer.jwks_fetches() == before + 1
    # Cached: known kids do not refetch.
    assert served.post(issuer.token(served.audience, rotated)).status_code == 200
    assert issuer.jwks_fetches() == before + 1
    # The retired key left the cache with that refetch: its tokens are refused now.
    assert served.post(issuer.token(served.audience, issuer.rsa)).status_code == 401
    issuer.published = [issuer.rsa, rotated, issuer.ec]
    time.sleep(2.1)


async def test_a_tool_outside_the_token_scopes_is_a_refused_tool_error(served: Served) -> None:
    token = served.issuer.token(served.audience, scope="harness:triage")
    async with served.client(token) as client:
        refused = await client.call_tool("test_echo", {"required_name": "n"})
        allowed = await client.call_tool("test_fail", {"code": "not_found"})
    assert refused.is_error
    error = json.loads(refused.content[0].text)["error"]
    assert error["code"] == "refused" and "harness:investigate" in error["message"]
    assert json.loads(allowed.content[0].text)["error"]["code"] == "not_found"
    argv = harness_argv("--workspace", str(served.workspace), "ledger", "list", "--tool", "test_echo",
                        "--status", "error", test_registry=True)
    listed = json.loads(subprocess.run(argv, capture_output=True, text=True, env=clean_env(), timeout=30).stdout)
    assert any("refused" in json.dumps(entry) for entry in listed["calls"]), listed


def test_serve_check_shows_the_oauth_settings(served: Served) -> None:
    argv = harness_argv("--workspace", str(served.workspace), "serve", "--check", "--http", "127.0.0.1:8765",
                        test_registry=True)
    proc = subprocess.run(argv, capture_output=True, text=True, env=clean_env(), timeout=30)
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and report["ok"] is True
    assert report["serve"]["auth"] == {
        "mode": "oauth", "bearer_token_set": False, "issuer": served.issuer.issuer, "audience": served.audience,
        "jwks_url": "(from the issuer's metadata)", "leeway_s": 30,
    }


def _harness_json(workspace: Path, *args: str) -> dict[str, Any]:
    argv = harness_argv("--workspace", str(workspace), *args, test_registry=True)
    return json.loads(subprocess.run(argv, capture_output=True, text=True, env=clean_env(), timeout=30).stdout)


async def test_the_token_principal_is_in_every_row_and_filterable(served: Served) -> None:
    token = served.issuer.token(served.audience, sub="bob@example.test", client_id="agent-9")
    conversation = "oauth-principal-demo"
    async with served.client(token) as client:
        await client.call_tool("test_echo", {"required_name": "p"}, meta={"harness/conversation_id": conversation})
    listed = _harness_json(served.workspace, "ledger", "list", "--principal", "bob@example.test")
    assert [(c["tool_name"], c["principal"], c["conversation_id"]) for c in listed["calls"]] == [
        ("test_echo", "bob@example.test", conversation)
    ]
    assert _harness_json(served.workspace, "ledger", "list", "--principal", "nobody")["calls"] == []
    rows = _harness_json(served.workspace, "ledger", "show", conversation)["rows"]
    assert [row["event"] for row in rows] == ["start", "end"]
    for row in rows:
        caller = row["meta"]["caller"]
        assert caller["peer"].startswith("127.0.0.1:")
        assert {**caller, "peer": ""} == {
            "principal": "bob@example.test", "auth_method": "oauth", "client_id": "agent-9",
            "scopes": ["harness:investigate", "harness:triage"], "peer": "",
        }
    assert _harness_json(served.workspace, "ledger", "verify")["ok"] is True


async def test_an_initialize_flood_from_one_principal_leaves_others_able_to_work(served: Served) -> None:
    flooder = served.issuer.token(served.audience, sub="flooder@example.test")
    started = time.monotonic()
    answers = [served.post(flooder) for _ in range(15)]
    # sessions_per_minute = 30 puts one place back every 2 s: a slow machine may see that many more opens.
    refilled = int((time.monotonic() - started) / 2)
    statuses = [a.status_code for a in answers]
    assert statuses[:10] == [200] * 10  # session_burst = 10 by default
    assert set(statuses[10:]) <= {200, 429} and statuses[10:].count(200) <= refilled, statuses
    refused = next(a for a in answers[10:] if a.status_code == 429)
    assert int(refused.headers["retry-after"]) >= 1 and refused.json()["error"].startswith("too many new sessions")
    async with served.client(served.issuer.token(served.audience, sub="carol@example.test")) as client:
        result = await client.call_tool("test_echo", {"required_name": "still here"})
    assert not result.is_error


def test_the_ledger_view_needs_a_token_with_the_ledger_scope(served: Served) -> None:
    view = served.url.replace("/mcp", "/ui/")
    metadata_url = served.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
    reply = httpx2.get(view)
    assert reply.status_code == 401 and f'resource_metadata="{metadata_url}"' in reply.headers["www-authenticate"]
    tools_only = served.issuer.token(served.audience)  # investigate and triage, not the ledger
    reply = httpx2.get(view, headers={"authorization": f"Bearer {tools_only}"})
    assert reply.status_code == 403
    assert 'error="insufficient_scope", scope="harness:ledger:read"' in reply.headers["www-authenticate"]
    reader = served.issuer.token(served.audience, scope="harness:ledger:read")
    reply = httpx2.get(view, headers={"authorization": f"Bearer {reader}"})
    assert reply.status_code == 200 and "<h1>Conversations</h1>" in reply.text
    assert reply.headers["content-security-policy"].startswith("default-src 'none'")
    # The ledger scope opens the view, not the tools.
    assert served.post(reader).status_code == 200  # initialize needs no toolset

FLOOD_S = 30
# Principals beside the flooder, used in turn so that none of them reaches its own session rate.
OTHERS = [f"worker-{n}@example.test" for n in range(6)]


@pytest.mark.slow
async def test_a_30_s_initialize_flood_leaves_other_principals_working_during_and_after(served: Served) -> None:
    flooder = served.issuer.token(served.audience, sub="flood-30@example.test")
    statuses: list[int] = []
    flooding = True
    done_during: list[str] = []
    done: list[str] = []

    async def flood() -> None:
        headers = {**ACCEPT, "authorization": f"Bearer {flooder}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            while flooding:
                statuses.append((await http.post(served.url, json=INITIALIZE)).status_code)

    async def work(principal: str) -> None:
        token = served.issuer.token(served.audience, sub=principal, client_id="flood-bystander")
        async with served.client(token, timeout_s=60) as client:
            result = await client.call_tool("test_echo", {"required_name": principal})
        assert not result.is_error, result.content[0].text
        assert json.loads(result.content[0].text)["name"] == principal
        done.append(principal)

    async def stop_after_flood() -> None:
        nonlocal flooding
        await anyio.sleep(FLOOD_S)
        flooding = False

    async def bystanders() -> None:
        turn = 0
        while flooding:
            principal = OTHERS[turn % len(OTHERS)]
            await work(principal)
            if flooding:
                done_during.append(principal)
            turn += 1
            await anyio.sleep(0.5)

    async with anyio.create_task_group() as tg:
        tg.start_soon(stop_after_flood)
        for _ in range(4):
            tg.start_soon(flood)
        tg.start_soon(bystanders)
    # The flood was refused, not served: a few sessions (at most max_sessions_per_caller, 20), then 429s.
    assert set(statuses) == {200, 429}, sorted(set(statuses))
    assert statuses.count(200) <= 20 < statuses.count(429), (statuses.count(200), statuses.count(429))
    # Other principals opened sessions and called tools while it lasted, and still do once it is over.
    assert len(done_during) >= len(OTHERS), done_during
    await work("after-the-flood@example.test")
    for principal in [*OTHERS, "after-the-flood@example.test"]:
        listed = _harness_json(served.workspace, "ledger", "list", "--principal", principal)
        assert [c["tool_name"] for c in listed["calls"]] == ["test_echo"] * done.count(principal), principal

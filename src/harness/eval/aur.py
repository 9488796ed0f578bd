"""The loopback AUR of an eval pass (docs/eval.md, "AUR triage scenarios"): a small HTTPS server on 127.0.0.1 that
serves a scenario's AUR fixture in the two request forms the read-only AUR client makes (docs/triage.md §5), with a
certificate from a CA made for this one pass.

The scenario's workspace gets `[aur] base_url` and `[aur] ca_file` (the CA written into the workspace), so the real
`harness serve` reaches this server through the guarded HTTP client with verification on, as it would reach
aur.archlinux.org. The server only reads the fixture it was given; it never touches the network.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import ssl
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from harness.aur.client import PLAIN_PREFIX, RPC_PATH
from harness.config import CONFIG_NAME
from harness.eval.scenario import AurFixture

CA_FILE = "aur-ca.pem"
PLAIN_PATH = "/" + "/".join(PLAIN_PREFIX) + "/"
EMPTY_RPC = {"resultcount": 0, "results": [], "type": "multiinfo", "version": 5}
# A pass's certificates live minutes; a day of validity leaves room for a slow machine and a skewed clock.
VALIDITY = datetime.timedelta(days=1)


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def make_certificates(directory: Path) -> tuple[Path, ssl.SSLContext]:
    """A fresh CA (its PEM written to `directory`) and a server context whose certificate it issued for 127.0.0.1."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("triage-harness eval AUR CA"))
        .issuer_name(_name("triage-harness eval AUR CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                                     key_encipherment=False, data_encipherment=False, key_agreement=False,
                                     encipher_only=False, decipher_only=False), critical=True)
        .add_extension(ca_ski, critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(_name("127.0.0.1"))
        .issuer_name(ca.subject)
        .public_key(leaf_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    ca_path = directory / CA_FILE
    ca_path.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    chain = directory / "server.pem"
    chain.write_bytes(
        leaf_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                               serialization.NoEncryption())
        + leaf.public_bytes(serialization.Encoding.PEM)
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(chain)
    return ca_path, context


def rpc_reply(fixture: AurFixture, names: list[str]) -> dict[str, Any]:
    """The RPC v5 multiinfo reply for `arg[]` values: one record per fixture package asked for."""
    records = [
        {"Name": package.name, "PackageBase": package.pkgbase or package.name, "Version": package.version}
        for name in names
        for package in fixture.packages
        if package.name == name and package.on_rpc
    ]
    return {**EMPTY_RPC, "resultcount": len(records), "results": records}


def plain_file(fixture: AurFixture, file: str, query: dict[str, list[str]]) -> bytes | None:
    """A file of a package base at a commit (a unique prefix of the commit names it, as cgit allows), else None."""
    bases, commits = query.get("h", []), query.get("id", [])
    if len(bases) != 1 or len(commits) != 1 or not commits[0]:
        return None
    for package in fixture.packages:
        if (package.pkgbase or package.name) != bases[0]:
            continue
        matches = [commit for commit in package.files if commit.startswith(commits[0])]
        if len(matches) == 1 and file in package.files[matches[0]]:
            return package.files[matches[0]][file].encode("utf-8")
    return None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    timeout = 10
    server: _Server

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        parts = urlsplit(self.path)
        query = parse_qs(parts.query, keep_blank_values=True)
        fixture = self.server.fixture
        if parts.path == RPC_PATH:
            body = json.dumps(rpc_reply(fixture, query.get("arg[]", []))).encode("utf-8")
            self._answer(200, "application/json", body)
            return
        found = plain_file(fixture, unquote(parts.path[len(PLAIN_PATH):]), query) if parts.path.startswith(
            PLAIN_PATH) else None
        if found is None:
            self._answer(404, "text/plain; charset=UTF-8", b"not found")
        else:
            self._answer(200, "text/plain; charset=UTF-8", found)

    def _answer(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, fixture: AurFixture, context: ssl.SSLContext) -> None:
        self.fixture = fixture
        self.context = context
        super().__init__(("127.0.0.1", 0), _Handler)

    def finish_request(self, request: Any, client_address: Any) -> None:
        """The TLS handshake in the connection's own thread, so one silent client never blocks the others."""
        request.settimeout(10)
        try:
            tls = self.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        try:
            self.RequestHandlerClass(tls, client_address, self)
        except (ssl.SSLError, OSError):
            pass
        finally:
            tls.close()


def configure_workspace(workspace: Path, origin: str, ca_pem: bytes) -> None:
    """Append the `[aur]` section pointing at the loopback AUR to the workspace's harness.toml, its CA beside it.
    No spacing between requests and short backoffs: the server is local and answers at once."""
    (workspace / CA_FILE).write_bytes(ca_pem)
    with (workspace / CONFIG_NAME).open("a", encoding="utf-8") as config:
        config.write(
            f'\n[aur]\nbase_url = "{origin}"\nca_file = "{CA_FILE}"\nmin_interval_ms = 0\nbackoff_base_ms = 10\n'
            "max_retries = 1\nretry_after_cap_s = 1\n"
        )


@contextmanager
def serve_aur(fixture: AurFixture, workspace: Path) -> Iterator[str]:
    """The fixture served on a free loopback port for the duration of the block, the workspace configured to
    use it; yields its origin."""
    with tempfile.TemporaryDirectory(prefix="harness-eval-aur-") as scratch:
        ca_path, context = make_certificates(Path(scratch))
        httpd = _Server(fixture, context)
        origin = f"https://127.0.0.1:{httpd.server_address[1]}"
        configure_workspace(workspace, origin, ca_path.read_bytes())
        thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        try:
            yield origin
        finally:
            httpd.shutdown()
            httpd.server_close()
            thread.join(timeout=5)

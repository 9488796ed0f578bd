"""No environment is read: proxies, CA bundles, netrc and key-log variables change nothing."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

import pytest
import trustme

from harness.net import GuardedClient, Unavailable
from tests.net.https_server import HttpsServer, Reply

MakeClient = Callable[..., GuardedClient]


def _dead_proxy() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_proxy_variables_pointing_at_a_dead_port_are_ignored(
    https_server: HttpsServer, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    proxy = _dead_proxy()
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, proxy)
    monkeypatch.setenv("NO_PROXY", "")
    https_server.script("/x", Reply(200, body=b"direct"))
    assert make_client().get("/x").body == b"direct"
    assert https_server.targets() == ["/x"]


def test_ca_variables_do_not_replace_the_configured_bundle(
    https_server: HttpsServer, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    unrelated = tmp_path / "unrelated-ca.pem"
    trustme.CA().cert_pem.write_to_path(str(unrelated))
    for name in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        monkeypatch.setenv(name, str(unrelated))
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path))
    https_server.script("/x", Reply(200, body=b"ok"))
    assert make_client().get("/x").body == b"ok"


def test_ca_variables_do_not_widen_the_system_store(
    https_server: HttpsServer, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without ca_file the system store is used; pointing SSL_CERT_FILE at the test CA must not make it trusted."""
    monkeypatch.setenv("SSL_CERT_FILE", https_server.ca_file)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", https_server.ca_file)
    with pytest.raises(Unavailable) as raised:
        make_client(ca_file=None).get("/x")
    assert raised.value.kind == "tls"
    assert https_server.requests == []


def test_netrc_credentials_are_never_sent(
    https_server: HttpsServer, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    netrc = tmp_path / ".netrc"
    netrc.write_text("machine 127.0.0.1 login alice password hunter2\ndefault login bob password swordfish\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    monkeypatch.setenv("HOME", str(tmp_path))
    make_client().get("/x")
    assert "authorization" not in https_server.requests[0].headers


def test_sslkeylogfile_is_not_written(
    https_server: HttpsServer, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    keylog = tmp_path / "keys.log"
    monkeypatch.setenv("SSLKEYLOGFILE", str(keylog))
    make_client().get("/x")
    make_client(ca_file=None)
    assert not keylog.exists()

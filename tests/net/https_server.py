"""A scriptable HTTPS server on 127.0.0.1 with a trustme certificate, for the guarded client and its callers.

Use the `https_server` fixture of tests/net/conftest.py, or build one (import with
`from tests.net.https_server import HttpsServer, Reply, Recorded`; pytest runs from the repository root):

    with HttpsServer(trustme.CA()) as server:
        server.script("/users/octocat", Reply(200, body=b"{}", headers=[("Content-Type", "application/json")]))
        server.script("/flaky", Reply(503), Reply(429, headers=[("Retry-After", "1")]), Reply(200, body=b"ok"))
        server.script("/rpc/v5/info", lambda request: Reply(200, body=answer_for(request.query["arg[]"][0])))
        client = GuardedClient(origin=server.origin, ca_file=server.ca_file, ...)

Scripting: `script(path, *replies)` matches the raw request path (percent-encoding as sent, no query); its
replies are served in order and the last one repeats. A reply may be a callable taking the Recorded request
(its `query` is decoded, so `arg%5B%5D` and `arg[]` are the same key). Unscripted paths answer 404.
`Reply` options: status, headers, body; `stall_s` (wait before the status line), `body_stall_s` (wait after
the headers), `chunk_size` + `chunk_delay_s` (trickle the body), `chunked` (no Content-Length),
`content_length` (claim another length), `drop` (close the connection without answering), `close`.
Stalls end early when the server stops, so a hung reply never blocks teardown.

Recording: `requests` lists every request in arrival order (method, raw target, HTTP version, path,
decoded query, lowercased headers, monotonic arrival time, client port; the same port means the same
kept-alive connection) and `targets()` just the raw targets; `connections` counts accepted TCP connections,
failed TLS handshakes included, so a target that must never be contacted can be checked with
`connections == 0`. `HttpsServer(ca, identities=("localhost",))` or a certificate from another CA give a
server the client must refuse to trust.
"""

from __future__ import annotations

import shutil
import socket
import ssl
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import trustme


@dataclass(frozen=True)
class Reply:
    """One scripted answer; see the module docstring for the options."""

    status: int = 200
    headers: Sequence[tuple[str, str]] = ()
    body: bytes = b""
    stall_s: float = 0.0
    body_stall_s: float = 0.0
    chunk_size: int = 65536
    chunk_delay_s: float = 0.0
    chunked: bool = False
    content_length: int | None = None
    drop: bool = False
    close: bool = False


@dataclass(frozen=True)
class Recorded:
    """One request as the server saw it."""

    method: str
    target: str
    version: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    at: float
    client_port: int


ReplySource = Reply | Callable[[Recorded], Reply]


@dataclass
class _Script:
    replies: list[ReplySource] = field(default_factory=list)
    served: int = 0

    def next(self) -> ReplySource:
        reply = self.replies[min(self.served, len(self.replies) - 1)]
        self.served += 1
        return reply


class HttpsServer:
    """A threaded HTTPS/1.1 server on 127.0.0.1 (keep-alive) whose certificate `ca` issued."""

    def __init__(self, ca: trustme.CA, *, identities: Sequence[str] = ("127.0.0.1", "localhost")) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="https-server-"))
        self.ca_file = str(self._dir / "ca.pem")
        ca.cert_pem.write_to_path(self.ca_file)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ca.issue_cert(*identities).configure_cert(context)
        self._lock = threading.Lock()
        self._scripts: dict[str, _Script] = {}
        self._open: set[socket.socket] = set()
        self.stopping = threading.Event()
        self.requests: list[Recorded] = []
        self.connections = 0
        self._httpd = _Server(self, context)
        self.port: int = self._httpd.server_address[1]
        self.origin = f"https://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    def __enter__(self) -> HttpsServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start serving in a background thread."""
        self._thread.start()

    def stop(self) -> None:
        """Stop serving, release stalled replies, close open connections and remove the CA file."""
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:
            for sock in self._open:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        shutil.rmtree(self._dir, ignore_errors=True)

    def url(self, path: str) -> str:
        """The absolute URL of `path` on this server."""
        return self.origin + path

    def script(self, path: str, *replies: ReplySource) -> None:
        """Serve `replies` in order for requests to `path` (the last one repeats)."""
        if not replies:
            raise ValueError("script needs at least one reply")
        with self._lock:
            self._scripts[path] = _Script(list(replies))

    def targets(self) -> list[str]:
        """The raw request targets received so far, in order."""
        with self._lock:
            return [request.target for request in self.requests]

    def _accepted(self) -> None:
        with self._lock:
            self.connections += 1

    def _track(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.add(sock)

    def _closed(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.discard(sock)

    def _record(self, handler: BaseHTTPRequestHandler) -> tuple[Recorded, ReplySource]:
        parts = urlsplit(handler.path)
        request = Recorded(
            method=handler.command,
            target=handler.path,
            version=handler.request_version,
            path=parts.path,
            query=parse_qs(parts.query, keep_blank_values=True),
            headers={name.lower(): value for name, value in handler.headers.items()},
            at=time.monotonic(),
            client_port=handler.client_address[1],
        )
        with self._lock:
            self.requests.append(request)
            script = self._scripts.get(parts.path)
            return request, (script.next() if script else Reply(404, body=b"not scripted"))

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        request, source = self._record(handler)
        reply = source(request) if callable(source) else source
        if reply.drop or (reply.stall_s and self.stopping.wait(reply.stall_s)):
            handler.close_connection = True
            return
        handler.send_response(reply.status)
        for name, value in reply.headers:
            handler.send_header(name, value)
        if reply.chunked:
            handler.send_header("Transfer-Encoding", "chunked")
        else:
            length = len(reply.body) if reply.content_length is None else reply.content_length
            handler.send_header("Content-Length", str(length))
        if reply.close:
            handler.send_header("Connection", "close")
            handler.close_connection = True
        handler.end_headers()
        handler.wfile.flush()
        if reply.body_stall_s and self.stopping.wait(reply.body_stall_s):
            handler.close_connection = True
            return
        self._write_body(handler, reply)

    def _write_body(self, handler: BaseHTTPRequestHandler, reply: Reply) -> None:
        try:
            for start in range(0, len(reply.body), reply.chunk_size):
                if start and reply.chunk_delay_s and self.stopping.wait(reply.chunk_delay_s):
                    handler.close_connection = True
                    return
                chunk = reply.body[start : start + reply.chunk_size]
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if reply.chunked else chunk)
                handler.wfile.flush()
            if reply.chunked:
                handler.wfile.write(b"0\r\n\r\n")
                handler.wfile.flush()
        except OSError:
            # The client gave up (cap reached, timeout): nothing left to answer on this connection.
            handler.close_connection = True


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; Nagle plus delayed ACK would add ~40 ms to each reply.
    disable_nagle_algorithm = True
    # Idle kept-alive connections end on their own after this many seconds.
    timeout = 10
    server: _Server

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self.server.owner._serve(self)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, owner: HttpsServer, context: ssl.SSLContext) -> None:
        self.owner = owner
        self.context = context
        super().__init__(("127.0.0.1", 0), _Handler)

    def finish_request(self, request: Any, client_address: Any) -> None:
        """Handshake in the connection's own thread, so a silent client never blocks the accept loop."""
        self.owner._accepted()
        request.settimeout(10)
        try:
            tls = self.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        self.owner._track(tls)
        try:
            self.RequestHandlerClass(tls, client_address, self)
        except (ssl.SSLError, OSError):
            pass
        finally:
            self.owner._closed(tls)
            tls.close()

"""The guarded HTTPS client: one origin, GET only, capped bodies, bounded time, retries and redirects by policy."""

from __future__ import annotations

import math
import ssl
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.cookiejar import CookieJar, DefaultCookiePolicy
from types import MappingProxyType
from typing import Literal, NamedTuple

import httpx2

import harness
from harness.net.errors import ClientConfigError, RequestRefused, TooLarge, Unavailable, UnavailableKind
from harness.net.pacing import reserve_start
from harness.net.retry import RETRYABLE_STATUSES, backoff_seconds, format_seconds, half_jitter, retry_after_seconds
from harness.net.urls import display_url, parse_origin, resolve, resolve_redirect

RedirectMode = Literal["never", "allowlisted"]
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
USER_AGENT = f"triage-harness/{harness.__version__}"
REDIRECT_REFUSED = "redirect to a non-allowlisted URL refused"


@dataclass(frozen=True)
class Response:
    """A final HTTP answer; `headers` keys are lowercase, repeated headers joined by ", "."""

    status: int
    headers: Mapping[str, str]
    body: bytes
    url: str


class _Deadline(NamedTuple):
    at: float
    label: str

    @property
    def reason(self) -> str:
        return f"{self.label} passed"


class _Retryable(NamedTuple):
    """An attempt that may be retried: a retryable status or a connect/read failure."""

    reason: str
    kind: UnavailableKind
    status: int | None = None
    retry_after: str | None = None


class GuardedClient:
    """The one outbound HTTP client (docs/net.md); build one instance per service and reuse it (keep-alive)."""

    def __init__(
        self,
        *,
        origin: str,
        ca_file: str | None = None,
        connect_timeout_s: float,
        read_timeout_s: float,
        deadline_s: float,
        max_body_bytes: int,
        max_retries: int = 0,
        backoff_base_ms: int = 1000,
        backoff_cap_s: float | None = None,
        retry_after_cap_s: float = 30,
        min_interval_ms: int = 0,
        follow_redirects: RedirectMode = "never",
        max_redirects: int = 5,
        redirect_allowed: Callable[[str], bool] | None = None,
        headers: Mapping[str, str] | None = None,
        jitter_s: Callable[[float], float] = half_jitter,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        for key, value in (
            ("connect_timeout_s", connect_timeout_s),
            ("read_timeout_s", read_timeout_s),
            ("deadline_s", deadline_s),
            ("retry_after_cap_s", retry_after_cap_s),
        ):
            _require(key, math.isfinite(value) and value > 0, "must be a positive number of seconds")
        _require("backoff_cap_s", backoff_cap_s is None or backoff_cap_s >= 0, "must not be negative")
        for key, count in (
            ("max_body_bytes", max_body_bytes),
            ("max_retries", max_retries),
            ("backoff_base_ms", backoff_base_ms),
            ("min_interval_ms", min_interval_ms),
            ("max_redirects", max_redirects),
        ):
            _require(key, isinstance(count, int) and count >= 0, "must be a non-negative integer")
        _require("follow_redirects", follow_redirects in ("never", "allowlisted"), "must be never or allowlisted")
        self._origin = parse_origin(origin)
        self._connect_timeout_s = connect_timeout_s
        self._read_timeout_s = read_timeout_s
        self._deadline_s = deadline_s
        self._max_body_bytes = max_body_bytes
        self._max_retries = max_retries
        self._backoff_base_ms = backoff_base_ms
        self._backoff_cap_s = backoff_cap_s
        self._retry_after_cap_s = retry_after_cap_s
        self._min_interval_s = min_interval_ms / 1000
        self._follow_redirects = follow_redirects
        self._max_redirects = max_redirects
        self._redirect_allowed = redirect_allowed
        self._jitter_s = jitter_s
        self._clock = clock
        self._monotonic = monotonic
        self._sleep = sleep
        self._client = httpx2.Client(
            verify=_ssl_context(ca_file),
            trust_env=False,
            http1=True,
            http2=False,
            follow_redirects=False,
            headers=_fixed_headers(headers or {}),
            # A jar whose policy accepts no domain: Set-Cookie is never stored, so no Cookie is ever sent.
            cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),
        )

    @property
    def origin(self) -> str:
        """The allowed origin and prefix, e.g. `https://ghe.example/api/v3`."""
        return self._origin.base

    def close(self) -> None:
        """Close pooled connections."""
        self._client.close()

    def __enter__(self) -> GuardedClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def get(self, path_and_query: str, *, accept: str | None = None, deadline_at: float | None = None) -> Response:
        """GET a path relative to the origin (`/users/x?y=1`) or an absolute URL on it.

        `accept` replaces the fixed Accept header for this call; `deadline_at` (a monotonic instant) ends the
        call earlier than `deadline_s` would, so several requests can share one budget.
        Raises RequestRefused, TooLarge or Unavailable.
        """
        own = f"deadline of {format_seconds(self._deadline_s)} s"
        deadline = _Deadline(self._monotonic() + self._deadline_s, own)
        if deadline_at is not None and deadline_at < deadline.at:
            deadline = _Deadline(deadline_at, "shared deadline")
        url = resolve(self._origin, path_and_query)
        hops = 0
        while True:
            response = self._fetch(url, accept, deadline)
            location = response.headers.get("location")
            if self._follow_redirects == "never" or response.status not in REDIRECT_STATUSES or location is None:
                return response
            target = resolve_redirect(self._origin, url, location)
            if target is None or (self._redirect_allowed is not None and not self._redirect_allowed(target)):
                raise RequestRefused(display_url(url), REDIRECT_REFUSED)
            if hops == self._max_redirects:
                raise RequestRefused(display_url(url), f"more than {self._max_redirects} redirects refused")
            hops += 1
            url = target

    def _fetch(self, url: str, accept: str | None, deadline: _Deadline) -> Response:
        """One URL with retries: a Response, or Unavailable once retries, Retry-After or the deadline end it."""
        attempt = 0
        while True:
            outcome = self._attempt(url, accept, deadline)
            if isinstance(outcome, Response):
                return outcome
            if attempt == self._max_retries:
                reason = outcome.reason if attempt == 0 else f"{outcome.reason} ({attempt + 1} attempts)"
                raise Unavailable(display_url(url), reason, kind=outcome.kind, status=outcome.status)
            delay = self._retry_delay(url, outcome, attempt)
            if self._monotonic() + delay >= deadline.at:
                reason = f"{deadline.label} leaves no time to retry after {outcome.reason}"
                raise Unavailable(display_url(url), reason, kind="deadline", status=outcome.status)
            self._sleep(delay)
            attempt += 1

    def _retry_delay(self, url: str, outcome: _Retryable, retry_index: int) -> float:
        seconds = None if outcome.retry_after is None else retry_after_seconds(outcome.retry_after, self._clock())
        if seconds is not None:
            if seconds > self._retry_after_cap_s:
                shown = "inf" if math.isinf(seconds) else str(math.ceil(seconds))
                cap = format_seconds(self._retry_after_cap_s)
                reason = f"Retry-After {shown} s exceeds the {cap} s cap"
                raise Unavailable(display_url(url), reason, kind="retry_after", status=outcome.status)
            return seconds
        delay = backoff_seconds(self._backoff_base_ms, retry_index, self._backoff_cap_s)
        return delay + self._jitter_s(delay)

    def _wait_turn(self, url: str, deadline: _Deadline) -> None:
        if self._min_interval_s <= 0:
            return
        start = reserve_start(self._origin.root, self._min_interval_s, self._monotonic)
        if start >= deadline.at:
            raise Unavailable(display_url(url), deadline.reason, kind="deadline")
        wait = start - self._monotonic()
        if wait > 0:
            self._sleep(wait)

    def _attempt(self, url: str, accept: str | None, deadline: _Deadline) -> Response | _Retryable:
        """One request. Without retries configured a retryable status is an ordinary final Response."""
        self._wait_turn(url, deadline)
        remaining = deadline.at - self._monotonic()
        if remaining <= 0:
            raise Unavailable(display_url(url), deadline.reason, kind="deadline")
        connect_s = min(self._connect_timeout_s, remaining)
        read_s = min(self._read_timeout_s, remaining)
        timeout = httpx2.Timeout(connect=connect_s, read=read_s, write=read_s, pool=connect_s)
        extra = {"Accept": accept} if accept else None
        try:
            with self._client.stream("GET", url, headers=extra, timeout=timeout) as reply:
                status = reply.status_code
                if status in RETRYABLE_STATUSES and self._max_retries > 0:
                    # The body of a retryable answer is never read; leaving the block drops the connection.
                    return _Retryable(f"HTTP {status}", "status", status, reply.headers.get("retry-after"))
                body = self._read_body(reply, url, deadline)
                return Response(status, MappingProxyType(dict(reply.headers.items())), body, url)
        except (httpx2.ConnectTimeout, httpx2.PoolTimeout):
            if connect_s < self._connect_timeout_s:
                raise Unavailable(display_url(url), deadline.reason, kind="deadline") from None
            return _Retryable(f"connect timed out after {format_seconds(connect_s)} s", "connect")
        except (httpx2.ReadTimeout, httpx2.WriteTimeout):
            if read_s < self._read_timeout_s:
                raise Unavailable(display_url(url), deadline.reason, kind="deadline") from None
            return _Retryable(f"read timed out after {format_seconds(read_s)} s", "read")
        except httpx2.ConnectError as exc:
            tls = _find_cause(exc, ssl.SSLError)
            if isinstance(tls, ssl.SSLError):
                raise Unavailable(display_url(url), _tls_reason(tls), kind="tls") from None
            return _Retryable(f"connection failed: {_os_reason(exc)}", "connect")
        except (httpx2.ReadError, httpx2.WriteError, httpx2.CloseError, httpx2.RemoteProtocolError) as exc:
            return _Retryable(f"read failed: {_os_reason(exc)}", "read")
        except httpx2.RequestError as exc:
            raise Unavailable(display_url(url), f"request failed: {type(exc).__name__}", kind="protocol") from None
        except httpx2.InvalidURL:
            raise RequestRefused(display_url(url), "URL is not valid for HTTP") from None

    def _read_body(self, reply: httpx2.Response, url: str, deadline: _Deadline) -> bytes:
        """Read at most cap + 1 bytes; more is TooLarge, never a truncation."""
        encoding = reply.headers.get("content-encoding", "").strip().lower()
        if encoding not in ("", "identity"):
            # Identity is requested; a compressed body could expand past the cap before it is counted.
            raise Unavailable(display_url(url), "response has a Content-Encoding other than identity", kind="protocol")
        declared = reply.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self._max_body_bytes:
            raise TooLarge(display_url(url), self._max_body_bytes)
        body = bytearray()
        for chunk in reply.iter_raw():
            body += chunk
            if len(body) > self._max_body_bytes:
                raise TooLarge(display_url(url), self._max_body_bytes)
            if self._monotonic() >= deadline.at:
                raise Unavailable(display_url(url), deadline.reason, kind="deadline")
        return bytes(body)


def _require(key: str, ok: bool, problem: str) -> None:
    if not ok:
        raise ClientConfigError(key, problem)


def _fixed_headers(headers: Mapping[str, str]) -> dict[str, str]:
    for name, value in headers.items():
        valid_name = bool(name) and name.isascii() and name.isprintable() and not set(name) & set(": ")
        _require("headers", valid_name, f"invalid header name {name!r}")
        _require("headers", value.isascii() and value.isprintable(), f"invalid value for header {name}")
    fixed = {"User-Agent": USER_AGENT, "Accept": "*/*", **headers}
    # Forced last: only identity bodies are accepted, so no caller header may ask for compression.
    fixed["Accept-Encoding"] = "identity"
    return fixed


def _ssl_context(ca_file: str | None) -> ssl.SSLContext:
    """Verification always on; a ca_file replaces the system store; nothing comes from the environment."""
    if not ca_file:
        context = httpx2.create_ssl_context(verify=True, trust_env=False)
    else:
        # Not ssl.create_default_context: it reads SSLKEYLOGFILE from the environment.
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        try:
            context.load_verify_locations(cafile=ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise ClientConfigError("ca_file", f"cannot load a PEM bundle from {ca_file}: {exc}") from None
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context


def _find_cause(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    seen: BaseException | None = exc
    for _ in range(16):
        if seen is None or isinstance(seen, kind):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _tls_reason(error: ssl.SSLError) -> str:
    if isinstance(error, ssl.SSLCertVerificationError):
        return f"TLS certificate verification failed: {error.verify_message}"
    return f"TLS handshake failed: {error.reason or type(error).__name__}"


def _os_reason(exc: BaseException) -> str:
    error = _find_cause(exc, OSError)
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return "the server closed the connection or sent a malformed response"

"""The read-only AUR client (docs/triage.md §5): RPC info and cgit plain files, classified into fixed outcomes.

URLs are built only from validated parts; no method takes a URL. One `AurSession` serves one verify
call: it memoizes each URL once and shares one time budget, then is discarded (no caching across calls).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

from harness.aur.names import is_commit, is_package_name, is_scriptlet_name
from harness.errors import InternalError
from harness.net import (
    AUR_CALL_DEADLINE_S,
    REDIRECT_REFUSED,
    GuardedClient,
    RequestRefused,
    Response,
    TooLarge,
    Unavailable,
    aur_client_transport,
    build_path,
    build_query,
)
from harness.text.canonjson import StrictJSONError, loads_strict

RPC_PATH = "/rpc/v5/info"
PLAIN_PREFIX = ("cgit", "aur.git", "plain")
PACKAGE_FILES = ("PKGBUILD", ".SRCINFO")
BODY_CAP = 1_048_576
RPC_MAX_DEPTH = 16
CHALLENGE_SCAN_BYTES = 2_000
CHALLENGE_MARKERS = (b"anubis", b"challenge", b"just a moment")

MALFORMED_RPC = "malformed RPC reply"
RPC_ERROR = "RPC error reply"
ANUBIS = "anubis challenge"
UNEXPECTED_HTML = "unexpected HTML response"
TOO_LARGE = f"response larger than {BODY_CAP:,} bytes"

RpcOutcome = Literal["present", "absent", "mismatch", "unavailable"]


@dataclass(frozen=True)
class Ok:
    """A file as served: raw bytes (every hash is over these)."""

    body: bytes


@dataclass(frozen=True)
class Missing:
    """cgit answered 404: no such file at that commit (or a commit it cannot resolve)."""


@dataclass(frozen=True)
class Failed:
    """No usable answer; `reason` comes from the fixed vocabulary of docs/triage.md §5, never from server text."""

    reason: str


Fetch = Ok | Missing | Failed


@dataclass(frozen=True)
class UnusableClient:
    """Stands in for the client when the `[aur]` section cannot build one; `reason` says which key."""

    reason: str


@dataclass(frozen=True)
class RpcAnswer:
    """The RPC outcome; name, pkgbase and version describe the single returned record, when there is one."""

    outcome: RpcOutcome
    url: str
    reason: str = ""
    name: str | None = None
    pkgbase: str | None = None
    version: str | None = None


def rpc_target(name: str) -> str:
    """`/rpc/v5/info?arg[]=<name>`, the name percent-encoded with no safe characters."""
    _require(is_package_name(name), "package name", name)
    return RPC_PATH + build_query([("arg[]", name)])


def plain_target(pkgbase: str, commit: str, file: str) -> str:
    """`/cgit/aur.git/plain/<file>?h=<pkgbase>&id=<commit>` from validated parts."""
    _require(is_package_name(pkgbase), "package base", pkgbase)
    _require(is_commit(commit), "commit", commit)
    _require(file in PACKAGE_FILES or is_scriptlet_name(file), "file name", file)
    return build_path([*PLAIN_PREFIX, file]) + build_query([("h", pkgbase), ("id", commit)])


def _require(ok: bool, what: str, value: str) -> None:
    if not ok:
        # Callers validate first, so reaching this is a bug in the harness, not bad input.
        raise InternalError(f"AUR client called with an invalid {what} {value!r}")


def is_aur_target(url: str) -> bool:
    """Whether an absolute URL has one of the two request forms (the redirect allowlist narrows to these)."""
    parts = urlsplit(url)
    try:
        pairs = parse_qsl(parts.query, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        return False
    if parts.path == RPC_PATH:
        return len(pairs) == 1 and pairs[0][0] == "arg[]" and is_package_name(pairs[0][1])
    prefix = "/" + "/".join(PLAIN_PREFIX) + "/"
    if not parts.path.startswith(prefix):
        return False
    file = parts.path[len(prefix) :]
    if not (file in PACKAGE_FILES or is_scriptlet_name(file)):
        return False
    query = dict(pairs)
    return (
        len(pairs) == 2
        and set(query) == {"h", "id"}
        and is_package_name(query["h"])
        and is_commit(query["id"])
    )


def _media_type(response: Response) -> str:
    return response.headers.get("content-type", "").split(";", 1)[0].strip().lower()


def _html_reason(body: bytes) -> str:
    head = body[:CHALLENGE_SCAN_BYTES].lower()
    return ANUBIS if any(marker in head for marker in CHALLENGE_MARKERS) else UNEXPECTED_HTML


def _unavailable_reason(error: Unavailable) -> str:
    """Map a transport failure to the fixed vocabulary; OS, TLS library and server text stay out."""
    reason = error.reason
    if error.kind == "status":
        return f"HTTP {error.status}"
    if error.kind == "retry_after":
        return reason
    if error.kind == "connect":
        return "connect timed out" if reason.startswith("connect timed out") else "connection failed"
    if error.kind == "read":
        return "read timed out" if reason.startswith("read timed out") else "read failed"
    if error.kind == "tls":
        return "TLS certificate verification failed" if "certificate" in reason else "TLS handshake failed"
    if error.kind == "deadline":
        return "AUR time budget exhausted" if reason.startswith("shared deadline") else "request deadline passed"
    return "protocol error"


def _refused_reason(error: RequestRefused) -> str:
    return error.reason if error.reason.startswith("more than") else REDIRECT_REFUSED


def classify_plain(response: Response) -> Fetch:
    """Status, then content type, for a cgit plain answer (the size cap is the transport's)."""
    if response.status == 404:
        return Missing()
    if response.status != 200:
        return Failed(f"HTTP {response.status}")
    if _media_type(response) == "text/html":
        return Failed(_html_reason(response.body))
    return Ok(response.body)


def _record_fields(record: dict[str, Any]) -> tuple[str, str | None] | None:
    """(Name, base) of a well-formed result record; base None when PackageBase is null or absent."""
    name, version = record.get("Name"), record.get("Version")
    base = record.get("PackageBase")
    if not isinstance(name, str) or not name or not isinstance(version, str):
        return None
    if base is not None and not isinstance(base, str):
        return None
    return name, base


def classify_rpc(response: Response, name: str, url: str) -> RpcAnswer:
    """Status, content type and the strict RPC reply rules, giving one of the four outcomes."""
    if response.status != 200:
        return RpcAnswer("unavailable", url, f"HTTP {response.status}")
    media = _media_type(response)
    if media == "text/html":
        return RpcAnswer("unavailable", url, _html_reason(response.body))
    if media != "application/json":
        return RpcAnswer("unavailable", url, MALFORMED_RPC)
    try:
        reply = loads_strict(response.body, max_depth=RPC_MAX_DEPTH)
    except StrictJSONError:
        return RpcAnswer("unavailable", url, MALFORMED_RPC)
    return rpc_outcome(reply, name, url)


def rpc_outcome(reply: Any, name: str, url: str) -> RpcAnswer:
    """Judge a parsed RPC reply: present, absent, mismatch, or unavailable when it is malformed or an error."""
    malformed = RpcAnswer("unavailable", url, MALFORMED_RPC)
    if not isinstance(reply, dict):
        return malformed
    version = reply.get("version")
    if type(version) is not int or version != 5:
        return malformed
    if reply.get("type") == "error":
        return RpcAnswer("unavailable", url, RPC_ERROR)
    results, count = reply.get("results"), reply.get("resultcount")
    if reply.get("type") != "multiinfo" or not isinstance(results, list):
        return malformed
    if type(count) is not int or count != len(results):
        return malformed
    records = []
    for record in results:
        fields = record if isinstance(record, dict) else {}
        parsed = _record_fields(fields)
        if parsed is None:
            return malformed
        records.append((parsed[0], parsed[1], fields["Version"]))
    if not records:
        return RpcAnswer("absent", url)
    if len(records) > 1:
        return RpcAnswer("mismatch", url)
    record_name, base, record_version = records[0]
    resolved = record_name if base is None else base
    outcome: RpcOutcome = "present" if record_name == name and is_package_name(resolved) else "mismatch"
    return RpcAnswer(outcome, url, "", record_name, resolved, record_version)


@dataclass
class AurSession:
    """The AUR I/O of one verify call: each URL fetched at most once, all within one shared deadline."""

    transport: GuardedClient
    deadline_at: float
    _memo: dict[str, Any] = field(default_factory=dict)

    def url(self, target: str) -> str:
        """The absolute URL of a request target (for evidence and snapshot fields)."""
        return self.transport.origin + target

    def rpc_info(self, name: str) -> RpcAnswer:
        """`/rpc/v5/info?arg[]=<name>`: present, absent, mismatch or unavailable."""
        target = rpc_target(name)
        if target not in self._memo:
            self._memo[target] = self._rpc(target, name)
        answer: RpcAnswer = self._memo[target]
        return answer

    def plain(self, pkgbase: str, commit: str, file: str) -> Fetch:
        """One file of the package's git tree at a commit: ok(bytes), missing or failed(reason)."""
        target = plain_target(pkgbase, commit, file)
        if target not in self._memo:
            self._memo[target] = self._plain(target)
        fetched: Fetch = self._memo[target]
        return fetched

    def _get(self, target: str, accept: str) -> Response | str:
        try:
            return self.transport.get(target, accept=accept, deadline_at=self.deadline_at)
        except RequestRefused as exc:
            return _refused_reason(exc)
        except TooLarge:
            return TOO_LARGE
        except Unavailable as exc:
            return _unavailable_reason(exc)

    def _rpc(self, target: str, name: str) -> RpcAnswer:
        response = self._get(target, "application/json")
        if isinstance(response, str):
            return RpcAnswer("unavailable", self.url(target), response)
        return classify_rpc(response, name, self.url(target))

    def _plain(self, target: str) -> Fetch:
        response = self._get(target, "*/*")
        if isinstance(response, str):
            return Failed(response)
        return classify_plain(response)


class AurClient:
    """The AUR instance of the guarded client plus the per-call budget; build once per process."""

    def __init__(
        self,
        transport: GuardedClient,
        *,
        budget_s: float = AUR_CALL_DEADLINE_S,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.transport = transport
        self._budget_s = budget_s
        self._monotonic = monotonic

    def session(self) -> AurSession:
        """A fresh memo and time budget for one verify call."""
        return AurSession(self.transport, self._monotonic() + self._budget_s)

    def close(self) -> None:
        """Close pooled connections."""
        self.transport.close()


def build_aur_client(
    base_url: str,
    ca_file: str | None,
    min_interval_ms: int,
    backoff_base_ms: int,
    max_retries: int,
    retry_after_cap_s: int,
    *,
    connect_timeout_s: float = 10,
    read_timeout_s: float = 30,
    request_timeout_s: float = 60,
    budget_s: float = AUR_CALL_DEADLINE_S,
    **transport_options: Any,
) -> AurClient:
    """The AUR client from the `[aur]` values; raises ClientConfigError naming the key at fault."""
    transport = aur_client_transport(
        base_url,
        ca_file,
        min_interval_ms,
        backoff_base_ms,
        max_retries,
        retry_after_cap_s,
        redirect_allowed=is_aur_target,
        connect_timeout_s=connect_timeout_s,
        read_timeout_s=read_timeout_s,
        deadline_s=request_timeout_s,
        **transport_options,
    )
    return AurClient(transport, budget_s=budget_s)

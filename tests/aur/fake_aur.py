"""The fake AUR of docs/triage.md §16.1 on the loopback HTTPS server, and the package fixtures built at test time.

It serves `/rpc/v5/info?arg[]=<name>` from `rpc/<name>.json` (else the empty multiinfo reply) and
`/cgit/aur.git/plain/<file>?h=<base>&id=<commit>` from `plain/<base>/<commit>/<file>` (else 404), accepting a
unique commit prefix. `script(target, *replies)` overrides one request target (path and query, or a bare path
for every query) with replies served in order, the last repeating: status sequences, Retry-After, HTML
challenge pages, redirects. `targets()` lists every request line's target in arrival order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from tests.net.https_server import HttpsServer, Recorded, Reply, ReplySource

RPC_PATH = "/rpc/v5/info"
PLAIN_PREFIX = "/cgit/aur.git/plain/"
JSON = [("Content-Type", "application/json")]
TEXT = [("Content-Type", "text/plain; charset=UTF-8")]
HTML = [("Content-Type", "text/html; charset=utf-8")]
EMPTY_RPC = {"resultcount": 0, "results": [], "type": "multiinfo", "version": 5}

A1, B2, C3, D4 = ("a1" * 20, "b2" * 20, "c3" * 20, "d4" * 20)
SCRIPTLET = b'post_install() {\n  echo "tiny-demo installed"\n}\n'
SCRIPTLET_SHA256 = "da27e3212b122407430b9d41928260f4630db1b4201939d7fde50d2be40799ed"
TAKEDOWN_PROVENANCE = "AUR takedown 2026-01-14, maintainer report"

QueryKey = tuple[tuple[str, tuple[str, ...]], ...]


def _query_key(query: dict[str, list[str]]) -> QueryKey:
    return tuple(sorted((key, tuple(values)) for key, values in query.items()))


def json_reply(value: Any, status: int = 200, headers: list[tuple[str, str]] | None = None) -> Reply:
    """A JSON answer with the RPC's content type."""
    return Reply(status, headers=[*JSON, *(headers or [])], body=json.dumps(value).encode("utf-8"))


def html_reply(text: str = "<html><title>Making sure you're not a bot!</title>Anubis</html>") -> Reply:
    """A 200 HTML page (an Anubis challenge by default)."""
    return Reply(200, headers=HTML, body=text.encode("utf-8"))


def redirect(location: str, status: int = 302) -> Reply:
    """A redirect to `location`."""
    return Reply(status, headers=[("Location", location)])


def rpc_document(name: str, version: str, base: str | None = None) -> dict[str, Any]:
    """A multiinfo reply with one record."""
    record = {"Name": name, "PackageBase": name if base is None else base, "Version": version}
    return {"resultcount": 1, "results": [record], "type": "multiinfo", "version": 5}


@dataclass
class _Script:
    replies: list[ReplySource]
    served: int = 0

    def next(self) -> ReplySource:
        reply = self.replies[min(self.served, len(self.replies) - 1)]
        self.served += 1
        return reply


@dataclass
class FakeAur:
    """A fake AUR on `server` whose files live under `root`; `workspace` has a harness.toml pointing at it."""

    server: HttpsServer
    root: Path
    workspace: Path
    _overrides: dict[tuple[str, QueryKey | None], _Script] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.server.script(RPC_PATH, self._answer)
        self.configure()

    @property
    def base_url(self) -> str:
        return self.server.origin

    @property
    def ca_file(self) -> str:
        return self.server.ca_file

    def configure(self, **aur: Any) -> None:
        """Write the workspace's `[aur]` section: docs/triage.md §16.1's values, overridden by `aur`."""
        values: dict[str, Any] = {
            "base_url": self.base_url,
            "ca_file": "aur-ca.pem",
            "min_interval_ms": 0,
            "backoff_base_ms": 10,
            "retry_after_cap_s": 2,
            **aur,
        }
        lines = ["[aur]", *(f"{key} = {json.dumps(value)}" for key, value in values.items())]
        (self.workspace / "harness.toml").write_text("\n".join(lines) + "\n")

    def put_rpc(self, name: str, document: Any) -> None:
        """Serve `document` (JSON-encoded unless bytes) for `arg[]=<name>`."""
        body = document if isinstance(document, bytes) else json.dumps(document).encode("utf-8")
        path = self.root / "rpc" / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)

    def put_file(self, base: str, commit: str, file: str, data: bytes) -> None:
        """Serve `data` as `file` of `base` at `commit`."""
        path = self.root / "plain" / base / commit / file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.server.script(PLAIN_PREFIX + quote(file, safe=""), self._answer)

    def script(self, target: str, *replies: ReplySource) -> None:
        """Override one target (`/path?query`, or `/path` for any query) with replies served in order."""
        parts = urlsplit(target)
        key = _query_key(parse_qs(parts.query, keep_blank_values=True)) if parts.query else None
        self._overrides[(parts.path, key)] = _Script(list(replies))
        self.server.script(parts.path, self._answer)

    def targets(self) -> list[str]:
        """Every request target received, in order."""
        return self.server.targets()

    def _answer(self, request: Recorded) -> Reply:
        script = self._overrides.get((request.path, _query_key(request.query))) or self._overrides.get(
            (request.path, None)
        )
        if script is not None:
            source = script.next()
            return source(request) if callable(source) else source
        if request.path == RPC_PATH:
            return self._rpc(request.query.get("arg[]", []))
        return self._plain(unquote(request.path[len(PLAIN_PREFIX) :]), request.query)

    def _rpc(self, names: list[str]) -> Reply:
        path = self.root / "rpc" / f"{names[0]}.json" if len(names) == 1 else None
        if path is None or "/" in names[0] or not path.is_file():
            return json_reply(EMPTY_RPC)
        return Reply(200, headers=JSON, body=path.read_bytes())

    def _plain(self, file: str, query: dict[str, list[str]]) -> Reply:
        bases, commits = query.get("h", []), query.get("id", [])
        if len(bases) != 1 or len(commits) != 1 or "/" in file + bases[0] or file in (".", ".."):
            return Reply(404, body=b"not found")
        base_dir = self.root / "plain" / bases[0]
        matches = [d for d in base_dir.iterdir() if d.name.startswith(commits[0])] if base_dir.is_dir() else []
        if len(matches) != 1 or not (matches[0] / file).is_file():
            return Reply(404, body=b"not found")
        return Reply(200, headers=TEXT, body=(matches[0] / file).read_bytes())


def rpc_target(name: str) -> str:
    """The target the client requests for the RPC lookup of `name`."""
    return f"{RPC_PATH}?arg[]={quote(name, safe='')}"


def plain_target(base: str, commit: str, file: str) -> str:
    """The target the client requests for one file."""
    return f"{PLAIN_PREFIX}{quote(file, safe='')}?h={quote(base, safe='')}&id={commit}"


# ---------------------------------------------------------------------------------------------
# tiny-demo-bin


def demo_pkgbuild(pkgver: str, install: str = "tiny-demo.install") -> bytes:
    """The tiny-demo-bin PKGBUILD of docs/triage.md §16.1 (line 7 is `install=...`, line 8 `package() {...}`)."""
    return (
        "pkgname=tiny-demo-bin\n"
        f"pkgver={pkgver}\n"
        "pkgrel=1\n"
        "arch=('x86_64')\n"
        "_dl=https://downloads.example.org/tiny\n"
        'source=("tiny-$pkgver.tar.gz::$_dl/v$pkgver/tiny.tar.gz")\n'
        f"install={install}\n"
        'package() { install -Dm755 tiny "$pkgdir/usr/bin/tiny"; }\n'
    ).encode()


def demo_srcinfo(pkgver: str, install: str = "tiny-demo.install") -> bytes:
    """The tab-indented tiny-demo-bin .SRCINFO of docs/triage.md §16.1."""
    return (
        "pkgbase = tiny-demo-bin\n"
        f"\tpkgver = {pkgver}\n"
        "\tpkgrel = 1\n"
        "\tarch = x86_64\n"
        f"\tinstall = {install}\n"
        f"\tsource = tiny-{pkgver}.tar.gz::https://downloads.example.org/tiny/v{pkgver}/tiny.tar.gz\n"
        "\n"
        "pkgname = tiny-demo-bin\n"
    ).encode()


def install_demo_bin(fake: FakeAur, variant: str = "base") -> None:
    """tiny-demo-bin: a1 (1.0.0-1) and b2 (1.0.1-1), RPC Version 1.0.2-1.

    Variants: `changed` (the scriptlet gains a chmod at b2), `crlf` (CRLF endings at b2), `renamed`
    (install= names another scriptlet at b2).
    """
    fake.put_rpc("tiny-demo-bin", rpc_document("tiny-demo-bin", "1.0.2-1"))
    new_install = "tiny-demo-new.install" if variant == "renamed" else "tiny-demo.install"
    fake.put_file("tiny-demo-bin", A1, "PKGBUILD", demo_pkgbuild("1.0.0"))
    fake.put_file("tiny-demo-bin", A1, ".SRCINFO", demo_srcinfo("1.0.0"))
    fake.put_file("tiny-demo-bin", B2, "PKGBUILD", demo_pkgbuild("1.0.1", new_install))
    fake.put_file("tiny-demo-bin", B2, ".SRCINFO", demo_srcinfo("1.0.1", new_install))
    new_scriptlet = {
        "changed": SCRIPTLET.replace(b"}\n", b"  chmod u+s /usr/bin/tiny\n}\n"),
        "crlf": SCRIPTLET.replace(b"\n", b"\r\n"),
    }.get(variant, SCRIPTLET)
    fake.put_file("tiny-demo-bin", A1, "tiny-demo.install", SCRIPTLET)
    fake.put_file("tiny-demo-bin", B2, new_install, new_scriptlet)
    if variant == "renamed":
        fake.put_file("tiny-demo-bin", B2, "tiny-demo.install", SCRIPTLET)


DEMO_TARGETS = [
    rpc_target("tiny-demo-bin"),
    plain_target("tiny-demo-bin", B2, "PKGBUILD"),
    plain_target("tiny-demo-bin", B2, ".SRCINFO"),
    plain_target("tiny-demo-bin", A1, "PKGBUILD"),
    plain_target("tiny-demo-bin", A1, ".SRCINFO"),
    plain_target("tiny-demo-bin", B2, "tiny-demo.install"),
    plain_target("tiny-demo-bin", A1, "tiny-demo.install"),
]
"""The seven requests of V0, in order (docs/triage.md §9 vector)."""


# ---------------------------------------------------------------------------------------------
# tiny-fetch


FETCH_URL = "https://downloads.example.org/fetch/data-2.0.1.zip"
EXTRA_URL = "https://cdn.example.net/fetch/extra-2.0.1.zip"


def fetch_pkgbuild(pkgver: str, variant: str = "base", local_url: str = "") -> bytes:
    """The tiny-fetch PKGBUILD of docs/triage.md §16.1 (line 6 is `build() {...}`)."""
    dl = "https://downloads.example.org/fetch"
    source = f'source=("data.zip::{local_url}")' if local_url else 'source=("data-$pkgver.zip::$_dl/data-$pkgver.zip")'
    fetch = f'curl -fsSL "{local_url}" -o data.zip' if local_url else 'curl -fsSL "$_dl/data-$pkgver.zip" -o data.zip'
    if variant in ("undeclared", "srcinfo-only"):
        fetch += "; curl -fsSL https://cdn.example.net/fetch/extra-$pkgver.zip -o x.zip"
    return (
        "pkgname=tiny-fetch\n"
        f"pkgver={pkgver}\n"
        "pkgrel=1\n"
        f"_dl={dl}\n"
        f"{source}\n"
        f"build() {{ {fetch}; }}\n"
        'package() { install -Dm644 data.zip "$pkgdir/usr/share/tiny/data.zip"; }\n'
    ).encode()


def fetch_srcinfo(pkgver: str, variant: str = "base", local_url: str = "") -> bytes:
    """The tiny-fetch .SRCINFO, built like tiny-demo-bin's."""
    declared = f"https://downloads.example.org/fetch/data-{pkgver}.zip"
    source = f"data.zip::{local_url}" if local_url else f"data-{pkgver}.zip::{declared}"
    extra = f"\tsource = https://cdn.example.net/fetch/extra-{pkgver}.zip\n" if variant == "srcinfo-only" else ""
    return (
        f"pkgbase = tiny-fetch\n\tpkgver = {pkgver}\n\tpkgrel = 1\n\tsource = {source}\n{extra}\npkgname = tiny-fetch\n"
    ).encode()


def install_fetch(fake: FakeAur, variant: str = "base") -> None:
    """tiny-fetch: c3 (2.0.0-1) and d4 (2.0.1-1), no scriptlet.

    Variants: `undeclared` (build() also curls an undeclared URL), `srcinfo-only` (that URL is listed in the
    .SRCINFO only), `local` (the recipe declares and fetches a URL on the fake AUR itself).
    """
    local = fake.server.url("/fetch/data.zip") if variant == "local" else ""
    fake.put_rpc("tiny-fetch", rpc_document("tiny-fetch", "2.0.1-1"))
    for commit, pkgver in ((C3, "2.0.0"), (D4, "2.0.1")):
        fake.put_file("tiny-fetch", commit, "PKGBUILD", fetch_pkgbuild(pkgver, variant, local))
        fake.put_file("tiny-fetch", commit, ".SRCINFO", fetch_srcinfo(pkgver, variant, local))


# ---------------------------------------------------------------------------------------------
# tiny-typo


def install_typo(fake: FakeAur, present: bool = True) -> None:
    """tiny-typo on the RPC (present), or no record at all (absent)."""
    if present:
        fake.put_rpc("tiny-typo", rpc_document("tiny-typo", "0.1.0-1"))


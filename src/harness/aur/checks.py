"""Deterministic checks of an FP verdict against the AUR (docs/triage.md §7): routing, snapshot, two checks.

Each check returns a `CheckOutcome` whose evidence has every key of docs/triage.md §9 (null where not reached).
Package content is only parsed and hashed: no URL found in it is requested, nothing in it runs.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from harness.aur.client import AurSession, Failed, Fetch, Missing, Ok
from harness.aur.names import is_scriptlet_name
from harness.aur.pkgbuild import PkgbuildError, Prologue, decode, scan_prologue
from harness.aur.srcinfo import Srcinfo, SrcinfoError, parse_srcinfo
from harness.aur.urls import is_routable_host, parse_url

Route = Literal["check_phantom_install", "check_url_in_source", "no_check"]

PHANTOM_RULES = frozenset({"R007", "R053", "H015", "H017", "H023", "H100"})
URL_RULES = frozenset({"H016", "R010", "R011", "H082", "X009", "R152", "SOURCE_BUCKET", "NOVELTY", "C003"})
RECIPE_FILES = ("PKGBUILD", ".SRCINFO")
DIFF_LINE_LIMIT = 1_000
_SHOWN_MAX_CHARS = 128


@dataclass(frozen=True)
class CheckOutcome:
    """One entry of the result's `checks`; `sentence` is the pass sentence suppression reasons quote."""

    name: str
    rule_ids: tuple[str, ...]
    passed: bool
    reason: str
    evidence: dict[str, Any]
    sentence: str = ""

    def as_dict(self) -> dict[str, Any]:
        """The result-shaped object {name, rule_ids, passed, reason, evidence}."""
        return {
            "name": self.name,
            "rule_ids": list(self.rule_ids),
            "passed": self.passed,
            "reason": self.reason,
            "evidence": self.evidence,
        }


@dataclass(frozen=True)
class Side:
    """The recipe of one commit: PKGBUILD text and prologue, .SRCINFO text and parse (newlines normalized)."""

    commit: str
    pkgbuild_text: str
    prologue: Prologue
    srcinfo_text: str
    srcinfo: Srcinfo

    @property
    def install_names(self) -> frozenset[str]:
        """Declared install scriptlets: the resolved PKGBUILD `install` scalar plus the .SRCINFO values."""
        names = {name for name in self.srcinfo.install if name}
        if self.prologue.install:
            names.add(self.prologue.install)
        return frozenset(names)


@dataclass(frozen=True)
class Snapshot:
    """Both recipes, bound to the RPC package base and the claimed versions."""

    pkgbase: str
    old: Side
    new: Side


@dataclass
class _Fetched:
    """Raw file bytes fetched so far, for the snapshot evidence."""

    pkgbuild: dict[str, bytes] = field(default_factory=dict)
    srcinfo: dict[str, bytes] = field(default_factory=dict)


def shown(value: str) -> str:
    """Package-supplied text as quoted in a one-line reason: as is when short printable ASCII, else JSON-escaped."""
    if len(value) <= _SHOWN_MAX_CHARS and value.isascii() and value.isprintable():
        return value
    cut = value[:_SHOWN_MAX_CHARS]
    return json.dumps(cut, ensure_ascii=True) + ("..." if len(value) > _SHOWN_MAX_CHARS else "")


def sha256_hex(data: bytes) -> str:
    """Lowercase hex SHA-256 of raw bytes."""
    return hashlib.sha256(data).hexdigest()


def route(rule_id: str, file: str) -> Route:
    """The check an evidence item goes to, first match wins (docs/triage.md §7 routing)."""
    if file.endswith(".install") or rule_id in PHANTOM_RULES:
        return "check_phantom_install"
    if rule_id in URL_RULES:
        return "check_url_in_source"
    return "no_check"


def fetch_failure(file: str, commit: str, fetched: Fetch) -> str:
    """`<file> unavailable at commit <c>: <reason>`, a 404 read as `not found`."""
    reason = "not found" if isinstance(fetched, Missing) else fetched.reason if isinstance(fetched, Failed) else ""
    return f"{file} unavailable at commit {commit}: {reason}"


# ---------------------------------------------------------------------------------------------
# snapshot


def _snapshot_evidence(
    old_commit: str, new_commit: str, versions: dict[str, str], fetched: _Fetched
) -> dict[str, Any]:
    def digest(files: dict[str, bytes], commit: str) -> str | None:
        return sha256_hex(files[commit]) if commit in files else None

    return {
        "old_commit": old_commit,
        "new_commit": new_commit,
        "old_version": versions.get(old_commit),
        "new_version": versions.get(new_commit),
        "pkgbuild_sha256_old": digest(fetched.pkgbuild, old_commit),
        "pkgbuild_sha256_new": digest(fetched.pkgbuild, new_commit),
        "srcinfo_sha256_old": digest(fetched.srcinfo, old_commit),
        "srcinfo_sha256_new": digest(fetched.srcinfo, new_commit),
    }


def take_snapshot(
    session: AurSession,
    pkgbase: str,
    old_commit: str,
    new_commit: str,
    old_version: str,
    new_version: str,
    package: str,
) -> tuple[CheckOutcome, Snapshot | None]:
    """Fetch PKGBUILD and .SRCINFO at new_commit then old_commit and bind them to base, versions and package."""
    fetched = _Fetched()
    versions: dict[str, str] = {}

    def outcome(reason: str, passed: bool = False) -> CheckOutcome:
        evidence = _snapshot_evidence(old_commit, new_commit, versions, fetched)
        return CheckOutcome("snapshot", (), passed, reason, evidence)

    for commit in (new_commit, old_commit):
        for file, store in (("PKGBUILD", fetched.pkgbuild), (".SRCINFO", fetched.srcinfo)):
            answer = session.plain(pkgbase, commit, file)
            if not isinstance(answer, Ok):
                return outcome(fetch_failure(file, commit, answer)), None
            store[commit] = answer.body

    sides: dict[str, Side] = {}
    for commit, claimed in ((new_commit, new_version), (old_commit, old_version)):
        try:
            srcinfo = parse_srcinfo(fetched.srcinfo[commit], commit)
        except SrcinfoError as exc:
            return outcome(str(exc)), None
        versions[commit] = srcinfo.version
        if srcinfo.pkgbase != pkgbase:
            reason = f".SRCINFO at commit {commit} names pkgbase {shown(srcinfo.pkgbase)}, expected {pkgbase}"
            return outcome(reason), None
        if srcinfo.version != claimed:
            reason = f".SRCINFO at commit {commit} gives version {shown(srcinfo.version)}, verdict claims {claimed}"
            return outcome(reason), None
        if commit == new_commit and package not in srcinfo.pkgnames:
            return outcome(f"{package} is not a pkgname at commit {commit}"), None
        try:
            text = decode(fetched.pkgbuild[commit])
        except PkgbuildError:
            return outcome(f"PKGBUILD at commit {commit} is not UTF-8"), None
        # parse_srcinfo has accepted these bytes as strict UTF-8.
        srcinfo_text = decode(fetched.srcinfo[commit])
        sides[commit] = Side(commit, text, scan_prologue(text), srcinfo_text, srcinfo)

    reason = (
        f"PKGBUILD and .SRCINFO at commits {old_commit} and {new_commit} name pkgbase {pkgbase}, "
        f"versions {old_version} and {new_version}, and {package} is a pkgname"
    )
    return outcome(reason, passed=True), Snapshot(pkgbase, sides[old_commit], sides[new_commit])


# ---------------------------------------------------------------------------------------------
# check_phantom_install


def _normalized_lines(data: bytes) -> list[bytes]:
    text = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    lines = text.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


def _trim_common(old: list[bytes], new: list[bytes]) -> tuple[list[bytes], list[bytes]]:
    """The two lists without their common leading and trailing lines."""
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    return old[start : len(old) - end], new[start : len(new) - end]


def line_counts(old: list[bytes], new: list[bytes]) -> tuple[int, int]:
    """(added, removed) lines of a zero-context unified diff of two line lists."""
    if len(old) > DIFF_LINE_LIMIT or len(new) > DIFF_LINE_LIMIT:
        # difflib's matcher is superlinear on crafted input, and a package author writes both sides. Large
        # inputs drop their common ends; a changed middle still over the limit counts as wholly replaced,
        # which is a valid (if not minimal) unified diff, so the reason stays honest and the time bounded.
        old, new = _trim_common(old, new)
        if len(old) > DIFF_LINE_LIMIT or len(new) > DIFF_LINE_LIMIT:
            return len(new), len(old)
    added = removed = 0
    # The opcodes are the ones difflib.unified_diff groups into hunks, so the counts match its output.
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new).get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return added, removed


def _declared_list(names: frozenset[str]) -> str:
    return ", ".join(shown(name) for name in sorted(names)) or "none"


def check_phantom_install(
    session: AurSession, snapshot: Snapshot, rule_id: str, file: str, line: int | None
) -> CheckOutcome:
    """The cited scriptlet is declared alike and identical at both commits, line endings normalized."""
    old, new = snapshot.old, snapshot.new
    evidence: dict[str, Any] = {
        "file": file,
        "line": line,
        "install_name": None,
        "declared_old": sorted(old.install_names),
        "declared_new": sorted(new.install_names),
        "old_sha256": None,
        "new_sha256": None,
        "identical": None,
        "added_lines": None,
        "removed_lines": None,
    }

    def fail(reason: str) -> CheckOutcome:
        return CheckOutcome("check_phantom_install", (rule_id,), False, reason, evidence)

    if file.endswith(".install"):
        if not is_scriptlet_name(file):
            return fail(f"cited file {file} is not a scriptlet name")
        scriptlet = file
    else:
        if len(new.install_names) != 1:
            return fail(f"no single install scriptlet is declared at commit {new.commit}")
        (scriptlet,) = new.install_names
        if not is_scriptlet_name(scriptlet):
            return fail(f"the install scriptlet declared at commit {new.commit} is not a valid scriptlet name")
    evidence["install_name"] = scriptlet

    if file != scriptlet:
        if file not in RECIPE_FILES:
            return fail(f"cited file {file} is neither the install scriptlet nor PKGBUILD or .SRCINFO")
        if line is None:
            return fail(f"a line number is required when citing {file}")
        text = new.pkgbuild_text if file == "PKGBUILD" else new.srcinfo_text
        lines = text.split("\n")
        if line > len(lines) or scriptlet not in lines[line - 1]:
            return fail(f"cited line {line} of {file} does not reference {scriptlet}")

    if old.install_names != new.install_names:
        declared = f"{_declared_list(old.install_names)} vs {_declared_list(new.install_names)}"
        return fail(f"install= declarations differ between commits ({declared})")
    if scriptlet not in new.install_names:
        return fail(f"install scriptlet {scriptlet} is not declared at commit {new.commit}")

    bodies: dict[str, bytes] = {}
    for side, key in ((new, "new_sha256"), (old, "old_sha256")):
        answer = session.plain(snapshot.pkgbase, side.commit, scriptlet)
        if isinstance(answer, Missing):
            return fail(f"install scriptlet {scriptlet} is missing at commit {side.commit}")
        if not isinstance(answer, Ok):
            return fail(fetch_failure(f"install scriptlet {scriptlet}", side.commit, answer))
        bodies[side.commit] = answer.body
        evidence[key] = sha256_hex(answer.body)

    old_lines = _normalized_lines(bodies[old.commit])
    new_lines = _normalized_lines(bodies[new.commit])
    if file == scriptlet and line is not None and line > len(new_lines):
        return fail(f"cited line {line} is beyond the end of {scriptlet}")
    added, removed = line_counts(old_lines, new_lines)
    identical = old_lines == new_lines
    evidence.update(identical=identical, added_lines=added, removed_lines=removed)
    if not identical:
        return fail(f"install scriptlet {scriptlet} differs between commits (+{added} -{removed} lines)")
    sentence = f"install scriptlet {scriptlet} is byte-identical at both commits (sha256 {evidence['new_sha256'][:12]})"
    reason = f"install scriptlet {scriptlet} is byte-identical at both commits"
    return CheckOutcome("check_phantom_install", (rule_id,), True, reason, evidence, sentence)


# ---------------------------------------------------------------------------------------------
# check_url_in_source


def check_url_in_source(snapshot: Snapshot, rule_id: str, file: str, line: int | None, url: str | None) -> CheckOutcome:
    """The cited URL normalizes, names a routable host and is declared in the sources at new_commit."""
    evidence: dict[str, Any] = {
        "file": file,
        "line": line,
        "url": url,
        "normalized_url": None,
        "host": None,
        "routable": None,
        "declared": None,
        "declared_in": None,
    }

    def outcome(reason: str, passed: bool = False, sentence: str = "") -> CheckOutcome:
        return CheckOutcome("check_url_in_source", (rule_id,), passed, reason, evidence, sentence)

    if url is None:
        return outcome(f"evidence for {rule_id} carries no url")
    parsed = parse_url(url)
    if parsed is None:
        return outcome(f"URL {url} cannot be normalized")
    routable = is_routable_host(parsed.host)
    evidence.update(normalized_url=parsed.url, host=parsed.host, routable=routable)
    if not routable:
        return outcome(f"URL {url} host {parsed.host} is not routable")
    new = snapshot.new
    declared_in = [
        name
        for name, urls in (("PKGBUILD", new.prologue.source_urls), (".SRCINFO", new.srcinfo.source_urls))
        if parsed.url in urls
    ]
    evidence.update(declared=bool(declared_in), declared_in=declared_in)
    if not declared_in:
        return outcome(f"URL {parsed.url} is not declared in the sources at commit {new.commit}")
    sentence = f"URL {parsed.url} is declared in the sources at the new commit"
    return outcome(f"URL {parsed.url} is declared in the sources at commit {new.commit}", True, sentence)


def no_check(rule_id: str, file: str, line: int | None) -> CheckOutcome:
    """A cited rule without a deterministic check: always fails, so the verdict is not verified."""
    evidence = {"file": file, "line": line}
    return CheckOutcome("no_check", (rule_id,), False, f"no deterministic check for rule {rule_id}", evidence)


def run_item(
    session: AurSession, snapshot: Snapshot, rule_id: str, file: str, line: int | None, url: str | None
) -> CheckOutcome:
    """Route one evidence item and run its check."""
    routed = route(rule_id, file)
    if routed == "check_phantom_install":
        return check_phantom_install(session, snapshot, rule_id, file, line)
    if routed == "check_url_in_source":
        return check_url_in_source(snapshot, rule_id, file, line, url)
    return no_check(rule_id, file, line)


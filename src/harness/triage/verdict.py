"""Strict reading of object inputs (docs/triage.md §2) and validation of verdict schema v1 (docs/triage.md §4).

The model is a small hand-written validator rather than pydantic: the spec fixes one message per
rule, naming the JSON path, and a first-failure-wins order (unknown and missing keys, then fields
in schema order); pydantic collects every error, orders them its own way and words them itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NoReturn, cast

from harness import files
from harness.text.canonjson import StrictJSONError, depth, dumps, json_type, loads_strict
from harness.text.formatgate import JsonPath, Mode, check_tree, json_path
from harness.triage.names import (
    base_rule_id,
    is_commit,
    is_evidence_file,
    is_fatal,
    is_package_name,
    is_rule_id,
    is_timestamp,
    is_version,
)

VERDICT_MAX_BYTES = 1_048_576
RESULT_MAX_BYTES = 2_097_152
MAX_DEPTH = 16

MAX_RATIONALE_CHARS = 4_000
MAX_EVIDENCE = 64
MAX_CLAIM_CHARS = 500
MAX_URL_CHARS = 2_048
MAX_LINE = 10_000_000
MAX_CHANGES = 64
MAX_REASON_CHARS = 2_000
MAX_IOC_VALUE_CHARS = 2_000
MAX_PROVENANCE_CHARS = 1_000
MAX_LABEL_CHARS = 128
MAX_NOTE_CHARS = 1_000
MAX_CODE_FIXES = 8
MAX_FIX_PATH_CHARS = 1_024
MAX_DIFF_BYTES = 262_144
MAX_DIFFS_TOTAL_BYTES = 786_432

VERDICTS = ("FP", "TP", "uncertain")
CONFIDENCES = ("low", "medium", "high")
IOC_TYPES = ("package", "domain", "hash", "file_path", "pkgbuild_pattern")
IOC_CONFIDENCES = ("confirmed", "high", "medium")
CHANGE_KINDS = ("suppression", "ioc")

_TOP_KEYS = (
    "schema_version",
    "package",
    "verdict",
    "confidence",
    "rationale",
    "transition",
    "evidence",
    "proposed_changes",
    "code_fixes",
)
_TRANSITION_KEYS = ("old_version", "new_version", "old_commit", "new_commit")
_IOC_REQUIRED = ("kind", "type", "value", "confidence", "provenance")
_IOC_OPTIONAL = ("campaign", "incident", "expires_at", "note")
_URL = re.compile(r"(?i:https?|ftp)://[\x21-\x7e]+")
_ECHO_MAX_CHARS = 64

# Provenance is free text an agent writes (docs/decisions.md, Triage rendering), so it is prose like a note.
_PROSE_LINE_FIELDS = frozenset(
    {
        ("evidence", "claim"),
        ("proposed_changes", "reason"),
        ("proposed_changes", "note"),
        ("proposed_changes", "provenance"),
    }
)


class ObjectInputError(ValueError):
    """An object input (a verdict, a result) refused by strict reading or by the verdict schema; maps to
    invalid_input. Named apart from pydantic's ValidationError, which this validator does not use."""


@dataclass(frozen=True)
class Transition:
    """The version and commit pair a verdict binds; the old side is both null or both set."""

    old_version: str | None
    new_version: str
    old_commit: str | None
    new_commit: str


@dataclass(frozen=True)
class Evidence:
    """One cited finding."""

    rule_id: str
    file: str
    line: int | None
    claim: str
    url: str | None


@dataclass(frozen=True)
class Suppression:
    """A proposed suppression of one rule (FP)."""

    rule_id: str
    reason: str


@dataclass(frozen=True)
class IocChange:
    """A proposed indicator (TP); optional fields are None when absent or null."""

    type: str
    value: str
    confidence: str
    provenance: str
    campaign: str | None
    incident: str | None
    expires_at: str | None
    note: str | None


@dataclass(frozen=True)
class CodeFix:
    """A proposed unified diff of one watcher file; gated in full only by fp_agent_pr."""

    path: str
    diff: str


@dataclass(frozen=True)
class Verdict:
    """A validated verdict: typed fields plus the document as submitted and its digest."""

    document: dict[str, Any]
    sha256: str
    package: str
    verdict: Literal["FP", "TP", "uncertain"]
    confidence: str
    rationale: str
    transition: Transition | None
    evidence: tuple[Evidence, ...]
    proposed_changes: tuple[Suppression | IocChange, ...]
    code_fixes: tuple[CodeFix, ...]


# ---------------------------------------------------------------------------------------------
# Strict reading


def _refuse(label: str, problem: str) -> NoReturn:
    raise ObjectInputError(f"{label}: {problem}")


def _too_large(label: str, cap: int) -> NoReturn:
    _refuse(label, f"input is larger than {cap:,} bytes")


def _parse(data: str | bytes, label: str) -> dict[str, Any]:
    try:
        value = loads_strict(data, max_depth=MAX_DEPTH)
    except StrictJSONError as exc:
        _refuse(label, str(exc))
    if not isinstance(value, dict):
        _refuse(label, "the top level is not a JSON object")
    return value


def read_object_text(text: str, cap: int, label: str = "verdict") -> dict[str, Any]:
    """Parse JSON text under the strict reading rules; its UTF-8 size is checked first."""
    if len(text) > cap or len(text.encode("utf-8", "surrogatepass")) > cap:
        _too_large(label, cap)
    return _parse(text, label)


def read_object_file(path: str | os.PathLike[str], cap: int, label: str = "verdict") -> dict[str, Any]:
    """Read a regular, non-symlink file of at most `cap` bytes (harness.files) and parse it strictly."""
    try:
        data = files.read_regular(path, cap)
    except files.FileTooLarge:
        _too_large(label, cap)
    except files.FileRefused as exc:
        _refuse(label, str(exc))
    return _parse(data, label)


def read_object_received(obj: Any, cap: int, label: str = "verdict") -> dict[str, Any]:
    """Check an object the protocol layer already parsed: the cap applies to its canonical JSON."""
    try:
        text = dumps(obj)
    except RecursionError:
        _refuse(label, f"nesting is deeper than {MAX_DEPTH} levels")
    except (TypeError, ValueError) as exc:
        _refuse(label, f"not a JSON value ({exc})")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        _refuse(label, "a string contains a lone surrogate, which UTF-8 cannot encode")
    if size > cap:
        _too_large(label, cap)
    if not isinstance(obj, Mapping):
        _refuse(label, "the top level is not a JSON object")
    if depth(obj) > MAX_DEPTH:
        _refuse(label, f"nesting is deeper than {MAX_DEPTH} levels")
    # Re-reading the canonical text detaches the result from the caller and leaves only JSON types.
    value: dict[str, Any] = json.loads(text)
    return value


def read_object(source: Any, cap: int, label: str = "verdict") -> dict[str, Any]:
    """One reader for object inputs: a received object, JSON text (first non-blank `{` or `[`), or a file path."""
    if isinstance(source, os.PathLike):
        return read_object_file(source, cap, label)
    if isinstance(source, str):
        stripped = source.lstrip(" \t\r\n")
        if not stripped or stripped[0] in "{[":
            return read_object_text(source, cap, label)
        return read_object_file(source, cap, label)
    return read_object_received(source, cap, label)


# ---------------------------------------------------------------------------------------------
# Digests and gate modes


def verdict_sha256(document: Mapping[str, Any]) -> str:
    """Lowercase hex SHA-256 of the canonical JSON of the verdict as submitted."""
    return hashlib.sha256(dumps(document).encode("utf-8")).hexdigest()


def hash12(sha256: str) -> str:
    """The first 12 hex characters of a digest (branch names)."""
    return sha256[:12]


def verdict_mode(path: JsonPath) -> Mode | None:
    """Gate mode of a path inside a verdict document; every unlisted path is `line`.

    Code-fix diffs get None: their context and removed lines carry whatever the watcher's file holds,
    so only the code-fix gate of fp_agent_pr checks them, line by line, and a bad fix is rejected alone.
    """
    if path == ("rationale",):
        return "prose_text"
    if len(path) == 3 and isinstance(path[1], int):
        pair = (path[0], path[2])
        if pair in _PROSE_LINE_FIELDS:
            return "prose_line"
        if pair == ("code_fixes", "diff"):
            return None
    return "line"


# ---------------------------------------------------------------------------------------------
# Model (step 3)


def _fail(path: JsonPath, problem: str) -> NoReturn:
    raise ObjectInputError(f"verdict: {json_path(path)}: {problem}")


def _show(value: Any) -> str:
    """A short rendering of an offending value; long strings are described, not echoed."""
    if isinstance(value, str):
        return json.dumps(value) if len(value) <= _ECHO_MAX_CHARS else f"a string of {len(value):,} characters"
    if value is None or isinstance(value, (bool, int, float)):
        return json.dumps(value)
    return json_type(value)


def _object(value: Any, path: JsonPath, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict[str, Any]:
    if not isinstance(value, dict):
        _fail(path, f"expected an object, got {json_type(value)}")
    allowed = set(required) | set(optional)
    for key in sorted(value):
        if key not in allowed:
            _fail((*path, key), "unknown key")
    for key in required:
        if key not in value:
            _fail((*path, key), "required key is missing")
    return value


def _array(value: Any, path: JsonPath, most: int) -> list[Any]:
    if not isinstance(value, list):
        _fail(path, f"expected an array, got {json_type(value)}")
    if len(value) > most:
        _fail(path, f"must have at most {most:,} items, got {len(value):,}")
    return value


def _string(value: Any, path: JsonPath) -> str:
    if not isinstance(value, str):
        _fail(path, f"expected a string, got {json_type(value)}")
    return value


def _text(value: Any, path: JsonPath, most: int) -> str:
    text = _string(value, path)
    if not 1 <= len(text) <= most:
        _fail(path, f"must be 1 to {most:,} characters, got {len(text):,}")
    return text


def _named(value: Any, path: JsonPath, test: Callable[[str], bool], what: str) -> str:
    text = _string(value, path)
    if not test(text):
        _fail(path, f"{_show(text)} is not {what}")
    return text


def _choice(value: Any, path: JsonPath, choices: tuple[str, ...]) -> str:
    text = _string(value, path)
    if text not in choices:
        _fail(path, f"{_show(text)} is not one of {', '.join(choices)}")
    return text


def _optional_text(item: Mapping[str, Any], key: str, path: JsonPath, most: int) -> str | None:
    value = item.get(key)
    return None if value is None else _text(value, (*path, key), most)


def _transition(value: Any, path: JsonPath) -> Transition | None:
    if value is None:
        return None
    item = _object(value, path, _TRANSITION_KEYS)
    old_version = item["old_version"]
    if old_version is not None:
        _named(old_version, (*path, "old_version"), is_version, "a version")
    new_version = _named(item["new_version"], (*path, "new_version"), is_version, "a version")
    old_commit = item["old_commit"]
    if old_commit is not None:
        _named(old_commit, (*path, "old_commit"), is_commit, "a commit")
    new_commit = _named(item["new_commit"], (*path, "new_commit"), is_commit, "a commit")
    if (old_version is None) != (old_commit is None):
        _fail(path, "old_version and old_commit must both be null or both be set")
    return Transition(old_version, new_version, old_commit, new_commit)


def _evidence(value: Any, path: JsonPath) -> Evidence:
    item = _object(value, path, ("rule_id", "file", "line", "claim"), ("url",))
    rule_id = _named(item["rule_id"], (*path, "rule_id"), is_rule_id, "a rule id")
    file = _named(item["file"], (*path, "file"), is_evidence_file, "an evidence file path")
    line = item["line"]
    if line is not None and (type(line) is not int or not 1 <= line <= MAX_LINE):
        _fail((*path, "line"), f"must be an integer 1 to {MAX_LINE:,} or null, got {_show(line)}")
    claim = _text(item["claim"], (*path, "claim"), MAX_CLAIM_CHARS)
    url = item.get("url")
    if url is not None:
        _text(url, (*path, "url"), MAX_URL_CHARS)
        if _URL.fullmatch(url) is None:
            _fail((*path, "url"), f"{_show(url)} is not an http, https or ftp URL")
    return Evidence(rule_id, file, line, claim, url)


def _change(value: Any, path: JsonPath) -> Suppression | IocChange:
    if not isinstance(value, dict):
        _fail(path, f"expected an object, got {json_type(value)}")
    if "kind" not in value:
        _fail((*path, "kind"), "required key is missing")
    kind = _choice(value["kind"], (*path, "kind"), CHANGE_KINDS)
    if kind == "suppression":
        item = _object(value, path, ("kind", "rule_id", "reason"))
        rule_id = _named(item["rule_id"], (*path, "rule_id"), is_rule_id, "a rule id")
        return Suppression(rule_id, _text(item["reason"], (*path, "reason"), MAX_REASON_CHARS))
    item = _object(value, path, _IOC_REQUIRED, _IOC_OPTIONAL)
    ioc_type = _choice(item["type"], (*path, "type"), IOC_TYPES)
    ioc_value = _text(item["value"], (*path, "value"), MAX_IOC_VALUE_CHARS)
    confidence = _choice(item["confidence"], (*path, "confidence"), IOC_CONFIDENCES)
    provenance = _text(item["provenance"], (*path, "provenance"), MAX_PROVENANCE_CHARS)
    campaign = _optional_text(item, "campaign", path, MAX_LABEL_CHARS)
    incident = _optional_text(item, "incident", path, MAX_LABEL_CHARS)
    expires_at = item.get("expires_at")
    if expires_at is not None:
        _named(expires_at, (*path, "expires_at"), is_timestamp, "a date or a YYYY-MM-DDTHH:MM:SSZ timestamp")
    note = _optional_text(item, "note", path, MAX_NOTE_CHARS)
    return IocChange(ioc_type, ioc_value, confidence, provenance, campaign, incident, expires_at, note)


def _code_fixes(value: Any, path: JsonPath) -> tuple[CodeFix, ...]:
    fixes: list[CodeFix] = []
    first_index: dict[str, int] = {}
    total = 0
    for i, raw in enumerate(_array(value, path, MAX_CODE_FIXES)):
        item_path = (*path, i)
        item = _object(raw, item_path, ("path", "diff"))
        fix_path = _text(item["path"], (*item_path, "path"), MAX_FIX_PATH_CHARS)
        diff = _string(item["diff"], (*item_path, "diff"))
        size = len(diff.encode("utf-8"))
        if not 1 <= size <= MAX_DIFF_BYTES:
            _fail((*item_path, "diff"), f"must be 1 to {MAX_DIFF_BYTES:,} UTF-8 bytes, got {size:,}")
        if fix_path in first_index:
            _fail((*item_path, "path"), f"duplicate of {json_path((*path, first_index[fix_path], 'path'))}")
        first_index[fix_path] = i
        total += size
        fixes.append(CodeFix(fix_path, diff))
    if total > MAX_DIFFS_TOTAL_BYTES:
        _fail(path, f"diffs total {total:,} bytes, over {MAX_DIFFS_TOTAL_BYTES:,}")
    return tuple(fixes)


def _model(document: dict[str, Any], sha256: str) -> Verdict:
    top = _object(document, (), _TOP_KEYS)
    schema_version = top["schema_version"]
    if type(schema_version) is not int or schema_version != 1:
        _fail(("schema_version",), f"must be the integer 1, got {_show(schema_version)}")
    package = _named(top["package"], ("package",), is_package_name, "a package name")
    verdict = _choice(top["verdict"], ("verdict",), VERDICTS)
    confidence = _choice(top["confidence"], ("confidence",), CONFIDENCES)
    rationale = _text(top["rationale"], ("rationale",), MAX_RATIONALE_CHARS)
    transition = _transition(top["transition"], ("transition",))
    evidence = tuple(
        _evidence(item, ("evidence", i)) for i, item in enumerate(_array(top["evidence"], ("evidence",), MAX_EVIDENCE))
    )
    changes = tuple(
        _change(item, ("proposed_changes", i))
        for i, item in enumerate(_array(top["proposed_changes"], ("proposed_changes",), MAX_CHANGES))
    )
    fixes = _code_fixes(top["code_fixes"], ("code_fixes",))
    return Verdict(
        document=document,
        sha256=sha256,
        package=package,
        verdict=cast(Literal["FP", "TP", "uncertain"], verdict),
        confidence=confidence,
        rationale=rationale,
        transition=transition,
        evidence=evidence,
        proposed_changes=changes,
        code_fixes=fixes,
    )


# ---------------------------------------------------------------------------------------------
# Cross-field rules (step 4)


def _check_fp(v: Verdict) -> None:
    t = v.transition
    if t is None or t.old_version is None or t.old_commit is None:
        _fail(("transition",), "an FP verdict needs both versions and both commits (X1)")
    if t.old_commit.startswith(t.new_commit) or t.new_commit.startswith(t.old_commit):
        _fail(("transition",), "old_commit and new_commit must differ and neither may be a prefix of the other (X1)")
    if not v.evidence:
        _fail(("evidence",), "an FP verdict needs at least one evidence item (X2)")
    suppressed: dict[str, int] = {}
    for i, change in enumerate(v.proposed_changes):
        if not isinstance(change, Suppression):
            _fail(("proposed_changes", i, "kind"), "an FP verdict proposes only suppressions (X3)")
        if change.rule_id in suppressed:
            _fail(("proposed_changes", i, "rule_id"), f"rule {change.rule_id} is suppressed twice (X3)")
        suppressed[change.rule_id] = i
    if not suppressed:
        _fail(("proposed_changes",), "an FP verdict needs at least one suppression (X3)")
    cited = {item.rule_id for item in v.evidence}
    if set(suppressed) != cited:
        _fail(
            ("proposed_changes",),
            f"suppressed rules ({', '.join(sorted(suppressed))}) differ from the evidence rules "
            f"({', '.join(sorted(cited))}) (X3)",
        )
    for i, item in enumerate(v.evidence):
        if is_fatal(item.rule_id):
            _fail(
                ("evidence", i, "rule_id"),
                f"rule {base_rule_id(item.rule_id)} is FATAL and can never be suppressed (X4)",
            )
    for rule_id, i in suppressed.items():
        if is_fatal(rule_id):
            _fail(
                ("proposed_changes", i, "rule_id"),
                f"rule {base_rule_id(rule_id)} is FATAL and can never be suppressed (X4)",
            )


def _check_tp(v: Verdict) -> None:
    if not v.proposed_changes:
        _fail(("proposed_changes",), "a TP verdict needs at least one ioc change (X5)")
    for i, change in enumerate(v.proposed_changes):
        if not isinstance(change, IocChange):
            _fail(("proposed_changes", i, "kind"), "a TP verdict proposes only ioc changes (X5)")
    if v.code_fixes:
        _fail(("code_fixes",), "a TP verdict carries no code fixes (X5)")


def _check_uncertain(v: Verdict) -> None:
    if v.proposed_changes:
        _fail(("proposed_changes",), "an uncertain verdict proposes no changes (X6)")
    if v.code_fixes:
        _fail(("code_fixes",), "an uncertain verdict carries no code fixes (X6)")


def _check_iocs(v: Verdict) -> None:
    for i, change in enumerate(v.proposed_changes):
        if not isinstance(change, IocChange):
            continue
        if change.campaign is None and change.incident is None:
            _fail(("proposed_changes", i), "an ioc change needs a campaign or an incident (X7)")
        if change.type == "package" and change.expires_at is None:
            _fail(("proposed_changes", i, "expires_at"), "a package indicator needs expires_at (X7)")


def _cross_field(v: Verdict) -> None:
    if v.verdict == "FP":
        _check_fp(v)
    elif v.verdict == "TP":
        _check_tp(v)
    else:
        _check_uncertain(v)
    _check_iocs(v)


# ---------------------------------------------------------------------------------------------
# Entry points


def validate_verdict(document: Mapping[str, Any]) -> Verdict:
    """Run docs/triage.md §4 steps 1 to 4 on an already-read object: size and depth, gate, model, cross-field rules."""
    plain = read_object_received(document, VERDICT_MAX_BYTES, "verdict")
    check_tree(plain, verdict_mode)
    verdict = _model(plain, verdict_sha256(plain))
    _cross_field(verdict)
    return verdict


def load_verdict(source: Any) -> Verdict:
    """Read a verdict (text, file path or received object) under the 1 MiB cap and validate it."""
    return validate_verdict(read_object(source, VERDICT_MAX_BYTES, "verdict"))

"""Locate, pin-check, parse and cache the operator-rule corpus (docs/investigate.md §7)."""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import os
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.events import AliasEvent, CollectionStartEvent, ScalarEvent
from yaml.nodes import MappingNode

from harness import files
from harness.text.canonjson import json_type
from harness.text.casefold import ci_key, normalize_key
from harness.text.sanitize import echo, is_clean

MAX_CORPUS_BYTES = 1024 * 1024
MAX_RULES = 1000
MAX_METADATA_MATCH = 16
MAX_FAMILY_BYTES = 128
MAX_DIRECTIVE_BYTES = 4096
WORKSPACE_RELPATH = Path("rules") / "operator-decisions.yaml"
EMBEDDED_NAME = "operator-decisions.yaml"

RULE_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_YAML = "tag:yaml.org,2002:"
# Only the JSON-like core types may be tagged explicitly; everything else (python/*,
# binary, set, omap, timestamp, local `!` tags) is refused rather than interpreted.
_ALLOWED_TAGS = frozenset(_YAML + t for t in ("str", "int", "float", "bool", "null", "seq", "map"))
_CACHE_SIZE = 32


@dataclass(frozen=True)
class Rule:
    """One operator decision: a family, the predicates it needs, and what to do."""

    id: str
    family: str
    metadata_match: dict[str, str]
    operator_directive: str

    def to_json(self) -> dict[str, Any]:
        """The docs/investigate.md §2 Rule shape; `metadata_match` is always present."""
        return {
            "id": self.id,
            "applies_to": {"family": self.family, "metadata_match": dict(self.metadata_match)},
            "operator_directive": self.operator_directive,
        }


@dataclass(frozen=True)
class Corpus:
    """A parsed corpus, the sha256 of its bytes and where it came from (explicit, workspace, embedded)."""

    rules: tuple[Rule, ...]
    sha256: str
    source: str


class CorpusError(Exception):
    """The corpus could not be located, verified or parsed; the message names the source."""


class _CorpusMissing(CorpusError):
    """The corpus file does not exist; only the workspace location may fall through on it."""


class _Invalid(ValueError):
    """A problem in the corpus bytes, before the source label is attached."""


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader refusing aliases, anchors, non-core tags, merge keys and duplicate keys."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, AliasEvent):
            raise ConstructorError(None, None, "aliases are not allowed", event.start_mark)
        if isinstance(event, (ScalarEvent, CollectionStartEvent)):
            if event.anchor is not None:
                raise ConstructorError(None, None, "anchors are not allowed", event.start_mark)
            if event.tag is not None and event.tag not in _ALLOWED_TAGS:
                raise ConstructorError(None, None, f"non-standard tag {event.tag!r} is not allowed", event.start_mark)
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if key_node.tag == _YAML + "merge":
                    raise ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        "merge keys are not allowed",
                        key_node.start_mark,
                    )
                key = self.construct_object(key_node, deep=deep)
                try:
                    duplicate = key in seen
                except TypeError:
                    raise ConstructorError(
                        "while constructing a mapping", node.start_mark, "found unhashable key", key_node.start_mark
                    ) from None
                if duplicate:
                    raise ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        f"duplicate key {_quote(key)}",
                        key_node.start_mark,
                    )
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_strict_yaml(text: str) -> Any:
    """Safe YAML with the corpus's refusals (aliases, anchors, non-core tags, merge and duplicate keys), for the
    other YAML the harness reads (eval scenarios); raises ValueError naming the line and column."""
    return _load_yaml(text)


def _quote(value: Any) -> str:
    """Echo a corpus value in a message the way the specs echo input: JSON of its sanitized form."""
    return echo(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _line_col(text: str, position: int) -> tuple[int, int]:
    line = text.count("\n", 0, position) + 1
    return line, position - (text.rfind("\n", 0, position) + 1) + 1


def _load_yaml(text: str) -> Any:
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - _StrictLoader is a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = ", ".join(part for part in (exc.context, exc.problem) if part) or "malformed YAML"
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise _Invalid(f"invalid YAML{where}: {problem}") from exc
    except yaml.reader.ReaderError as exc:
        line, col = _line_col(text, exc.position)
        raise _Invalid(
            f"invalid YAML at line {line}, column {col}: {exc.reason} (character #x{ord(str(exc.character)):04x})"
        ) from exc
    except yaml.YAMLError as exc:
        raise _Invalid(f"invalid YAML: {exc}") from exc
    except RecursionError as exc:
        raise _Invalid("invalid YAML: nesting is too deep") from exc


def _check_keys(obj: dict[Any, Any], where: str, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> None:
    for key in obj:
        if key not in required and key not in optional:
            raise _Invalid(f"{where}: unknown key {_quote(key)}")
    for key in required:
        if key not in obj:
            raise _Invalid(f"{where}: missing key {_quote(key)}")


def _clean_identifier(value: str) -> bool:
    return is_clean(value) and value == value.strip()


def _parse_metadata_match(raw: Any, where: str) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise _Invalid(f"{where}: expected an object, got {json_type(raw)}")
    if len(raw) > MAX_METADATA_MATCH:
        raise _Invalid(f"{where}: at most {MAX_METADATA_MATCH} entries, got {len(raw)}")
    out: dict[str, str] = {}
    for key, want in raw.items():
        if not isinstance(key, str) or not key or not _clean_identifier(key) or normalize_key(key) != key:
            raise _Invalid(
                f'{where}: key {_quote(key)} must be a clean, non-empty normalized key such as "maintenance_window"'
            )
        if not isinstance(want, str):
            raise _Invalid(f"{where}: metadata_match values must be quoted strings (key {_quote(key)})")
        if not want or not is_clean(want):
            raise _Invalid(
                f"{where}: value of {_quote(key)} must be a non-empty string without control or invisible characters"
            )
        out[key] = want
    return out


def _parse_rule(raw: Any, index: int, seen_ids: dict[str, str]) -> Rule:
    where = f"rules[{index}]"
    if not isinstance(raw, dict):
        raise _Invalid(f"{where}: expected an object, got {json_type(raw)}")
    rule_id = raw.get("id")
    if isinstance(rule_id, str):
        where = f"rules[{index}] ({_quote(rule_id)})"
    _check_keys(raw, where, ("id", "applies_to", "operator_directive"))
    if not isinstance(rule_id, str) or not RULE_ID_RE.fullmatch(rule_id):
        raise _Invalid(f"{where}: id must match [A-Za-z0-9][A-Za-z0-9._-]{{0,63}}")
    first = seen_ids.get(ci_key(rule_id))
    if first is not None:
        raise _Invalid(
            f"{where}: duplicate rule id {_quote(rule_id)} (ids are unique ignoring case; first {_quote(first)})"
        )
    seen_ids[ci_key(rule_id)] = rule_id

    applies_to = raw["applies_to"]
    if not isinstance(applies_to, dict):
        raise _Invalid(f"{where}: applies_to: expected an object, got {json_type(applies_to)}")
    _check_keys(applies_to, f"{where}: applies_to", ("family",), ("metadata_match",))
    family = applies_to["family"]
    if (
        not isinstance(family, str)
        or not family
        or not _clean_identifier(family)
        or len(family.encode("utf-8")) > MAX_FAMILY_BYTES
    ):
        raise _Invalid(
            f"{where}: applies_to.family must be a non-empty clean string of at most {MAX_FAMILY_BYTES} bytes"
        )
    metadata_match = _parse_metadata_match(applies_to.get("metadata_match", {}), f"{where}: applies_to.metadata_match")

    directive = raw["operator_directive"]
    if (
        not isinstance(directive, str)
        or not directive
        or not is_clean(directive, multiline=True)
        or len(directive.encode("utf-8")) > MAX_DIRECTIVE_BYTES
    ):
        raise _Invalid(
            f"{where}: operator_directive must be a non-empty string of at most {MAX_DIRECTIVE_BYTES} bytes"
            " without control or invisible characters (newlines and tabs allowed)"
        )
    return Rule(id=rule_id, family=family, metadata_match=metadata_match, operator_directive=directive)


def parse_corpus(data: bytes) -> tuple[Rule, ...]:
    """Parse and validate corpus bytes; raises ValueError naming the problem."""
    if len(data) > MAX_CORPUS_BYTES:
        raise _Invalid(f"file exceeds {MAX_CORPUS_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Invalid(f"not valid UTF-8 at byte {exc.start}") from exc
    doc = _load_yaml(text)
    if not isinstance(doc, dict):
        raise _Invalid(f"top level: expected an object with version and rules, got {json_type(doc)}")
    _check_keys(doc, "top level", ("version", "rules"))
    version = doc["version"]
    if type(version) is not int or version != 1:
        raise _Invalid(f"unsupported version {_quote(version)}; expected 1")
    rules = doc["rules"]
    if not isinstance(rules, list):
        raise _Invalid(f"rules: expected an array, got {json_type(rules)}")
    if len(rules) > MAX_RULES:
        raise _Invalid(f"at most {MAX_RULES} rules, got {len(rules)}")
    seen_ids: dict[str, str] = {}
    return tuple(_parse_rule(raw, index, seen_ids) for index, raw in enumerate(rules))


class _Cache:
    """A small thread-safe LRU of parsed corpora; only successes are stored."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[tuple[Any, ...], Corpus] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> Corpus | None:
        with self._lock:
            corpus = self._items.get(key)
            if corpus is not None:
                self._items.move_to_end(key)
            return corpus

    def put(self, key: tuple[Any, ...], corpus: Corpus) -> None:
        with self._lock:
            self._items[key] = corpus
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


_cache = _Cache(_CACHE_SIZE)


def clear_cache() -> None:
    """Forget every parsed corpus (tests and long-running servers after an operator edit)."""
    _cache.clear()


def _verify_and_parse(data: bytes, source: str, pin: str | None) -> Corpus:
    digest = hashlib.sha256(data).hexdigest()
    if pin and digest != pin:
        raise CorpusError(f"rule corpus sha256 mismatch: expected {pin}, got {digest} ({source} corpus)")
    try:
        rules = parse_corpus(data)
    except _Invalid as exc:
        raise CorpusError(f"rule corpus {source}: {exc}") from exc
    return Corpus(rules=rules, sha256=digest, source=source)


def _load_path(path: Path, source: str, pin: str | None) -> Corpus:
    # An operator may keep the corpus behind a symlink (a dotfiles checkout), so the path is followed;
    # harness.files still refuses a FIFO or device and never blocks on one.
    try:
        with files.open_regular(path, cap=MAX_CORPUS_BYTES, follow_symlinks=True) as (fd, info):
            key = (source, os.path.abspath(path), info.st_size, info.st_mtime_ns, pin or "")
            cached = _cache.get(key)
            if cached is not None:
                return cached
            data = files.read_capped(fd, path, MAX_CORPUS_BYTES)
    except files.FileMissing as exc:
        raise _CorpusMissing(f"rule corpus {source}: {exc}") from None
    except files.FileRefused as exc:
        raise CorpusError(f"rule corpus {source}: {exc}") from None
    corpus = _verify_and_parse(data, source, pin)
    _cache.put(key, corpus)
    return corpus


def _load_embedded(pin: str | None) -> Corpus:
    key = ("embedded", pin or "")
    cached = _cache.get(key)
    if cached is not None:
        return cached
    try:
        data = importlib.resources.files(__package__).joinpath(EMBEDDED_NAME).read_bytes()
    except OSError as exc:
        raise CorpusError(f"rule corpus embedded: cannot read the packaged corpus: {exc.strerror or exc}") from exc
    corpus = _verify_and_parse(data, "embedded", pin)
    _cache.put(key, corpus)
    return corpus


def load_corpus(*, explicit: Path | None, workspace: Path | None, pin: str | None) -> Corpus:
    """The corpus from `--rules`, else the workspace file, else the embedded copy; raises CorpusError.

    `workspace` is the workspace directory; `pin` is the normalized sha256 from config.py (None or "" = no pin).
    """
    if explicit is not None:
        return _load_path(explicit, "explicit", pin)
    if workspace is not None:
        try:
            return _load_path(workspace / WORKSPACE_RELPATH, "workspace", pin)
        except _CorpusMissing:
            pass
    return _load_embedded(pin)

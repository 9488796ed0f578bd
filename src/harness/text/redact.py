"""The shared redactor (docs/ledger.md §6): known secret values and secret shapes become `[REDACTED:<id>]`.

One module serves the ledger, the stderr log formatter, get_raw_event and sidecars; no other code in
the project holds secret patterns. `build_redactor` is called once at startup by config.py.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any, NamedTuple

from harness.text import canonjson
from harness.text.casefold import normalize_key
from harness.text.redact_detectors import KEY_STOP_SUFFIXES, QVAL_SOURCES, STOP_WORDS, VAL_CLASS
from harness.text.redact_engine import ENGINE, ShapeEngine, example_problems
from harness.text.redact_escaped import MAX_LEVELS as MAX_ESCAPED_LEVELS
from harness.text.redact_escaped import MIN_VALUE_BYTES as MIN_ESCAPED_BYTES
from harness.text.redact_escaped import encoded_forms, views
from harness.text.redact_known import (
    BOUNDED_BELOW_BYTES,
    CUT_PREFIX_MIN_BYTES,
    EXCLUDED_SUFFIXES,
    KNOWN_SECRET_ID,
    MAX_VALUE_BYTES,
    MAX_VALUES,
    MIN_VALUE_BYTES,
    NAME_SUBSTRINGS,
    NAME_WORDS,
    NOT_SECRET_WORDS,
    KnownMatcher,
    KnownSecrets,
    json_text,
)
from harness.text.redact_rules import (
    CATALOGUE,
    WORKSPACE_FIRST_NUMBER,
    Rule,
    RuleFileError,
    package_fragments,
    parse_rules,
)
from harness.text.redact_spans import CLASS_NAMES, Merged, merge, rebuild, usable
from harness.text.redact_text import (
    CAP_MARKER,
    PLACEHOLDER_FORMAT,
    boundary_at_or_before,
    cut_outside_placeholders,
    sanitize,
    utf8_size,
)

__all__ = [
    "CREDENTIAL_KEY_ID",
    "CREDENTIAL_PLACEHOLDER",
    "RULESET_FINGERPRINT",
    "RULESET_VERSION",
    "KnownSecrets",
    "Explained",
    "Processed",
    "Redactor",
    "Rule",
    "RuleFileError",
    "build_redactor",
    "describe_ruleset",
    "is_credential_key",
    "load_workspace_rules",
]

RULESET_VERSION = 4

CREDENTIAL_KEY_ID = "credential_key"
CREDENTIAL_PLACEHOLDER = PLACEHOLDER_FORMAT.format(rule_id=CREDENTIAL_KEY_ID)
# Compared without underscores so that all-caps spellings (`SECRETACCESSKEY`, docs/investigate.md §9.5) match too.
_CREDENTIAL_KEYS = ("session_token", "secret_access_key")
_CREDENTIAL_KEYS_JOINED = frozenset(key.replace("_", "") for key in _CREDENTIAL_KEYS)

_SHORT_MEMO_CHARS = 256
_SHORT_MEMO_SIZE = 4096

# A redaction pass can only enable another match next to a placeholder it inserted; a few passes reach the fixpoint.
_MAX_PASSES = 8

# Log lines keep tab, CR and LF (escaped later); every other C0 and C1 control, and DEL, is dropped.
_LINE_CONTROLS = {code: None for code in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)] if code not in (9, 10, 13)}


def is_credential_key(key: str) -> bool:
    """The `credential_key` tree rule: a key naming a session token or a secret access key in any casing."""
    return normalize_key(key).replace("_", "") in _CREDENTIAL_KEYS_JOINED


def describe_ruleset(engine: ShapeEngine = ENGINE) -> dict[str, Any]:
    """The canonical description of every rule, the terminators and the placeholder format."""
    return {
        "placeholder": PLACEHOLDER_FORMAT,
        "cap_marker": CAP_MARKER.decode("ascii"),
        "classes": list(CLASS_NAMES),
        "known": {
            "id": KNOWN_SECRET_ID,
            "min_bytes": MIN_VALUE_BYTES,
            "whole_token_below_bytes": BOUNDED_BELOW_BYTES,
            "token_bytes": "A-Za-z0-9_",
            "cut_prefix_min_bytes": CUT_PREFIX_MIN_BYTES,
            "not_values": ["no letter or digit", "JSON number", *sorted(NOT_SECRET_WORDS)],
            "max_bytes": MAX_VALUE_BYTES,
            "max_values": MAX_VALUES,
            "name_substrings": list(NAME_SUBSTRINGS),
            "name_words": sorted(NAME_WORDS),
            "excluded_suffixes": list(EXCLUDED_SUFFIXES),
            "forms": ["raw", "json", "json_ascii", "percent", "percent_path", "percent_plus"],
        },
        "tree_rules": [{"id": CREDENTIAL_KEY_ID, "keys": list(_CREDENTIAL_KEYS), "compare": "normalize_key, no _"}],
        "terminators": {
            "val": VAL_CLASS.decode("latin-1"),
            "qval": {quote.decode(): source.decode("latin-1") for quote, source in QVAL_SOURCES.items()},
        },
        "stop_lists": {
            "value_words": [word.decode() for word in STOP_WORDS],
            "value_shapes": ["empty", "[REDACTED:", "only *", "only x/X", "$letter", "${", "{{", "%letter",
                             "digits after token", "/ or ~ after pwd"],
            "key_suffixes": [suffix.decode() for suffix in KEY_STOP_SUFFIXES],
        },
        "escaped_views": {
            "levels": MAX_ESCAPED_LEVELS,
            "decode": ["percent (+ as space) when a %XX is present, else one level of JSON string escapes"],
            "min_value_bytes": MIN_ESCAPED_BYTES,
            "forms": ["raw", "percent", "percent_path", "json levels 1-4"],
        },
        "rules": engine.describe(),
    }


def fingerprint(engine: ShapeEngine = ENGINE) -> str:
    """SHA-256 of the canonical description of a ruleset."""
    return hashlib.sha256(canonjson.dumps_bytes(describe_ruleset(engine))).hexdigest()


RULESET_FINGERPRINT = fingerprint()


def load_workspace_rules(text: str, source: str) -> tuple[Rule, ...]:
    """A workspace rule file's rules, refused (RuleFileError) unless each one's own examples pass.

    Workspace rules are numbered from 1000 on, may use the package's fragments, and never reuse a
    package rule's id.
    """
    rules = parse_rules(text, source, package_fragments(), first_number=WORKSPACE_FIRST_NUMBER)
    package_ids = {rule.rule_id for rule in CATALOGUE}
    for rule in rules:
        if rule.rule_id in package_ids:
            raise RuleFileError(f"{source}: rule {rule.rule_id}: field 'id' is a package rule's id")
        problems = example_problems(rule)
        if problems:
            raise RuleFileError(f"{source}: rule {rule.rule_id}: {problems[0]}")
    return rules


class Explained(NamedTuple):
    """One placeholder of a redaction: the rule that named it and the byte span of the input it replaced."""

    rule_id: str
    start: int
    end: int


class Processed(NamedTuple):
    """What `Redactor.process` returns: the stored text and what happened to it."""

    text: str
    original_bytes: int
    capped: bool
    rules_hit: tuple[str, ...]


def _strings(node: Any) -> list[str]:
    """Every distinct string of a JSON tree, dict keys included (a loop, not recursion: a result holds tens of
    thousands)."""
    found: set[Any] = set()
    pending = [node]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            found.add(item)
        elif isinstance(item, dict):
            found.update(item)  # the keys; one that is not a string is dropped below
            pending.extend(item.values())
        elif isinstance(item, (list, tuple)):
            pending.extend(item)
    return [text for text in found if isinstance(text, str)]


def _replaced(node: Any, changed: dict[str, str]) -> Any:
    """A copy of a JSON tree with the strings (keys included) in `changed` replaced; tuples become lists."""
    if isinstance(node, str):
        return changed.get(node, node)
    if isinstance(node, dict):
        return {changed.get(k, k) if isinstance(k, str) else k: _replaced(v, changed) for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        return [_replaced(v, changed) for v in node]
    return node


class Redactor:
    """Immutable and thread-safe; built once at startup by `build_redactor`."""

    __slots__ = ("_engine", "_known", "_short", "fingerprint")

    def __init__(self, known: KnownMatcher, engine: ShapeEngine = ENGINE) -> None:
        self._known = known
        self._engine = engine
        self.fingerprint = RULESET_FINGERPRINT if engine is ENGINE else fingerprint(engine)
        # Ledger rows repeat the same short strings (meta values, tool names, small arguments); redaction is a
        # pure function of (text, cap), so a bounded memo of short inputs skips the scan. lru_cache is thread-safe.
        self._short = functools.lru_cache(maxsize=_SHORT_MEMO_SIZE)(self._process)

    def __repr__(self) -> str:
        return f"Redactor(version={RULESET_VERSION}, rules={len(self._engine.rules)}, known_patterns={self._known.count})"

    def redact(self, s: str) -> str:
        """Redact text of any length (no cap)."""
        return self.process(s, 0).text

    def redact_for_ledger(self, s: str, cap_bytes: int) -> str:
        """Sanitize, cap to `cap_bytes` UTF-8 bytes (<= 0: no cap), redact, mark; at most cap + 11 bytes."""
        return self.process(s, cap_bytes).text

    def process(self, s: str, cap_bytes: int) -> Processed:
        """`redact_for_ledger` plus the original size, whether a cap applied, and the placeholder ids inserted."""
        if len(s) <= _SHORT_MEMO_CHARS:
            return self._short(s, cap_bytes)
        return self._process(s, cap_bytes)

    def _process(self, s: str, cap_bytes: int) -> Processed:
        original = utf8_size(s)
        buf = sanitize(s).encode("utf-8")
        capped = cap_bytes > 0 and len(buf) > cap_bytes
        if capped:
            buf = buf[: boundary_at_or_before(buf, cap_bytes)]
        hits: list[str] = []
        red = self._redact_body(buf, hits, capped)
        limit = cap_bytes + len(CAP_MARKER)
        if cap_bytes > 0 and len(red) + (len(CAP_MARKER) if capped else 0) > limit:
            red = self._cut_stable(red, cap_bytes, hits)
            capped = True
        out = red + CAP_MARKER if capped else red
        return Processed(out.decode("utf-8"), original, capped, tuple(sorted(set(hits))))

    def redact_line(self, s: str, cap_bytes: int = 8192) -> str:
        """One log line: controls dropped (tab kept), redacted, CR and LF escaped visibly, capped."""
        text = self.redact(s.translate(_LINE_CONTROLS))
        buf = text.replace("\r", "\\r").replace("\n", "\\n").encode("utf-8")
        if cap_bytes > 0 and len(buf) > cap_bytes:
            buf = buf[: cut_outside_placeholders(buf, cap_bytes)] + CAP_MARKER
        return buf.decode("utf-8")

    def redact_known(self, s: str) -> str:
        """Only the known-secret layer (exact configured values), for every output boundary: data stays as it is."""
        return self._known.redact(s)

    def redact_known_bytes(self, buf: bytes) -> bytes:
        """`redact_known` over bytes (the same object when nothing matched); placeholders already present are kept,
        so filtering twice changes nothing."""
        return self._known.redact_bytes(buf)

    def redact_known_tree(self, node: Any) -> Any:
        """A JSON tree with `redact_known` applied to every string, keys included (structure is kept): the tree
        itself when no string holds a known value, else a copy. Every string is searched in one pass over them
        all (a result of 2,000 events holds some 60,000), and only those holding a value are redacted."""
        if not self._known.count:
            return node
        try:
            serialized = json_text(node)
        except (TypeError, ValueError, RecursionError):
            serialized = None  # not plain JSON: its strings are searched one by one
        if serialized is not None and not self._known.in_json(serialized):
            return node
        texts = _strings(node)
        held = self._known.holders([text.encode("utf-8", "surrogatepass") for text in texts])
        changed = {texts[i]: red for i in held if (red := self.redact_known(texts[i])) is not texts[i]}
        return _replaced(node, changed) if changed else node

    def redact_json_leaves(self, obj: Any, leaf_cap: int) -> Any:
        """A copy of a JSON tree with every string leaf redacted and capped, and the credential_key rule applied."""
        return self._tree(obj, leaf_cap)[0]

    def redact_tree(self, obj: Any) -> tuple[Any, bool]:
        """get_raw_event step 3(b)+(c): the credential_key rule and uncapped redaction of every string value."""
        return self._tree(obj, 0)

    def _tree(self, node: Any, leaf_cap: int) -> tuple[Any, bool]:
        if isinstance(node, str):
            new = self.process(node, leaf_cap).text
            return new, new != node
        if isinstance(node, dict):
            out: dict[Any, Any] = {}
            changed = False
            for key, value in node.items():
                if isinstance(key, str) and is_credential_key(key):
                    out[key] = CREDENTIAL_PLACEHOLDER
                    changed = changed or value != CREDENTIAL_PLACEHOLDER
                else:
                    out[key], sub = self._tree(value, leaf_cap)
                    changed = changed or sub
            return out, changed
        if isinstance(node, (list, tuple)):
            items = []
            changed = False
            for value in node:
                new, sub = self._tree(value, leaf_cap)
                items.append(new)
                changed = changed or sub
            return items, changed
        return node, False

    def _redact_body(self, buf: bytes, hits: list[str], cut: bool) -> bytes:
        """`cut`: a cap ends `buf`. A cap marker already in the text ends input for every rule, so no span ever
        reaches into it, and the part before it was cut too."""
        if CAP_MARKER not in buf:
            return self._fixpoint(buf, hits, cut)
        parts = buf.split(CAP_MARKER)
        last = len(parts) - 1
        return CAP_MARKER.join(self._fixpoint(part, hits, cut or n < last) for n, part in enumerate(parts))

    def explain(self, s: str) -> list[Explained]:
        """The rule id and byte span (of the sanitized UTF-8 input) of each placeholder `redact(s)` places first.

        Only the first pass is listed: a later pass can only add a match next to a placeholder already
        placed. The secret itself is never part of the answer.
        """
        out: list[Explained] = []
        offset = 0
        for part in sanitize(s).encode("utf-8").split(CAP_MARKER):
            out.extend(Explained(item.rule_id, offset + item.start, offset + item.end) for item in self._merged(part))
            offset += len(part) + len(CAP_MARKER)
        return out

    def _merged(self, buf: bytes, cut: bool = False) -> list[Merged]:
        """`cut`: a cap ends `buf`, so a tail that starts a known value is a span too."""
        found = self._known.spans(buf) + self._engine.spans(buf, buf.lower())
        if cut:
            found += self._known.cut_tail(buf)
        spans = usable(buf, found)
        return merge(spans) if spans else []

    def _fixpoint(self, buf: bytes, hits: list[str], cut: bool) -> bytes:
        for _ in range(_MAX_PASSES):
            merged = self._merged(buf, cut)
            if not merged:
                break
            hits.extend(item.rule_id for item in merged)
            buf = rebuild(buf, merged)
        return self._escaped(buf, hits)

    def _escaped(self, buf: bytes, hits: list[str]) -> bytes:
        """Values the shape rules find only in a decoded view (redact_escaped.py), removed in their encoded forms."""
        for view in views(buf):
            for item in self._merged(view):
                value = view[item.start : item.end]
                if len(value) < MIN_ESCAPED_BYTES:
                    continue
                placeholder = PLACEHOLDER_FORMAT.format(rule_id=item.rule_id).encode("ascii")
                for form in encoded_forms(value):
                    if form in buf:
                        buf = buf.replace(form, placeholder)
                        hits.append(item.rule_id)
        return buf

    def _cut_stable(self, red: bytes, cap_bytes: int, hits: list[str]) -> bytes:
        """A prefix of at most `cap_bytes` that is itself fully redacted when its end is an end of input."""
        for _ in range(_MAX_PASSES):
            head = red[: cut_outside_placeholders(red, cap_bytes)]
            again = self._redact_body(head, hits, True)
            if again == head or len(again) <= cap_bytes:
                return again
            red = again
        return b""


def build_redactor(known: KnownSecrets, rules: tuple[Rule, ...] = ()) -> Redactor:
    """The process-wide redactor over the catalogue plus a workspace's `rules` and the given known secret values."""
    engine = ShapeEngine(CATALOGUE + rules) if rules else ENGINE
    return Redactor(KnownMatcher(known.bounded_patterns()), engine)

"""The shape rules as data: a TOML rule file compiled into detectors (docs/redaction.md describes the format).

The package's own file, redaction_rules.toml, holds the catalogue; a workspace may add rules in
`rules/redaction.toml`. Every rule carries examples and negative examples, expanded by
`expand_example` and run by the tests (and, for workspace rules, when the file is loaded).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

import tomli

from harness.text.redact_detectors import (
    CHECKS,
    Anchored,
    Base64Pem,
    Block,
    Body,
    BotToken,
    Detector,
    DsnValue,
    KeyValue,
    Left,
    MysqlFlag,
    PuttyBlock,
    Quoted,
    SecretManifest,
    Segs,
    Token,
    Value,
    detector_regexes,
)
from harness.text.redact_pattern import PatternError, Regex, open_repeat, parse_seq
from harness.text.redact_spans import CONTEXT, TOKEN

PACKAGE_FILE = "redaction_rules.toml"
WORKSPACE_FIRST_NUMBER = 1000
MIN_EXAMPLES = 2
MIN_NEGATIVE_EXAMPLES = 1

# The rule file's own syntax (ids, fragment names, example fillers), not redaction patterns: Python's `re` reads
# these ASCII forms alike and without the RE2 binding's per-call cost, a sixth of loading the catalogue.
_ID = re.compile(r"[a-z0-9_]{1,24}")
_FRAGMENT_NAME = re.compile(r"[A-Z][A-Z0-9_]{0,31}")
_FRAGMENT_USE = re.compile(r"\{\{([A-Z][A-Z0-9_]{0,31})\}\}")
_FILLER = re.compile(r"<<([a-z][a-z0-9_]*):([0-9]{1,4})>>")
_CLASSES = {"token": TOKEN, "context": CONTEXT}

# Alphabets an example's `<<name:n>>` filler draws from: rule files commit no realistic secret, the tests
# assemble each one from a seeded generator.
ALPHABETS = {
    "alnum": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
    "upper_digits": "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    "lower_alnum": "abcdefghijklmnopqrstuvwxyz0123456789",
    "hex": "0123456789abcdef",
    "upper_hex": "0123456789ABCDEF",
    "digits": "0123456789",
    "b64": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
    "b64url": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
    "bech32": "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
}


class RuleFileError(ValueError):
    """A rule file that cannot load; the message names the file, the rule and the field."""


@dataclass(frozen=True)
class Rule:
    """One rule: `gates` are extra lowercase literals (the file's `keywords`) of which one must occur in the text."""

    number: int
    rule_id: str
    rank: int
    detectors: tuple[Detector, ...]
    gates: tuple[bytes, ...] = ()
    provider: str = ""
    description: str = ""
    examples: tuple[str, ...] = ()
    negative_examples: tuple[str, ...] = ()
    source: str = PACKAGE_FILE


def expand_example(text: str, seed: str) -> str:
    """An example with each `<<alphabet:n>>` filler replaced by n characters drawn from a generator seeded by `seed`."""
    return expand_example_parts(text, seed)[0]


def expand_example_parts(text: str, seed: str) -> tuple[str, list[str]]:
    """`expand_example` and the text each filler became (the secret bodies a redaction must remove)."""
    rng = random.Random(seed)
    drawn: list[str] = []

    def fill(match: Any) -> str:
        drawn.append("".join(rng.choice(ALPHABETS[match.group(1)]) for _ in range(int(match.group(2)))))
        return drawn[-1]

    return _FILLER.sub(fill, text), drawn


class _Fields:
    """One TOML table read field by field; what was never read is an unknown field."""

    def __init__(self, table: Any, where: str, check: bool) -> None:
        if not isinstance(table, dict):
            raise RuleFileError(f"{where}: must be a table")
        self.table = table
        self.where = where
        # Whether every pattern is compiled while the file loads (see parse_rules).
        self.check = check
        self.read: set[str] = set()

    def get(self, name: str, kind: type | tuple[type, ...], default: Any = None, required: bool = False) -> Any:
        self.read.add(name)
        if name not in self.table:
            if required:
                raise RuleFileError(f"{self.where}: missing field '{name}'")
            return default
        value = self.table[name]
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
            raise RuleFileError(f"{self.where}: field '{name}' has the wrong type ({type(value).__name__})")
        return value

    def text(self, name: str, required: bool = False, default: str | None = None) -> str | None:
        value = self.get(name, str, default, required)
        if required and not value:
            raise RuleFileError(f"{self.where}: field '{name}' is empty")
        return value

    def strings(self, name: str, required: bool = False) -> list[str]:
        values = self.get(name, list, [], required)
        if not all(isinstance(value, str) and value for value in values):
            raise RuleFileError(f"{self.where}: field '{name}' must be a list of non-empty strings")
        return values

    def done(self) -> None:
        unknown = sorted(set(self.table) - self.read)
        if unknown:
            raise RuleFileError(f"{self.where}: unknown field '{unknown[0]}'")


def _bytes(value: str) -> bytes:
    return value.encode("utf-8")


def _seq(fields: _Fields, name: str) -> Any:
    source = fields.text(name, required=True)
    try:
        return parse_seq(_bytes(source), fields.check)  # type: ignore[arg-type]
    except PatternError as exc:
        raise RuleFileError(f"{fields.where}: field '{name}': {exc}") from None


def _regex(fields: _Fields, name: str, fragments: Mapping[str, str], required: bool = True) -> bytes:
    source = fields.text(name, required=required, default="")
    assert source is not None

    def fragment(match: Any) -> str:
        if match.group(1) not in fragments:
            raise RuleFileError(f"{fields.where}: field '{name}' names an unknown fragment {match.group(0)}")
        return fragments[match.group(1)]

    pattern = _bytes(_FRAGMENT_USE.sub(fragment, source))
    _check_regex(pattern, fields.where, name, bounded=True, compile_it=fields.check)
    return pattern


def _check_regex(pattern: bytes, where: str, name: str, bounded: bool, compile_it: bool) -> None:
    """Refuse a free regex RE2 cannot run (when `compile_it`) and, where `bounded`, one with an open repeat.

    A key, header or `before` pattern is matched once per literal hit, so an open repeat would let each hit
    read to the end of the input; a body is clamped to BODY_MAX bytes instead.
    """
    try:
        if compile_it:
            Regex(pattern)
    except PatternError as exc:
        raise RuleFileError(f"{where}: field '{name}' is not a valid pattern: {exc}") from None
    if bounded and open_repeat(pattern):
        raise RuleFileError(f"{where}: field '{name}' has an unbounded repeat (*, + or {{m,}}): bound it with {{m,n}}")


def _left(fields: _Fields) -> Left:
    reject = fields.text("left_reject")
    accept = fields.text("left_accept")
    return Left(reject=_bytes(reject) if reject else None, accept=_bytes(accept) if accept else None)


def _value(table: Any, where: str, check: bool) -> Value:
    fields = _Fields(table, f"{where}, value", check)
    if fields.get("quoted", bool, False):
        bare = Segs(_seq(fields, "run")) if "run" in fields.table else None
        fields.done()
        return Quoted(bare)
    named = fields.text("named")
    if named is not None:
        fields.done()
        if named != "dsn":
            raise RuleFileError(f"{where}, value: unknown named value '{named}' (known: dsn)")
        return DsnValue()
    if "body" in fields.table:
        source = _bytes(fields.text("body", required=True))  # type: ignore[arg-type]
        fields.done()
        _check_regex(source, f"{where}, value", "body", bounded=False, compile_it=check)
        return Body(source)
    items = _seq(fields, "run")
    partial_from = fields.get("partial_from", int, 0)
    follow = fields.text("follow")
    fields.done()
    return Segs(items, partial_from, _bytes(follow) if follow is not None else None)


def _literals(fields: _Fields) -> list[bytes]:
    literals = [_bytes(literal) for literal in fields.strings("literals", required=True)]
    if not literals:
        raise RuleFileError(f"{fields.where}: field 'literals' is empty")
    if any(len(literal) < 2 for literal in literals):
        raise RuleFileError(f"{fields.where}: field 'literals' needs at least two bytes per literal")
    return literals


def _token(fields: _Fields, fragments: Mapping[str, str]) -> list[Detector]:
    literals = _literals(fields)
    items = _seq(fields, "tail")
    left = _left(fields)
    right = fields.text("right_reject")
    return [Token(literal, items, left=left, right_reject=_bytes(right) if right else None) for literal in literals]


def _key_value(fields: _Fields, fragments: Mapping[str, str]) -> list[Detector]:
    literals = _literals(fields)
    key = _regex(fields, "key", fragments, required=False)
    value = _value(fields.get("value", dict, required=True), fields.where, fields.check)
    left = _left(fields)
    on = fields.text("on", default="lowered")
    if on not in ("lowered", "original"):
        raise RuleFileError(f"{fields.where}: field 'on' must be 'lowered' or 'original'")
    stops = fields.get("stop_lists", bool, False)
    check_name = fields.text("check")
    check = None
    if check_name is not None:
        if check_name not in CHECKS:
            raise RuleFileError(f"{fields.where}: unknown check '{check_name}' (known: {', '.join(sorted(CHECKS))})")
        check = CHECKS[check_name]
    if on == "lowered" and any(literal != literal.lower() for literal in literals):
        raise RuleFileError(f"{fields.where}: a rule on the lowered copy needs lowercase literals")
    return [KeyValue(literal, key, value, left=left, original=on == "original", stops=stops, check=check)
            for literal in literals]


def _block(fields: _Fields, fragments: Mapping[str, str]) -> list[Detector]:
    literals = _literals(fields)
    header = _regex(fields, "header", fragments, required=False)
    end = _bytes(fields.text("end", required=True))  # type: ignore[arg-type]
    return [Block(literal, header, end) for literal in literals]


def _anchored(fields: _Fields, fragments: Mapping[str, str]) -> list[Detector]:
    literals = _literals(fields)
    items = _seq(fields, "tail")
    before = _regex(fields, "before", fragments)
    width = fields.get("before_width", int, required=True)
    return [Anchored(literal, items, before, width) for literal in literals]


def _mysql(fields: _Fields, fragments: Mapping[str, str]) -> list[Detector]:
    return [MysqlFlag(literal) for literal in _literals(fields)]


def _fixed(factory: Callable[[], Detector]) -> Callable[[_Fields, Mapping[str, str]], list[Detector]]:
    return lambda fields, fragments: [factory()]


# The detector kinds a rule file may name: the generic two, and custom detectors for shapes a pattern cannot
# express (block bodies found by literal search, anchors inside a token, decoding checks, command-line windows).
KINDS: dict[str, Callable[[_Fields, Mapping[str, str]], list[Detector]]] = {
    "token": _token,
    "key_value": _key_value,
    "block": _block,
    "anchored": _anchored,
    "mysql_flag": _mysql,
    "putty": _fixed(PuttyBlock),
    "bot_token": _fixed(BotToken),
    "base64_pem": _fixed(Base64Pem),
    "secret_manifest": _fixed(SecretManifest),
}


def _detectors(table: Any, where: str, fragments: Mapping[str, str], check: bool) -> list[Detector]:
    fields = _Fields(table, where, check)
    kind = fields.text("kind", required=True)
    if kind not in KINDS:
        raise RuleFileError(f"{where}: unknown kind '{kind}' (known: {', '.join(sorted(KINDS))})")
    detectors = KINDS[kind](fields, fragments)  # type: ignore[index]
    fields.done()
    return detectors


def _rule(table: Any, where: str, fragments: Mapping[str, str], source: str, check: bool) -> Rule:
    fields = _Fields(table, where, check)
    rule_id = fields.text("id", required=True)
    assert rule_id is not None
    if not _ID.fullmatch(rule_id):
        raise RuleFileError(f"{where}: field 'id' must match [a-z0-9_]{{1,24}}")
    fields.where = where = f"{where} ({rule_id})"
    number = fields.get("number", int, required=True)
    provider = fields.text("provider", required=True)
    description = fields.text("description", required=True)
    rank_name = fields.text("class", required=True)
    if rank_name not in _CLASSES:
        raise RuleFileError(f"{where}: field 'class' must be 'token' or 'context'")
    gates = tuple(_bytes(keyword.lower()) for keyword in fields.strings("keywords"))
    examples = fields.strings("examples", required=True)
    negatives = fields.strings("negative_examples", required=True)
    for text in examples + negatives:
        for name in _FILLER.findall(text):
            if name[0] not in ALPHABETS:
                raise RuleFileError(f"{where}: an example names an unknown filler alphabet '{name[0]}' "
                                    f"(known: {', '.join(ALPHABETS)})")
    if len(examples) < MIN_EXAMPLES or len(negatives) < MIN_NEGATIVE_EXAMPLES:
        raise RuleFileError(f"{where}: a rule needs at least {MIN_EXAMPLES} examples and "
                            f"{MIN_NEGATIVE_EXAMPLES} negative example")
    tables = fields.get("detector", list, required=True)
    if not tables:
        raise RuleFileError(f"{where}: field 'detector' is empty")
    fields.done()
    detectors = tuple(
        detector
        for index, detector_table in enumerate(tables, 1)
        for detector in _detectors(detector_table, f"{where}, detector {index}", fragments, check)
    )
    if check:
        for detector in detectors:
            try:
                for regex in detector_regexes(detector):
                    regex.check()
            except PatternError as exc:
                raise RuleFileError(f"{where}: a pattern built from its fields is not valid: {exc}") from None
    return Rule(number, rule_id, _CLASSES[rank_name], detectors, gates, provider or "", description or "",
                tuple(examples), tuple(negatives), source)


def parse_rules(text: str, source: str, base_fragments: Mapping[str, str] | None = None,
                first_number: int = 1, check: bool = True) -> tuple[Rule, ...]:
    """The rules of one rule file; `base_fragments` are the package's, which a workspace file may use.

    With `check` every RE2 pattern of every rule is compiled while the file loads, so a file RE2 cannot run is
    refused naming the rule and field. The package's own file loads without it (its patterns then compile on
    first use; a test loads it with `check`), which keeps compiling ~1,250 patterns out of every process start.
    """
    try:
        doc = tomli.loads(text)
    except tomli.TOMLDecodeError as exc:
        raise RuleFileError(f"{source}: not valid TOML: {exc}") from None
    top = _Fields(doc, source, check)
    own = top.get("fragments", dict, {})
    rule_tables = top.get("rule", list, [])
    top.done()
    fragments = dict(base_fragments or {})
    for name, value in own.items():
        if not _FRAGMENT_NAME.fullmatch(name) or not isinstance(value, str):
            raise RuleFileError(f"{source}: fragment '{name}' needs an upper-case name and a string value")
        if name in fragments:
            raise RuleFileError(f"{source}: fragment '{name}' is already defined by the package rule file")
        fragments[name] = value
    rules = tuple(_rule(table, f"{source}: rule {index}", fragments, source, check)
                  for index, table in enumerate(rule_tables, 1))
    seen_ids: set[str] = set()
    seen_numbers: set[int] = set()
    for rule in rules:
        if rule.number < first_number:
            raise RuleFileError(f"{source}: rule {rule.rule_id}: field 'number' must be at least {first_number}")
        if rule.rule_id in seen_ids or rule.number in seen_numbers:
            raise RuleFileError(f"{source}: rule {rule.rule_id}: duplicate id or number {rule.number}")
        seen_ids.add(rule.rule_id)
        seen_numbers.add(rule.number)
    return rules


def _package_text() -> str:
    return resources.files("harness.text").joinpath(PACKAGE_FILE).read_text(encoding="utf-8")


def package_fragments() -> dict[str, str]:
    """The `[fragments]` of the package rule file, which workspace rule files may name."""
    return dict(tomli.loads(_package_text()).get("fragments", {}))


def package_rules(check: bool = False) -> tuple[Rule, ...]:
    """The package rule file's rules (`check`: as parse_rules)."""
    rules = parse_rules(_package_text(), PACKAGE_FILE, check=check)
    for rule in rules:
        if rule.number >= WORKSPACE_FIRST_NUMBER:
            raise RuleFileError(f"{PACKAGE_FILE}: rule {rule.rule_id}: numbers from {WORKSPACE_FIRST_NUMBER} on "
                                "belong to workspace rules")
    return rules


CATALOGUE: tuple[Rule, ...] = package_rules()

"""The rule-corpus loader: location order, pin, strict YAML, validation and cache (docs/investigate.md §7, docs/investigate.md §7.1)."""

from __future__ import annotations

import hashlib
import importlib.resources
import os
from pathlib import Path

import pytest

from harness.rules import Corpus, CorpusError, Rule, clear_cache, load_corpus

# Pinned on purpose: editing the embedded corpus must come with a deliberate update here.
EMBEDDED_SHA256 = "cd0087fbaeda70fd474b614859ddffe836b0fa49cd31cd9a105db0f6e455f856"

ONE_RULE = """\
version: 1
rules:
  - id: W-1
    applies_to:
      family: unusual-timing
      metadata_match:
        maintenance_window: "true"
    operator_directive: Workspace rule.
"""


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    clear_cache()


def _workspace(tmp_path: Path, text: str | bytes | None) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    if text is not None:
        (ws / "rules").mkdir()
        target = ws / "rules" / "operator-decisions.yaml"
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_text(text, encoding="utf-8")
    return ws


def _explicit(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "rules.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _error(tmp_path: Path, text: str | bytes) -> str:
    with pytest.raises(CorpusError) as info:
        load_corpus(explicit=_explicit(tmp_path, text), workspace=None, pin=None)
    return str(info.value)


def _rule_yaml(
    rule_id: str = "X-1",
    family: str = "fam",
    match: str = '{k: "v"}',
    directive: str = "Do it.",
) -> str:
    return (
        "version: 1\nrules:\n"
        f"  - id: {rule_id}\n"
        f"    applies_to:\n      family: {family}\n      metadata_match: {match}\n"
        f"    operator_directive: {directive}\n"
    )


# --- the embedded default corpus (docs/investigate.md §7.1) ------------------------------------------------


def test_embedded_file_is_pinned() -> None:
    data = importlib.resources.files("harness.rules").joinpath("operator-decisions.yaml").read_bytes()
    assert hashlib.sha256(data).hexdigest() == EMBEDDED_SHA256
    corpus = load_corpus(explicit=None, workspace=None, pin=None)
    assert corpus.sha256 == EMBEDDED_SHA256
    assert corpus.source == "embedded"


def test_embedded_rules_match_the_table() -> None:
    corpus = load_corpus(explicit=None, workspace=None, pin=None)
    assert [(r.id, r.family, r.metadata_match) for r in corpus.rules] == [
        ("R-001", "unusual-timing", {"maintenance_window": "true"}),
        ("R-002", "volume-anomaly", {"scheduled": "true"}),
        ("R-003", "auth-failure-burst", {"resolution_event": "login_success"}),
        ("R-004", "auth-failure-burst", {"resolution_event": "password_reset_then_login_success"}),
        ("R-005", "unusual-timing", {"location_change": "true"}),
        ("R-006", "new-external-access", {"hr_provisioning": "true"}),
        ("R-007", "new-actor", {"automation_provenance": "terraform"}),
        ("R-008", "volume-anomaly", {"deploy_release": "true"}),
    ]
    assert "maintenance window" in corpus.rules[0].operator_directive
    assert all(r.operator_directive for r in corpus.rules)


def test_embedded_header_says_predicates_are_observations() -> None:
    text = importlib.resources.files("harness.rules").joinpath("operator-decisions.yaml").read_text("utf-8")
    header = text.split("version:")[0]
    assert "observations the investigator asserts" in " ".join(header.replace("#", " ").split())
    assert "not values copied from the finding" in " ".join(header.replace("#", " ").split())


def test_rule_to_json_shape() -> None:
    assert Rule("R-9", "fam", {"k": "v"}, "Do.").to_json() == {
        "id": "R-9",
        "applies_to": {"family": "fam", "metadata_match": {"k": "v"}},
        "operator_directive": "Do.",
    }
    assert Rule("R-9", "fam", {}, "Do.").to_json()["applies_to"]["metadata_match"] == {}


def test_to_json_does_not_expose_the_rule_mapping() -> None:
    rule = Rule("R-9", "fam", {"k": "v"}, "Do.")
    rule.to_json()["applies_to"]["metadata_match"]["k"] = "changed"
    assert rule.metadata_match == {"k": "v"}


# --- location order ----------------------------------------------------------------------


def test_no_workspace_file_gives_the_eight_embedded_rules(tmp_path: Path) -> None:
    corpus = load_corpus(explicit=None, workspace=_workspace(tmp_path, None), pin=None)
    assert corpus.source == "embedded"
    assert len(corpus.rules) == 8


def test_workspace_file_with_one_rule_gives_only_that_rule(tmp_path: Path) -> None:
    corpus = load_corpus(explicit=None, workspace=_workspace(tmp_path, ONE_RULE), pin=None)
    assert corpus.source == "workspace"
    assert [r.id for r in corpus.rules] == ["W-1"]
    assert corpus.sha256 == hashlib.sha256(ONE_RULE.encode()).hexdigest()


def test_workspace_path_that_is_a_directory_is_an_error(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, None)
    (ws / "rules" / "operator-decisions.yaml").mkdir(parents=True)
    with pytest.raises(CorpusError, match=r"^rule corpus workspace: .*not a regular file"):
        load_corpus(explicit=None, workspace=ws, pin=None)


def test_workspace_rules_path_that_is_a_file_is_an_error_not_a_fallthrough(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, None)
    (ws / "rules").write_text("not a directory")
    with pytest.raises(CorpusError, match=r"^rule corpus workspace: file .* cannot be read \(Not a directory\)$"):
        load_corpus(explicit=None, workspace=ws, pin=None)


def test_workspace_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, None)
    (ws / "rules").mkdir()
    os.mkfifo(ws / "rules" / "operator-decisions.yaml")
    with pytest.raises(CorpusError, match=r"^rule corpus workspace: .*not a regular file"):
        load_corpus(explicit=None, workspace=ws, pin=None)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files regardless of their permission bits")
def test_unreadable_workspace_file_is_an_error(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, ONE_RULE)
    path = ws / "rules" / "operator-decisions.yaml"
    path.chmod(0)
    try:
        with pytest.raises(CorpusError, match=r"^rule corpus workspace: file .* cannot be read \(Permission denied\)$"):
            load_corpus(explicit=None, workspace=ws, pin=None)
    finally:
        path.chmod(0o644)


def test_explicit_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match=r"^rule corpus explicit: file .* does not exist$"):
        load_corpus(explicit=tmp_path / "absent.yaml", workspace=_workspace(tmp_path, ONE_RULE), pin=None)


def test_explicit_wins_over_workspace(tmp_path: Path) -> None:
    path = _explicit(tmp_path, ONE_RULE.replace("W-1", "E-1"))
    corpus = load_corpus(explicit=path, workspace=_workspace(tmp_path, ONE_RULE), pin=None)
    assert corpus.source == "explicit"
    assert [r.id for r in corpus.rules] == ["E-1"]


def test_broken_workspace_file_is_not_masked_by_the_embedded_corpus(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match=r"^rule corpus workspace: invalid YAML at line \d+, column \d+: "):
        load_corpus(explicit=None, workspace=_workspace(tmp_path, "version: 1\nrules: [\n"), pin=None)


# --- pin ---------------------------------------------------------------------------------


def test_pin_equal_to_the_corpus_sha256_loads(tmp_path: Path) -> None:
    pin = hashlib.sha256(ONE_RULE.encode()).hexdigest()
    corpus = load_corpus(explicit=None, workspace=_workspace(tmp_path, ONE_RULE), pin=pin)
    assert [r.id for r in corpus.rules] == ["W-1"]
    assert load_corpus(explicit=None, workspace=None, pin=EMBEDDED_SHA256).sha256 == EMBEDDED_SHA256


@pytest.mark.parametrize("source", ["explicit", "workspace", "embedded"])
def test_other_pin_gives_the_mismatch_error(tmp_path: Path, source: str) -> None:
    pin = "0" * 64
    explicit = _explicit(tmp_path, ONE_RULE) if source == "explicit" else None
    workspace = _workspace(tmp_path, ONE_RULE) if source == "workspace" else None
    actual = EMBEDDED_SHA256 if source == "embedded" else hashlib.sha256(ONE_RULE.encode()).hexdigest()
    with pytest.raises(CorpusError) as info:
        load_corpus(explicit=explicit, workspace=workspace, pin=pin)
    assert str(info.value) == f"rule corpus sha256 mismatch: expected {pin}, got {actual} ({source} corpus)"


def test_pin_is_checked_before_parsing(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="sha256 mismatch"):
        load_corpus(explicit=_explicit(tmp_path, "version: 2\n"), workspace=None, pin="0" * 64)


def test_empty_pin_means_no_pin(tmp_path: Path) -> None:
    assert load_corpus(explicit=_explicit(tmp_path, ONE_RULE), workspace=None, pin="").rules[0].id == "W-1"


# --- strict YAML -----------------------------------------------------------------------


def test_duplicate_yaml_key_is_refused(tmp_path: Path) -> None:
    text = ONE_RULE.replace(
        "    operator_directive: Workspace rule.\n", "    operator_directive: A.\n    operator_directive: B.\n"
    )
    message = _error(tmp_path, text)
    assert message.startswith("rule corpus explicit: invalid YAML at line 9, column 5: ")
    assert 'duplicate key "operator_directive"' in message


def test_duplicate_top_level_key_is_refused(tmp_path: Path) -> None:
    assert 'duplicate key "version"' in _error(tmp_path, "version: 1\nversion: 1\nrules: []\n")


def test_alias_is_refused(tmp_path: Path) -> None:
    assert "aliases are not allowed" in _error(tmp_path, "version: 1\nrules: *r\n")


def test_anchor_is_refused(tmp_path: Path) -> None:
    text = ONE_RULE.replace("family: unusual-timing", "family: &f unusual-timing")
    assert "anchors are not allowed" in _error(tmp_path, text + "  - *f\n")


def test_merge_key_is_refused(tmp_path: Path) -> None:
    text = ONE_RULE.replace("  - id: W-1\n", "  - <<: {id: W-1}\n")
    assert "merge keys are not allowed" in _error(tmp_path, text)


@pytest.mark.parametrize("tag", ["!!python/object:os.system", "!local", "!!binary", "!!set", "!!timestamp", "!"])
def test_non_standard_tags_are_refused(tmp_path: Path, tag: str) -> None:
    text = ONE_RULE.replace("operator_directive: Workspace rule.", f"operator_directive: {tag} Workspace rule.")
    assert "non-standard tag" in _error(tmp_path, text)


def test_core_tags_are_accepted(tmp_path: Path) -> None:
    text = ONE_RULE.replace('maintenance_window: "true"', "maintenance_window: !!str true")
    corpus = load_corpus(explicit=_explicit(tmp_path, text), workspace=None, pin=None)
    assert corpus.rules[0].metadata_match == {"maintenance_window": "true"}


def test_yaml_syntax_error_names_line_and_column(tmp_path: Path) -> None:
    message = _error(tmp_path, "version: 1\nrules:\n  - id: [unclosed\n")
    assert message.startswith("rule corpus explicit: invalid YAML at line ")
    assert ", column " in message


def test_unacceptable_character_names_line_and_column(tmp_path: Path) -> None:
    message = _error(tmp_path, "version: 1\nrules: []\n# bell \x07\n")
    assert message.startswith("rule corpus explicit: invalid YAML at line 3, column 8: ")


def test_invalid_utf8_is_refused(tmp_path: Path) -> None:
    assert _error(tmp_path, b"version: 1\nrules: []\n# \xff\n") == "rule corpus explicit: not valid UTF-8 at byte 23"


def test_several_documents_are_refused(tmp_path: Path) -> None:
    assert "invalid YAML" in _error(tmp_path, "version: 1\nrules: []\n---\nversion: 1\nrules: []\n")


def test_deep_nesting_is_refused_not_crashed(tmp_path: Path) -> None:
    assert "invalid YAML" in _error(tmp_path, "version: 1\nrules: " + "[" * 50_000 + "\n")


def test_file_over_one_mib_is_refused(tmp_path: Path) -> None:
    text = ONE_RULE + "#" * (1024 * 1024)
    assert _error(tmp_path, text).endswith('" is larger than 1,048,576 bytes')
    assert _error(tmp_path, text).startswith('rule corpus explicit: file "')


def test_file_of_exactly_one_mib_is_accepted(tmp_path: Path) -> None:
    text = ONE_RULE + "#" + "x" * (1024 * 1024 - len(ONE_RULE) - 2) + "\n"
    assert len(text.encode()) == 1024 * 1024
    assert load_corpus(explicit=_explicit(tmp_path, text), workspace=None, pin=None).rules[0].id == "W-1"


# --- validation ----------------------------------------------------------------------


def test_version_2_is_refused(tmp_path: Path) -> None:
    assert _error(tmp_path, "version: 2\nrules: []\n") == "rule corpus explicit: unsupported version 2; expected 1"


@pytest.mark.parametrize("version", ['"1"', "true", "1.0"])
def test_version_must_be_the_integer_1(tmp_path: Path, version: str) -> None:
    assert "unsupported version" in _error(tmp_path, f"version: {version}\nrules: []\n")


def test_empty_rule_list_is_a_valid_corpus(tmp_path: Path) -> None:
    assert load_corpus(explicit=_explicit(tmp_path, "version: 1\nrules: []\n"), workspace=None, pin=None).rules == ()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "top level: expected an object with version and rules, got null"),
        ("- a\n", "top level: expected an object with version and rules, got an array"),
        ("version: 1\n", 'top level: missing key "rules"'),
        ("rules: []\n", 'top level: missing key "version"'),
        ("version: 1\nrules: {}\n", "rules: expected an array, got an object"),
        ("version: 1\nrules: [x]\n", "rules[0]: expected an object, got a string"),
    ],
)
def test_structure_problems(tmp_path: Path, text: str, problem: str) -> None:
    assert problem in _error(tmp_path, text)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("version: 1\nrules: []\nextra: 1\n", 'top level: unknown key "extra"'),
        (ONE_RULE + "    severity: high\n", 'rules[0] ("W-1"): unknown key "severity"'),
        (
            ONE_RULE.replace("      family: unusual-timing\n", "      family: unusual-timing\n      source: x\n"),
            'rules[0] ("W-1"): applies_to: unknown key "source"',
        ),
    ],
)
def test_unknown_keys_are_refused_at_every_level(tmp_path: Path, text: str, problem: str) -> None:
    assert problem in _error(tmp_path, text)


@pytest.mark.parametrize("missing", ["id", "applies_to", "operator_directive"])
def test_rule_keys_are_required(tmp_path: Path, missing: str) -> None:
    parts = {"id": "id: X-1", "applies_to": "applies_to: {family: f}", "operator_directive": "operator_directive: d"}
    del parts[missing]
    text = "version: 1\nrules:\n  - {" + ", ".join(parts.values()) + "}\n"
    assert _error(tmp_path, text).endswith(f'missing key "{missing}"')


def test_family_is_required(tmp_path: Path) -> None:
    text = _rule_yaml().replace("      family: fam\n", "")
    assert 'applies_to: missing key "family"' in _error(tmp_path, text)


def test_metadata_match_is_optional_and_family_alone_decides(tmp_path: Path) -> None:
    text = _rule_yaml().replace('      metadata_match: {k: "v"}\n', "")
    corpus = load_corpus(explicit=_explicit(tmp_path, text), workspace=None, pin=None)
    assert corpus.rules[0].metadata_match == {}


@pytest.mark.parametrize("value", ["true", "True", "yes", "1", "1.5", "null", "2026-04-10", "[a]", "{a: b}"])
def test_unquoted_non_string_values_are_refused(tmp_path: Path, value: str) -> None:
    message = _error(tmp_path, _rule_yaml(match=f"{{maintenance_window: {value}}}"))
    assert "metadata_match values must be quoted strings" in message
    assert message.startswith('rule corpus explicit: rules[0] ("X-1"): applies_to.metadata_match: ')


def test_unquoted_true_in_a_block_mapping_is_refused(tmp_path: Path) -> None:
    text = ONE_RULE.replace('maintenance_window: "true"', "maintenance_window: true")
    assert "metadata_match values must be quoted strings" in _error(tmp_path, text)


@pytest.mark.parametrize(
    ("match", "problem"),
    [
        ('{maintenanceWindow: "true"}', 'key "maintenanceWindow" must be a clean, non-empty normalized key'),
        ('{"": "true"}', 'key "" must be'),
        ('{1: "true"}', "key 1 must be"),
        ('{k: ""}', 'value of "k" must be a non-empty string'),
        ('{k: "a\\nb"}', 'value of "k" must be a non-empty string'),
        ('{k: "a\\u200bb"}', 'value of "k" must be a non-empty string'),
        ("[k]", "applies_to.metadata_match: expected an object, got an array"),
    ],
)
def test_metadata_match_entries_are_validated(tmp_path: Path, match: str, problem: str) -> None:
    assert problem in _error(tmp_path, _rule_yaml(match=match))


def test_metadata_match_allows_sixteen_entries_and_no_more(tmp_path: Path) -> None:
    sixteen = "{" + ", ".join(f'k{i}: "v"' for i in range(16)) + "}"
    corpus = load_corpus(explicit=_explicit(tmp_path, _rule_yaml(match=sixteen)), workspace=None, pin=None)
    assert len(corpus.rules[0].metadata_match) == 16
    seventeen = "{" + ", ".join(f'k{i}: "v"' for i in range(17)) + "}"
    assert "at most 16 entries, got 17" in _error(tmp_path, _rule_yaml(match=seventeen))


def test_ids_differing_only_in_case_are_refused(tmp_path: Path) -> None:
    text = _rule_yaml(rule_id="r-001") + _rule_yaml(rule_id="R-001").split("rules:\n")[1]
    message = _error(tmp_path, text)
    assert message == (
        'rule corpus explicit: rules[1] ("R-001"): duplicate rule id "R-001" '
        '(ids are unique ignoring case; first "r-001")'
    )


@pytest.mark.parametrize("rule_id", ["-a", ".a", "a b", '"a/b"', "a" * 65, '""', "1.0", "'é'"])
def test_bad_ids_are_refused(tmp_path: Path, rule_id: str) -> None:
    assert "id must match" in _error(tmp_path, _rule_yaml(rule_id=rule_id))


@pytest.mark.parametrize("rule_id", ["a", "R-001", "a" * 64, "x.y_z-1", "0"])
def test_good_ids_are_accepted(tmp_path: Path, rule_id: str) -> None:
    text = _rule_yaml(rule_id=f'"{rule_id}"')
    corpus = load_corpus(explicit=_explicit(tmp_path, text), workspace=None, pin=None)
    assert corpus.rules[0].id == rule_id


@pytest.mark.parametrize("family", ['""', '"a\\tb"', '" a"', '"a\\u202eb"', "f" * 129, "é" * 65, "1", "[a]"])
def test_bad_families_are_refused(tmp_path: Path, family: str) -> None:
    assert "applies_to.family must be a non-empty clean string" in _error(tmp_path, _rule_yaml(family=family))


def test_family_of_128_bytes_is_accepted(tmp_path: Path) -> None:
    corpus = load_corpus(explicit=_explicit(tmp_path, _rule_yaml(family="é" * 64)), workspace=None, pin=None)
    assert corpus.rules[0].family == "é" * 64


@pytest.mark.parametrize("directive", ['""', '"a\\rb"', '"a\\u200bb"', '"a\\u2028b"', "x" * 4097, "1", "[a]"])
def test_bad_directives_are_refused(tmp_path: Path, directive: str) -> None:
    assert "operator_directive must be a non-empty string" in _error(tmp_path, _rule_yaml(directive=directive))


def test_multiline_directive_of_4096_bytes_is_accepted(tmp_path: Path) -> None:
    body = "a\\n\\tb" + "c" * 4092
    corpus = load_corpus(explicit=_explicit(tmp_path, _rule_yaml(directive=f'"{body}"')), workspace=None, pin=None)
    assert corpus.rules[0].operator_directive == "a\n\tb" + "c" * 4092


def test_more_than_1000_rules_are_refused(tmp_path: Path) -> None:
    rule = "  - {{id: X-{i}, applies_to: {{family: f}}, operator_directive: d}}\n"
    thousand = "version: 1\nrules:\n" + "".join(rule.format(i=i) for i in range(1000))
    assert len(load_corpus(explicit=_explicit(tmp_path, thousand), workspace=None, pin=None).rules) == 1000
    assert "at most 1000 rules, got 1001" in _error(tmp_path, thousand + rule.format(i=1000))


def test_unclean_text_is_echoed_sanitized(tmp_path: Path) -> None:
    message = _error(tmp_path, 'version: 1\nrules: []\n"a\\u202eb\\nc": 1\n')
    assert message == 'rule corpus explicit: top level: unknown key "ab c"'


# --- cache -------------------------------------------------------------------------------


def _rewrite_keeping_stat(path: Path, text: str) -> None:
    before = path.stat()
    assert len(text.encode()) == before.st_size
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_parsed_corpus_is_cached_by_path_size_mtime_and_pin(tmp_path: Path) -> None:
    path = _explicit(tmp_path, ONE_RULE)
    first = load_corpus(explicit=path, workspace=None, pin=None)
    assert load_corpus(explicit=path, workspace=None, pin=None) is first
    # Same size and mtime: the cached parse is reused without rereading.
    _rewrite_keeping_stat(path, ONE_RULE.replace("W-1", "W-2"))
    assert load_corpus(explicit=path, workspace=None, pin=None) is first
    # A new mtime invalidates the entry.
    os.utime(path, ns=(0, path.stat().st_mtime_ns + 1_000_000_000))
    assert [r.id for r in load_corpus(explicit=path, workspace=None, pin=None).rules] == ["W-2"]


def test_pin_is_part_of_the_cache_key(tmp_path: Path) -> None:
    path = _explicit(tmp_path, ONE_RULE)
    load_corpus(explicit=path, workspace=None, pin=None)
    with pytest.raises(CorpusError, match="sha256 mismatch"):
        load_corpus(explicit=path, workspace=None, pin="0" * 64)
    load_corpus(explicit=None, workspace=None, pin=None)
    with pytest.raises(CorpusError, match=r"sha256 mismatch: .*\(embedded corpus\)"):
        load_corpus(explicit=None, workspace=None, pin="0" * 64)


def test_errors_are_not_cached(tmp_path: Path) -> None:
    broken = ONE_RULE.replace("version: 1", "version: 2")
    path = _explicit(tmp_path, broken)
    with pytest.raises(CorpusError):
        load_corpus(explicit=path, workspace=None, pin=None)
    _rewrite_keeping_stat(path, ONE_RULE)
    assert [r.id for r in load_corpus(explicit=path, workspace=None, pin=None).rules] == ["W-1"]


def test_source_is_part_of_the_cache_key(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, ONE_RULE)
    path = ws / "rules" / "operator-decisions.yaml"
    assert load_corpus(explicit=None, workspace=ws, pin=None).source == "workspace"
    assert load_corpus(explicit=path, workspace=None, pin=None).source == "explicit"


def test_corpus_is_a_value() -> None:
    corpus = load_corpus(explicit=None, workspace=None, pin=None)
    assert isinstance(corpus, Corpus)
    assert isinstance(corpus.rules, tuple)

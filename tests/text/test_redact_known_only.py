"""`Redactor.redact_known`: only the configured secret values are replaced; secret-shaped data is left alone."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from harness.text.redact import KnownSecrets, Redactor, build_redactor
from harness.text.redact_known import encoded_forms


def test_only_known_values_are_replaced() -> None:
    known = KnownSecrets.from_environment({"GITHUB_TOKEN": "opaque-known-value-123456"})
    redactor = build_redactor(known)
    text = "token opaque-known-value-123456 and password=hunter2hunter2"
    assert redactor.redact_known(text) == "token [REDACTED:known_secret] and password=hunter2hunter2"
    assert redactor.redact(text) != redactor.redact_known(text)


def test_without_known_values_text_is_returned_unchanged() -> None:
    redactor = build_redactor(KnownSecrets.from_environment({}))
    text = "password=hunter2hunter2 é \u2028"
    assert redactor.redact_known(text) is text


# A value JSON must escape: a tree holding it serializes it escaped, which the one search over the serialized tree
# has to find as well as the plain values.
QUOTED = 'pa"ss\\word\u00e9-42'
# Pieces that put known values (a short whole-token one, a long one, their JSON-escaped forms) next to NUL, word
# characters, separators and lone surrogates, so a one-pass search over joined strings would show any slip.
PIECES = st.sampled_from(
    ["abcd", "xabcd", "abcd_", "opaque-known-value-123456", "opaque-known", "value-123456", "\x00", "\ud800", " ",
     "\\n", "é", "[REDACTED:known_secret]", "opaque\\u002dknown-value-123456", "", QUOTED, QUOTED[:6], json.dumps(QUOTED)[1:-1], "\"", "\\"]
)
TEXTS = st.lists(PIECES, max_size=4).map("".join)
TREES = st.recursive(
    TEXTS | st.integers() | st.none() | st.booleans(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXTS, children, max_size=4),
    max_leaves=12,
)


def _walk(redactor: Redactor, node: Any) -> Any:
    """The plain definition: every string of the tree, keys included, through redact_known."""
    if isinstance(node, str):
        return redactor.redact_known(node)
    if isinstance(node, dict):
        return {redactor.redact_known(k): _walk(redactor, v) for k, v in node.items()}
    if isinstance(node, list):
        return [_walk(redactor, v) for v in node]
    return node


@given(TREES)
def test_a_tree_is_redacted_as_each_of_its_strings_would_be(tree: Any) -> None:
    redactor = build_redactor(
        KnownSecrets.from_environment(
            {"GITHUB_TOKEN": "opaque-known-value-123456", "API_KEY": "abcd", "DB_PASSWORD": QUOTED}
        )
    )
    redacted = redactor.redact_known_tree(tree)
    assert redacted == _walk(redactor, tree)
    assert json.dumps(redacted) == json.dumps(_walk(redactor, tree))


def test_a_value_json_escapes_is_found_in_a_large_tree() -> None:
    redactor = build_redactor(KnownSecrets.from_environment({"DB_PASSWORD": QUOTED}))
    events = [{"id": f"evt-{n}", "target": f"t-{n}"} for n in range(2000)]
    tree = {"events": [*events, {"id": "evt-x", "target": f"dsn {QUOTED}"}], "notes": ""}
    redacted = redactor.redact_known_tree(tree)
    assert redacted["events"][-1]["target"] == "dsn [REDACTED:known_secret]"
    assert redacted["events"][:-1] == events
    assert QUOTED not in json.dumps(redacted, ensure_ascii=False)


def test_every_encoded_form_of_a_value_is_found_inside_a_tree() -> None:
    redactor = build_redactor(KnownSecrets.from_environment({"DB_PASSWORD": QUOTED}))
    for form in encoded_forms(QUOTED):
        tree = {"events": [{"id": "evt-1", "target": f"x {form} y"}], f"k{form}": [form]}
        redacted = redactor.redact_known_tree(tree)
        assert redacted == _walk(redactor, tree) != tree, form


def test_a_tree_without_known_values_is_returned_as_it_is() -> None:
    tree = {"events": [{"id": "evt-1", "target": "opaque-known"}], "notes": ""}
    assert build_redactor(KnownSecrets.from_environment({"GITHUB_TOKEN": "opaque-known-value-123456"})).redact_known_tree(tree) is tree
    assert build_redactor(KnownSecrets.from_environment({})).redact_known_tree(tree) is tree

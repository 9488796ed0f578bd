"""Hypothesis fuzzing of the verdict reader and validator: only the spec's errors ever escape."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from triage_samples import V0_CANONICAL, tp_sample, v0

from harness.text.formatgate import FormatError
from harness.triage.verdict import ObjectInputError, load_verdict, validate_verdict

SPEC_ERRORS = (ObjectInputError, FormatError)

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
    | st.sampled_from(["FP", "TP", "uncertain", "R007", "R012", "ioc", "suppression", "1.0-1", "a1a1a1a", "2026-07-01"])
)
json_values = st.recursive(
    scalars,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
    max_leaves=12,
)


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path in a document, so mutations can land anywhere."""
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found.extend(paths(value, (*prefix, key)))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found.extend(paths(value, (*prefix, i)))
    return found


def get(node: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        node = node[step]
    return node


@st.composite
def mutated_documents(draw: st.DrawFn) -> Any:
    doc = draw(st.sampled_from([v0, tp_sample]))()
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        containers = [p for p in paths(doc) if isinstance(get(doc, p), (dict, list))]
        path = draw(st.sampled_from(containers))
        target = get(doc, path)
        action = draw(st.sampled_from(["set", "delete", "add"]))
        if isinstance(target, dict):
            key = draw(st.sampled_from([*sorted(target), "extra"])) if target else "extra"
            if action == "delete":
                target.pop(key, None)
            else:
                target[key] = draw(json_values)
        elif target and action == "set":
            target[draw(st.integers(min_value=0, max_value=len(target) - 1))] = draw(json_values)
        elif target and action == "delete":
            target.pop()
        else:
            target.append(draw(json_values))
    return doc


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_documents())
def test_mutated_documents_raise_only_spec_errors(doc: Any) -> None:
    try:
        verdict = validate_verdict(doc)
    except SPEC_ERRORS:
        return
    assert verdict.document == json.loads(json.dumps(doc))


@settings(max_examples=300)
@given(st.text(alphabet=st.sampled_from('{}[]:,"\\ 0123456789.eE-+truefalsnNIiy\u00e9\ud800'), max_size=60))
def test_arbitrary_text_raises_only_spec_errors(text: str) -> None:
    try:
        load_verdict("{" + text)
    except SPEC_ERRORS:
        pass


@settings(max_examples=300)
@given(st.integers(min_value=0, max_value=len(V0_CANONICAL) - 1), st.text(max_size=3))
def test_edited_v0_text_raises_only_spec_errors(at: int, insert: str) -> None:
    text = V0_CANONICAL[:at] + insert + V0_CANONICAL[at + 1 :]
    try:
        load_verdict(text if text.lstrip().startswith("{") else "{" + text)
    except SPEC_ERRORS:
        pass


@settings(max_examples=200)
@given(json_values)
def test_arbitrary_received_values_raise_only_spec_errors(value: Any) -> None:
    try:
        load_verdict(value if isinstance(value, (dict, list)) else {"value": value})
    except SPEC_ERRORS:
        pass

"""Input echoed back in a result goes through the stored-text sanitizer (sanitize_field), on both front doors:
no NUL, ESC, C1 control, bidi override, zero-width character or BOM comes back raw."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from doors import call_both, mcp_calls
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runners import run_cli
from surface_corpus import _uncertain_result, prepare_workspace

from harness.config import Overrides, load_settings
from harness.context import build_context
from harness.dispatch import CallContext, dispatch
from harness.schemas import input_schema
from harness.surface import OPERATIONS
from harness.text.sanitize import INVISIBLE, is_clean, sanitize_field

HOSTILE = [
    "a\x00b",
    "a\x1b[31mred",
    "a\x85b",
    "a\x9b2Jb",
    "invoice\u202etxt.exe",
    "a\u200bb",
    "\ufeffbom",
    "tab\there",
    "new\nline",
    "cr\rlf",
    "line\u2028sep",
    "  padded  ",
    "\x00\x1b\x85\x9b\u202e\u200b\ufeff all at once\r\n",
]

BASE_RESOLVE = {"action": "escalate", "confidence": "low", "rationale": "needs a human", "finding_id": "f-1"}

# Every place an operation repeats a string input in its result: (operation, input field, path in the result,
# the other arguments, the workspace it runs in).
ECHOES = [
    ("search_events", "actor", ("filter_applied", "actor"), {}, "sample"),
    ("search_events", "source", ("filter_applied", "source"), {}, "sample"),
    ("search_events", "type", ("filter_applied", "type"), {}, "sample"),
    ("lookup_rules", "finding_id", ("finding_id",), {"finding_family": "unusual-timing"}, "sample"),
    ("check_baseline", "event_type", ("event_type",), {"entity": "deploy-svc"}, "sample"),
    ("check_baseline", "event_type", ("event_type",), {"entity": "deploy-svc"}, "empty"),
    ("get_raw_event", "id", ("id",), {}, "sample"),
    ("resolve_finding", "rationale", ("proposal", "rationale"), BASE_RESOLVE, "sample"),
    ("resolve_finding", "finding_id", ("proposal", "finding_id"), BASE_RESOLVE, "sample"),
]


@pytest.fixture(scope="module")
def workspaces(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    empty = tmp_path_factory.mktemp("empty") / "ws"
    assert run_cli(["--workspace", str(empty), "init", "--empty"]).exit_code == 0
    return {"sample": prepare_workspace(tmp_path_factory.mktemp("sample")), "empty": empty}


def _strings(node: Any) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for key, value in node.items() for s in (key, *_strings(value))]
    if isinstance(node, list):
        return [s for value in node for s in _strings(value)]
    return []


def _at(document: dict[str, Any], path: tuple[str, ...]) -> Any:
    for key in path:
        document = document[key]
    return document


@pytest.mark.parametrize(
    ("operation", "field", "path", "others", "kind"), ECHOES, ids=[f"{e[0]}.{e[1]}-{e[4]}" for e in ECHOES]
)
def test_echoed_inputs_come_back_sanitized_on_both_doors(
    workspaces: dict[str, Path], operation: str, field: str, path: tuple[str, ...], others: dict[str, Any], kind: str
) -> None:
    for value in HOSTILE:
        answer = call_both(workspaces[kind], operation, {**others, field: value})
        assert not answer.is_error, answer.text
        assert _at(answer.document, path) == sanitize_field(value), repr(value)
        for text in _strings(answer.document):
            assert is_clean(text), (repr(value), text)


# Arguments every operation accepts apart from the field under test; an operation missing here fails the test.
BASE: dict[str, dict[str, Any]] = {
    "search_events": {},
    "search_findings": {},
    "check_baseline": {"entity": "deploy-svc"},
    "lookup_rules": {"finding_id": "f-1", "finding_family": "unusual-timing"},
    "get_raw_event": {"id": "evt-0001"},
    "resolve_finding": BASE_RESOLVE,
    "github_actor": {"login": "octocat"},
    "fp_agent_verify": {"verdict": {}},
    "fp_agent_pr": {"result": _uncertain_result(), "target_repo": "trustsight", "date": "2026-01-15"},
    "fp_agent_alert": {"result": _uncertain_result()},
    "repo_file": {"path": "src/trustsight/rules.py"},
}


def _hostile_calls(operation: str) -> list[tuple[str, dict[str, Any]]]:
    """Each string (or array of strings) input of `operation` set to each hostile value in turn."""
    calls = []
    for name, schema in input_schema(OPERATIONS.get(operation)).get("properties", {}).items():
        is_list = schema.get("type") == "array" and schema.get("items", {}).get("type") == "string"
        if schema.get("type") != "string" and not is_list:
            continue
        calls += [(operation, {**BASE[operation], name: [value] if is_list else value}) for value in HOSTILE]
    return calls


@pytest.mark.parametrize("operation", OPERATIONS.names())
def test_no_result_or_error_of_any_operation_carries_an_invisible_character(
    workspaces: dict[str, Path], operation: str
) -> None:
    workspace = workspaces["sample"]
    calls = _hostile_calls(operation)
    texts = mcp_calls(workspace, calls)
    for (_, arguments), (text, _) in zip(calls, texts, strict=True):
        cli = run_cli(["--workspace", str(workspace), operation, "--input", json.dumps(arguments)])
        assert cli.stdout == text + "\n"
        for string in _strings(json.loads(text)):
            assert not INVISIBLE.intersection(string), (arguments, string)


CALL = CallContext(surface="mcp", conversation_id="c", conversation_source="meta", request_id="1", tool_call_id="t")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=40))
def test_any_echoed_text_is_its_sanitized_form(workspaces: dict[str, Path], text: str) -> None:
    context = build_context(load_settings(Overrides(workspace=workspaces["sample"])))
    try:
        events = dispatch(OPERATIONS, "search_events", {"type": text, "limit": 1}, CALL, context).document
        baseline = dispatch(OPERATIONS, "check_baseline", {"entity": "x", "event_type": text}, CALL, context).document
        lookup = {"finding_id": text, "rule_ids": ["R-001"]}
        rules = dispatch(OPERATIONS, "lookup_rules", lookup, CALL, context).document
    finally:
        context.close()
    echoed = [events["filter_applied"]["type"], baseline["event_type"], rules["finding_id"]]
    assert echoed == [sanitize_field(text)] * 3
    assert all(is_clean(value) for value in echoed)

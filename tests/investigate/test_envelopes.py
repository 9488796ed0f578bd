"""One shape always (docs/architecture.md rule 1, docs/investigate.md §0, docs/investigate.md §9): random inputs to the four store-backed operations
give either every output key with its declared type, or an error with a documented code."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from runners import run_cli

from harness.config import Overrides, load_settings
from harness.context import Context, build_context
from harness.dispatch import CallContext, dispatch
from harness.mcp_server import tool_list
from harness.surface import OPERATIONS

STORE_BACKED = ("search_events", "search_findings", "check_baseline", "get_raw_event")
DOCUMENTED_CODES = {"invalid_input", "upstream_unavailable"}
CALL = CallContext(surface="mcp", conversation_id="c", conversation_source="test", request_id="1", tool_call_id="t")

WORDS = st.sampled_from(
    [
        "",
        "baron",
        "BARON",
        "deploy-svc",
        "ci-bot",
        "azure",
        "github",
        "login",
        "push",
        "evt-0001",
        "EVT-0024",
        "finding-evt-0024-off-hours",
        "finding-evt-0021",
        "unusual-timing",
        "US",
        "maintenanceWindow",
        "true",
        "\u202eevil\n",
    ]
)
TIMES = st.sampled_from(["", "2026-04-09", "2026-04-10T02:00:00Z", "2026-04-10T02:00:00+02:00", "2026-04-30"])
# Each refused somewhere: too long, not a bound, an ambiguous prefix.
BAD = st.sampled_from(["yesterday", "2026-04-10 09:00:00Z", "é" * 130, "a" * 300, "evt-", "finding-evt"])
JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=2500),
    st.floats(allow_nan=False),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
FIELD_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "ids": st.lists(WORDS, max_size=4),
    "since": TIMES,
    "until": TIMES,
    "limit": st.integers(min_value=1, max_value=2000),
    "finding_metadata": st.dictionaries(WORDS, WORDS, max_size=3),
}


def _mostly(good: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A plausible value 18 times in 20, else one refused somewhere, else junk of any JSON type."""
    return st.integers(min_value=0, max_value=19).flatmap(lambda n: JUNK if n == 0 else BAD if n == 1 else good)


def arguments(operation: str) -> st.SearchStrategy[dict[str, Any]]:
    """Required fields nearly always present, optional ones at random, rarely an unknown key."""
    model = OPERATIONS.get(operation).impl.input_model
    required = {name for name, info in model.model_fields.items() if info.is_required()}
    value = {name: _mostly(FIELD_VALUES.get(name, WORDS)) for name in model.model_fields}
    others = sorted(set(model.model_fields) - required)
    optional = st.lists(st.sampled_from(others), unique=True) if others else st.just([])
    keep_required = st.sampled_from([True] * 19 + [False])
    unknown = st.sampled_from([{}] * 19 + [{"eventType": "push"}])
    return st.tuples(optional, keep_required, unknown).flatmap(
        lambda parts: st.fixed_dictionaries(
            {name: value[name] for name in [*(sorted(required) if parts[1] else []), *parts[0]]}
        ).map(lambda chosen: {**chosen, **parts[2]})
    )


CALLS = st.sampled_from(STORE_BACKED).flatmap(lambda op: st.tuples(st.just(op), arguments(op)))


def _context(workspace: Path) -> Context:
    return build_context(load_settings(Overrides(workspace=workspace), environ={}))


@pytest.fixture(scope="module")
def contexts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Context]]:
    root = tmp_path_factory.mktemp("envelopes")
    sample = root / "sample"
    assert run_cli(["--workspace", str(sample), "init"]).exit_code == 0
    missing = root / "missing"
    missing.mkdir()
    broken = root / "broken"
    broken.mkdir()
    (broken / "store").write_text("not a repository")
    built = {name: _context(path) for name, path in (("sample", sample), ("missing", missing), ("broken", broken))}
    yield built
    for context in built.values():
        context.close()


SCHEMAS = {tool.name: tool.output_schema for tool in tool_list(OPERATIONS) if tool.name in STORE_BACKED}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(call=CALLS, where=st.sampled_from(["sample", "sample", "sample", "missing", "broken"]))
def test_every_answer_has_the_declared_shape_or_a_documented_error(
    contexts: dict[str, Context], call: tuple[str, dict[str, Any]], where: str
) -> None:
    operation, raw = call
    outcome = dispatch(OPERATIONS, operation, raw, CALL, contexts[where])
    document = outcome.document
    event(f"{operation}: {document['error']['code'] if outcome.is_error else 'ok'}")
    if outcome.is_error:
        assert set(document) == {"error"}
        assert document["error"]["code"] in DOCUMENTED_CODES, document
        assert document["error"]["operation"] == operation
        assert document["error"]["message"]
        if where == "broken" and document["error"]["code"] == "upstream_unavailable":
            assert document["error"]["message"].startswith("store unavailable: ")
        return
    schema = SCHEMAS[operation]
    assert set(document) == set(schema["properties"]) == set(schema["required"])
    jsonschema.validate(document, schema)
    for key, value in document.items():
        assert value is not None or (operation, key) == ("get_raw_event", "payload"), (operation, key)


@pytest.mark.parametrize("operation", STORE_BACKED)
def test_output_schemas_require_every_key(operation: str) -> None:
    schema = SCHEMAS[operation]
    assert set(schema["required"]) == set(schema["properties"])

"""The docs/investigate.md §4 contract through the operations: every answer of the four store-backed operations, served through the
read index, equals byte for byte the answer computed over a full replay of the same commit, while batches are
appended and the index is deleted or corrupted between steps."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from store_backends import StoreBackend, released_after, replay_of, workspace_store

from harness.config import Overrides, load_settings
from harness.context import Context, build_context
from harness.dispatch import CallContext, dispatch, error_outcome, serialize
from harness.errors import HarnessError
from harness.investigate import get_raw_event, search_events, search_findings
from harness.store import build_baseline
from harness.store.query import StoreView
from harness.surface import OPERATIONS
from harness.text import canonjson

CALL = CallContext(surface="mcp", conversation_id="c", conversation_source="test", request_id="1", tool_call_id="t")

# A tiny id alphabet forces exact hits, `finding-` rungs and ambiguous prefixes.
IDS = st.text(alphabet="ab-", min_size=1, max_size=5).map(lambda s: s if s[0] != "-" else "x" + s)
REQUESTS = st.one_of(
    IDS, IDS.map(lambda s: "finding-" + s), IDS.map(str.upper), st.just("abab"), st.just("finding-a-b")
)
ACTORS = st.sampled_from(["baron", "BARON", "Baron", "ci-bot", ""])
SOURCES = st.sampled_from(["github", "GitHub", "azure", ""])
TYPES = st.sampled_from(["push", "Push", "login", ""])
HOURS = st.integers(min_value=0, max_value=23)
PAYLOADS = st.one_of(
    st.just({}),
    st.builds(
        lambda action, ip, window: {
            "action": action,
            "Target": "web-01",
            "metadata": {"ip": ip, "maintenance_window": window},
        },
        st.sampled_from(["restart", "push"]),
        st.sampled_from(["203.0.113.5", "10.0.0.1"]),
        st.booleans(),
    ),
    st.builds(lambda geo: {"ip": "203.0.113.5", "geo": geo, "sessionToken": "t"}, st.sampled_from(["US", "GB"])),
)
EVENTS = st.builds(
    lambda i, a, s, t, h, p: {
        "id": i,
        "actor": a,
        "source": s,
        "type": t,
        "timestamp": f"2026-04-10T{h:02d}:00:00Z",
        "payload": p,
    },
    IDS,
    ACTORS,
    SOURCES,
    TYPES,
    HOURS,
    PAYLOADS,
)
FINDINGS = st.builds(
    lambda i, a, h, e: {
        "id": i,
        "actor": a,
        "type": "unusual-timing",
        "reason": "r\u202e\n",
        "timestamp": "" if h is None else f"2026-04-10T{h:02d}:30:00Z",
        "evidence": {"event_id": e},
    },
    IDS.map(lambda s: "finding-" + s),
    ACTORS,
    st.none() | HOURS,
    IDS,
)
BASELINES = st.builds(
    lambda actors, count: {"known_actors": actors, "frequency_tables": {f"github:push:{a}": count for a in actors}},
    st.lists(ACTORS.filter(bool), max_size=2),
    st.integers(min_value=0, max_value=5),
)
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("events"), st.lists(EVENTS, min_size=1, max_size=4)),
        st.tuples(st.just("findings"), st.lists(FINDINGS, min_size=1, max_size=2)),
        st.tuples(st.just("baseline"), st.lists(BASELINES, min_size=1, max_size=1)),
        st.tuples(st.just("build"), st.none()),
        st.tuples(st.just("delete"), st.none()),
        st.tuples(st.just("corrupt"), st.none()),
    ),
    min_size=1,
    max_size=6,
)
BOUNDS = st.sampled_from(["", "2026-04-10", "2026-04-10T05:00:00Z", "2026-04-10T12:00:00+02:00", "2026-04-11"])
LIMITS = st.integers(min_value=1, max_value=4)


def _drop_empty(arguments: dict[str, Any]) -> dict[str, Any]:
    """Omitted and empty arguments mean the same; both forms are exercised."""
    return {k: v for k, v in arguments.items() if v not in ("", [], {})}


QUERIES = st.lists(
    st.one_of(
        st.tuples(
            st.just("search_events"),
            st.fixed_dictionaries(
                {
                    "actor": ACTORS,
                    "source": SOURCES,
                    "type": TYPES,
                    "ids": st.lists(REQUESTS | st.just(""), max_size=3),
                    "since": BOUNDS,
                    "until": BOUNDS,
                    "limit": LIMITS,
                    "finding_family": st.sampled_from(["", "unusual-timing"]),
                    "finding_metadata": st.sampled_from([{}, {"maintenanceWindow": "true"}]),
                }
            ).flatmap(lambda a: st.sampled_from([a, _drop_empty(a)])),
        ),
        st.tuples(
            st.just("search_findings"),
            st.fixed_dictionaries(
                {
                    "actor": ACTORS,
                    "type": st.sampled_from(["", "UNUSUAL-TIMING"]),
                    "ids": st.lists(REQUESTS | st.just(""), max_size=3),
                    "since": BOUNDS,
                    "limit": LIMITS,
                }
            ).map(_drop_empty),
        ),
        st.tuples(
            st.just("check_baseline"),
            st.fixed_dictionaries(
                {
                    "entity": st.sampled_from(["baron", "BARON", "ci-bot", "nobody"]),
                    "source": st.sampled_from(["", "us", "FR"]),
                    "event_type": TYPES,
                }
            ),
        ),
        st.tuples(st.just("get_raw_event"), st.fixed_dictionaries({"id": REQUESTS})),
    ),
    min_size=1,
    max_size=5,
)


def _baseline_oracle(raw: dict[str, Any], view: StoreView, scratch: Path) -> str:
    """check_baseline called through dispatch with the replay's newest baseline given as a `--baseline` file
    (or no baseline at all), so the oracle shares no code path with the store's index."""
    found = view.latest_baseline()
    workspace = scratch / "oracle-ws"
    workspace.mkdir(exist_ok=True)
    overrides = Overrides(workspace=workspace)
    if found is not None:
        file = scratch / f"baseline-{len(list(scratch.iterdir()))}.json"
        file.write_text(canonjson.dumps(found.record))
        overrides = Overrides(workspace=workspace, baseline=file)
    ctx = build_context(load_settings(overrides, environ={}))
    try:
        return dispatch(OPERATIONS, "check_baseline", raw, CALL, ctx).text
    finally:
        ctx.close()


def _oracle(operation: str, raw: dict[str, Any], view: StoreView, ctx: Context, scratch: Path) -> str:
    """The answer computed over a full replay, serialized as the dispatcher serializes it."""
    if operation == "check_baseline":
        return _baseline_oracle(raw, view, scratch)
    model = OPERATIONS.get(operation).impl.input_model
    arguments = model.model_validate(raw, strict=True)
    try:
        if operation == "search_events":
            output: Any = search_events.answer(arguments, view, ctx)
        elif operation == "search_findings":
            output = search_findings.answer(arguments, view)
        else:
            output = get_raw_event.answer(arguments, view, ctx.redactor)
    except HarnessError as exc:
        return error_outcome(exc.code, exc.message, operation).text
    return serialize(output.model_dump(mode="json", by_alias=True))


def _context(workspace: Path) -> Context:
    return build_context(load_settings(Overrides(workspace=workspace), environ={}))


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS, queries=QUERIES, segment_records=st.integers(min_value=1, max_value=3))
def test_operation_answers_through_the_index_equal_replay(
    store_backend: StoreBackend, steps: list[Any], queries: list[tuple[str, dict[str, Any]]], segment_records: int
) -> None:
    """On PostgreSQL the queries are SQL over the tables and the oracle the same replay over the records read
    back; there is no index file to delete or corrupt."""
    with tempfile.TemporaryDirectory() as tmp, released_after():
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        store_backend.bind(workspace)
        scratch = Path(tmp) / "scratch"
        scratch.mkdir()
        writer = workspace_store(workspace, segment_max_records=segment_records, segment_max_bytes=600)
        ctx = _context(workspace)
        try:
            for action, payload in steps:
                if action == "delete":
                    if not store_backend.is_pg:
                        writer.index_path.unlink(missing_ok=True)
                elif action == "corrupt":
                    if not store_backend.is_pg and writer.index_path.exists():
                        with open(writer.index_path, "r+b") as handle:
                            handle.write(os.urandom(min(4096, writer.index_path.stat().st_size)))
                    # A fresh context stands for another process that finds the file broken.
                    ctx.close()
                    ctx = _context(workspace)
                elif action == "build":
                    build_baseline(writer)
                else:
                    try:
                        writer.append_batch(action, payload)
                    except HarnessError as exc:
                        assert exc.code == "invalid_input"
                replay = replay_of(writer)
                for operation, raw in queries:
                    outcome = dispatch(OPERATIONS, operation, raw, CALL, ctx)
                    through_index = outcome.text
                    event(f"{operation}: {outcome.error_code or 'ok'}")
                    assert through_index == _oracle(operation, raw, replay, ctx, scratch), (operation, raw)
        finally:
            ctx.close()
            writer.close()

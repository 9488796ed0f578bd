"""The docs/investigate.md §4 contract as a property: every answer through the index equals the replay oracle's, byte for byte,
while batches are appended and the index is deleted or corrupted between steps."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_support import canonical

from harness.errors import HarnessError
from harness.store import RecordFilter, Store
from harness.store.query import StoreView

IDS = st.text(alphabet="ab-", min_size=1, max_size=4).map(lambda s: s if s[0] != "-" else "x" + s)
REQUESTS = st.one_of(IDS, IDS.map(lambda s: "finding-" + s), IDS.map(str.upper), st.just(""), st.just("abab"))
ACTORS = st.sampled_from(["baron", "BARON", "Baron", "ci-bot", ""])
SOURCES = st.sampled_from(["github", "GitHub", "azure", ""])
TYPES = st.sampled_from(["push", "Push", "login", ""])
HOURS = st.integers(min_value=0, max_value=23)
TARGETS = st.sampled_from(["portal.azure.com", "Portal.Azure.com", "repo", ""])
IPS = st.sampled_from(["203.0.113.5", "2001:DB8::1", "2001:db8::1", ""])
# Where adapters and hand-written events put target and ip: metadata.ip, a top-level ip, a key in another casing,
# both (metadata wins), and shapes that hold no string.
PAYLOADS = st.one_of(
    st.builds(lambda t, i: {"target": t, "metadata": {"ip": i}}, TARGETS, IPS),
    st.builds(lambda t, i: {"Target": t, "ip": i}, TARGETS, IPS),
    st.builds(lambda i, j: {"metadata": {"IP": i}, "ip": j}, IPS, IPS),
    st.builds(lambda i: {"metadata": {"user_agent": "x"}, "ip": i}, IPS),
    st.just({"target": 7, "metadata": {"ip": None}}),
    st.just({}),
)
INSTANT_BASE = 1_775_779_200_000_000  # 2026-04-10T00:00:00Z
HOUR = 3_600_000_000

EVENTS = st.builds(
    lambda i, a, s, t, h, p: {"id": i, "actor": a, "source": s, "type": t, "timestamp": f"2026-04-10T{h:02d}:00:00Z",
                              "payload": p},
    IDS, ACTORS, SOURCES, TYPES, HOURS, PAYLOADS,
)
FINDINGS = st.builds(
    lambda i, a, h, e: {"id": i, "actor": a, "timestamp": "" if h is None else f"2026-04-10T{h:02d}:30:00Z",
                        "evidence": {"event_id": e}},
    IDS.map(lambda s: "finding-" + s), ACTORS, st.none() | HOURS, IDS,
)
BASELINES = st.builds(lambda actors: {"known_actors": actors}, st.lists(ACTORS.filter(bool), max_size=2))
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("events"), st.lists(EVENTS, min_size=1, max_size=4)),
        st.tuples(st.just("findings"), st.lists(FINDINGS, min_size=1, max_size=2)),
        st.tuples(st.just("baseline"), st.lists(BASELINES, min_size=1, max_size=1)),
        st.tuples(st.just("delete"), st.none()),
        st.tuples(st.just("corrupt"), st.none()),
    ),
    min_size=1,
    max_size=6,
)
WINDOWS = st.tuples(st.none() | HOURS, st.none() | HOURS)
QUERIES = st.lists(
    st.tuples(ACTORS, SOURCES, TYPES, TARGETS, IPS, st.none() | st.lists(REQUESTS, max_size=3), WINDOWS,
              st.integers(min_value=1, max_value=4)),
    min_size=1,
    max_size=4,
)


def _answer(view: StoreView, queries: list[Any]) -> str:
    out: list[Any] = [view.commit]
    for actor, source, type_, target, ip, ids, (since, until), limit in queries:
        try:
            window = {
                "since": None if since is None else INSTANT_BASE + since * HOUR,
                "until": None if until is None else INSTANT_BASE + until * HOUR,
            }
            events = RecordFilter(actor=actor, source=source, type=type_, target=target, ip=ip, **window,
                                  ids=None if ids is None else view.resolve_filter("events", ids))
            findings = RecordFilter(actor=actor, since=window["since"],
                                    ids=None if ids is None else view.resolve_filter("findings", ids))
            pages = [view.select("events", events, limit), view.select("findings", findings, limit)]
            out.append([[p.total, p.records] for p in pages])
            out.append([view.resolve("events", r) for r in ids or []])
            out.append([view.get("events", r) for r in ids or []])
        except HarnessError as exc:
            out.append(["error", exc.code, exc.message])
    baseline = view.latest_baseline()
    out.append(None if baseline is None else baseline.record)
    out.append(list(view.records("events")))
    return canonical(out)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS, queries=QUERIES, limit=st.integers(min_value=1, max_value=3))
def test_index_answers_equal_replay(steps: list[Any], queries: list[Any], limit: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "store", segment_max_records=limit, segment_max_bytes=400)
        for action, payload in steps:
            if action == "delete":
                store.index_path.unlink(missing_ok=True)
            elif action == "corrupt":
                if store.index_path.exists():
                    with open(store.index_path, "r+b") as handle:
                        handle.write(os.urandom(min(4096, store.index_path.stat().st_size)))
                # Another handle stands for another process that finds the file broken.
                store = Store(store.path, index_path=store.index_path, segment_max_records=limit,
                              segment_max_bytes=400)
            else:
                try:
                    store.append_batch(action, payload)
                except HarnessError as exc:
                    assert exc.code == "invalid_input"
            with store.snapshot() as view:
                through_index = _answer(view, queries)
            assert through_index == _answer(store.replay(), queries)

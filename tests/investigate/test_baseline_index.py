"""check_baseline through the baseline index (docs/decisions.md, "Cold start"): on a baseline built from generated
events, every entity's answer equals the one computed from the parsed baseline of a full replay; the newest
baseline wins; an unknown entity reads as absent; a baseline over the old 32 MiB line cap is stored and answered."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from harness.config import Overrides, load_settings
from harness.context import Context, build_context
from harness.investigate import services
from harness.investigate.check_baseline import Input, check, handle
from harness.store import Store, build_baseline
from harness.store.baseline_index import BaselineIndex, EntityIndex, sidecar_path
from tests.investigate.baseline_support import clean_env_fixture, workspace_fixture  # noqa: F401 - fixtures

ACTORS = [f"actor-{n:03d}" for n in range(40)] + ["Deploy-Svc", "deploy-svc", "arn:aws:iam::123456789012:role/ci"]
TYPES = ["login", "push", "role_assignment", "container_restart", "user_created"]


def _events(count: int, seed: int, prefix: str) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    events = []
    for n in range(count):
        kind = rng.choice(TYPES)
        actor = rng.choice(ACTORS)
        target = rng.choice([f"repo-{rng.randrange(30)}", rng.choice(ACTORS), "arn:aws:s3:::logs", ""])
        meta: dict[str, Any] = {"ip": f"203.0.113.{rng.randrange(20)}", "geo": rng.choice(["US", "GB", "Germany"])}
        if kind == "role_assignment":
            meta.update(role=rng.choice(["admin", "reader", "Owner"]), target_user=rng.choice(ACTORS))
        if kind == "user_created":
            meta.update(target_user=f"new-user-{rng.randrange(10)}")
        events.append({
            "id": f"{prefix}-{n:05d}",
            "source": rng.choice(["aws", "github", "okta"]),
            "type": kind,
            "actor": actor,
            "timestamp": f"2026-0{rng.randrange(1, 10)}-1{rng.randrange(10)}T{rng.randrange(24):02d}:00:00Z",
            "payload": {"target": target, "metadata": meta},
        })  # fmt: skip
    return events


def _context(workspace: Path) -> Context:
    """A fresh context, as a new process makes: nothing parsed or cached yet."""
    return build_context(load_settings(Overrides(workspace=workspace)))


def _store(workspace: Path) -> Store:
    return Store(workspace / "store")


def _queries(index: EntityIndex) -> list[Input]:
    entities = sorted(index.entities())
    queries = [Input(entity=entity) for entity in entities]
    queries += [Input(entity=entity.upper(), source="US", event_type="LOGIN") for entity in entities[::3]]
    queries += [Input(entity="nobody-at-all"), Input(entity="actor-0", event_type="push")]
    return queries


def _oracle(workspace: Path) -> EntityIndex:
    """The grouping of the newest baseline of a full replay (no index involved)."""
    found = _store(workspace).replay().latest_baseline()
    assert found is not None
    return EntityIndex(found)


def _answers_match(workspace: Path) -> int:
    oracle = _oracle(workspace)
    ctx = _context(workspace)
    queries = _queries(oracle)
    for args in queries:
        assert handle(args, ctx).model_dump() == check(oracle, args).model_dump(), args.entity
    return len(queries)


def _parsed_in(ctx: Context) -> bool:
    """Whether this context's store parsed a baseline record (its read index caches the last one it parsed)."""
    index = services.store(ctx)._index
    return index is not None and index._baseline_cache is not None


def test_every_entity_answers_as_the_parsed_baseline(workspace: Path) -> None:
    store = _store(workspace)
    store.append_batch("events", _events(3000, seed=1, prefix="a"))
    build_baseline(store)
    with store.snapshot() as view:
        digest = view.latest_baseline_digest()
    assert digest is not None and BaselineIndex(store.index_path).read(digest) is not None
    assert _answers_match(workspace) > 100
    # A fresh process answers from the index without parsing the record.
    ctx = _context(workspace)
    answer = handle(Input(entity="DEPLOY-SVC", event_type="login"), ctx)
    assert answer.known and answer.frequency_for_type > 0 and answer.relationships
    assert not _parsed_in(ctx)


def test_an_unknown_entity_is_absent(workspace: Path) -> None:
    store = _store(workspace)
    store.append_batch("events", _events(200, seed=2, prefix="a"))
    build_baseline(store)
    answer = handle(Input(entity="contractor-bob", source="US", event_type="login"), _context(workspace))
    assert answer.model_dump() == {
        "known": False, "last_seen": "", "frequency": 0, "frequency_by_type": {}, "frequency_for_type": 0,
        "event_type": "login", "roles": [], "relationships": {}, "notes": "entity not found in the baseline",
    }  # fmt: skip


def test_the_newest_baseline_wins(workspace: Path) -> None:
    store = _store(workspace)
    store.append_batch("events", _events(800, seed=3, prefix="a"))
    build_baseline(store)
    first = handle(Input(entity="actor-001"), _context(workspace))
    # A second build over more events merges into a newer record; then an ingested baseline (written without
    # the index) is newer still, and the first read after it builds the index for it.
    store.append_batch("events", _events(800, seed=4, prefix="b"))
    build_baseline(store)
    second = handle(Input(entity="actor-001"), _context(workspace))
    assert second.frequency > first.frequency
    assert _answers_match(workspace) > 50
    store.append_batch("baseline", [{"known_actors": ["only-me"], "actor_roles": {"only-me": ["admin:x"]}}])
    ctx = _context(workspace)
    assert handle(Input(entity="actor-001"), ctx).known is False
    assert _parsed_in(ctx)
    assert handle(Input(entity="ONLY-ME"), ctx).roles == ["admin:x"]
    ctx = _context(workspace)
    assert handle(Input(entity="only-me"), ctx).known is True and not _parsed_in(ctx)
    assert _answers_match(workspace) == 4


def test_a_deleted_or_broken_index_is_rebuilt_with_the_same_answers(workspace: Path) -> None:
    store = _store(workspace)
    store.append_batch("events", _events(500, seed=5, prefix="a"))
    build_baseline(store)
    path = sidecar_path(store.index_path)
    path.unlink()
    assert _answers_match(workspace) > 20
    assert path.exists()
    path.write_bytes(b"not a database at all" * 100)
    assert _answers_match(workspace) > 20
    ctx = _context(workspace)
    handle(Input(entity="actor-002"), ctx)
    assert not _parsed_in(ctx)


@pytest.mark.slow
def test_a_baseline_over_the_old_line_cap_is_stored_and_answered(workspace: Path) -> None:
    # 4,400 relationships of about 8 KB each: a 36 MB record, over the 32 MiB cap a baseline line had.
    wide = "t" * 8000
    relationships = {f"big-actor:{wide}{n:05d}": {"count": n + 1} for n in range(4400)}
    relationships["big-actor:short-target"] = {"count": 9}
    record = {"known_actors": ["big-actor"], "relationships": relationships,
              "frequency_tables": {"aws:login:big-actor": 3}}  # fmt: skip
    store = _store(workspace)
    store.append_batch("baseline", [record])
    replayed = store.replay().latest_baseline()
    assert replayed is not None and len(replayed.relationships) == 4401
    ctx = _context(workspace)
    answer = handle(Input(entity="big-actor", event_type="login"), ctx)
    assert answer.known and answer.frequency_for_type == 3 and len(answer.relationships) == 500
    assert answer.notes == "relationships truncated to the first 500 of 4401 entries"
    target = handle(Input(entity="SHORT-TARGET"), _context(workspace))
    assert list(target.relationships) == ["big-actor:short-target"]
    assert target.relationships["big-actor:short-target"].count == 9
    assert handle(Input(entity="big-actor"), _context(workspace)) == handle(Input(entity="big-actor"), ctx)

"""Id resolution (docs/investigate.md §8), through the index and through the replay oracle."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from store_support import event

from harness.errors import InvalidInput
from harness.store import Store
from harness.store.query import StoreView


@pytest.fixture(params=["index", "replay"])
def views(request: pytest.FixtureRequest, make_store: Callable[..., Store]) -> Callable[..., Any]:
    """Build a store holding the given event (and finding) ids and open a view of it."""

    def build(events: list[str], findings: tuple[str, ...] = ()) -> Iterator[StoreView]:
        store = make_store()
        store.append_batch("events", [event(i) for i in events])
        if findings:
            store.append_batch("findings", [{"id": i} for i in findings])
        if request.param == "replay":
            yield store.replay()
            return
        with store.snapshot() as view:
            yield view

    def open_view(events: list[str], findings: tuple[str, ...] = ()) -> StoreView:
        generator = build(events, findings)
        view = next(generator)
        request.addfinalizer(lambda: next(generator, None))
        return view

    return open_view


@pytest.mark.parametrize(
    ("stored", "request_id", "expected"),
    [
        (["cafe1234"], "cafe1234", ("cafe1234",)),
        (["cafe1234"], "CAFE1234", ("cafe1234",)),
        (["cafe1234"], "finding-cafe1234", ("cafe1234",)),
        (["cafe1234"], "FINDING-CAFE1234", ("cafe1234",)),
        (["cafe1234"], "cafe", ("cafe1234",)),
        (["cafe1234"], "caf", ()),
        (["cafe1234"], "zzzzzzzz", ()),
        (["cafe1111aaaa", "cafe2222bbbb", "feedaced1111"], "feedac", ("feedaced1111",)),
        (["cafe1111aaaa", "cafe2222bbbb", "feedaced1111"], "cafe1111aaaa", ("cafe1111aaaa",)),
        (["abc", "abc-1-2-3"], "abc-1-2-3", ("abc-1-2-3",)),
        (["abc", "abc-1-2-3"], "abc", ("abc",)),
        (["abc"], "abc-1-2-3", ()),
        (["evt_ab12cd34ef56", "evt_ab12cd34ef56extra"], "finding-evt_ab12cd34ef56-inj-command-injection-chain",
         ("evt_ab12cd34ef56",)),
        (["evt_ab12cd34ef56extra"], "finding-evt_ab12cd34ef56-inj-command-injection-chain",
         ("evt_ab12cd34ef56extra",)),
        (["evt_1a2b"], "finding-evt_1a2b-inj-sqli", ("evt_1a2b",)),
        (["Finding-X", "x"], "finding-x", ("Finding-X", "x")),
        (["a-b-c-d-e-f-g-h"], "finding-a-b-c-d-e-f-g-h-i-j-k-l", ("a-b-c-d-e-f-g-h",)),
        (["a-b-c-d-e-f"], "finding-a-b-c-d-e-f-g-h-i-j-k-l", ("a-b-c-d-e-f",)),
        (["a-b-c-d-e"], "finding-a-b-c-d-e-f-g-h-i-j-k-l", ()),
    ],
)
def test_event_vectors(views: Callable[..., StoreView], stored: list[str], request_id: str, expected: tuple[str, ...]) -> None:
    assert views(stored).resolve("events", request_id) == expected


def test_rungs_stop_after_six_cuts(views: Callable[..., StoreView]) -> None:
    # Seven cuts would be needed to reach "a-b": the rungs stop before, and the prefix stage finds nothing.
    view = views(["a-b"])
    assert view.resolve("events", "finding-a-b-c-d-e-f-g-h-i") == ()
    assert view.resolve("events", "finding-a-b-c-d-e-f-g-h") == ("a-b",)


def test_ambiguous_prefix(views: Callable[..., StoreView]) -> None:
    view = views(["cafe1111aaaa", "cafe2222bbbb", "feedaced1111"])
    with pytest.raises(InvalidInput) as caught:
        view.resolve("events", "cafe")
    assert caught.value.message == (
        'id "cafe" is ambiguous: prefix matches 2 stored ids: cafe1111aaaa, cafe2222bbbb. '
        "Supply a longer prefix or the exact id."
    )


def test_ambiguity_lists_the_first_ten_by_lower_cased_id(views: Callable[..., StoreView]) -> None:
    view = views([f"EVT-{n:02d}" if n % 2 else f"evt-{n:02d}" for n in range(10, -1, -1)])
    with pytest.raises(InvalidInput) as caught:
        view.resolve("events", "evt-")
    shown = ", ".join(f"EVT-{n:02d}" if n % 2 else f"evt-{n:02d}" for n in range(10))
    assert caught.value.message == (
        f'id "evt-" is ambiguous: prefix matches 11 stored ids (showing first 10): {shown}. '
        "Supply a longer prefix or the exact id."
    )


def test_finding_vectors(views: Callable[..., StoreView]) -> None:
    view = views(["cafe1234"], findings=("finding-cafe1234", "f1"))
    for request_id in ("cafe1234", "CAFE1234", "cafe", "finding-cafe"):
        assert view.resolve("findings", request_id) == ("finding-cafe1234",)
    assert view.resolve("findings", "F1") == ("f1",)


def test_ids_filters(views: Callable[..., StoreView]) -> None:
    view = views(["e1", "e2", "e3", "e4", "cafe1234"])
    assert view.resolve_filter("events", []) is None
    assert view.resolve_filter("events", [""]) is None
    assert view.resolve_filter("events", ["", "e3"]) == frozenset({"e3"})
    assert view.resolve_filter("events", ["caf"]) == frozenset()
    assert view.resolve_filter("events", ["e4", "E1"]) == frozenset({"e4", "e1"})
    assert view.resolve_filter("events", ["finding-cafe1234"]) == frozenset({"cafe1234"})


def test_unencodable_and_odd_requests_resolve_to_nothing(views: Callable[..., StoreView]) -> None:
    top = "\U0010ffff" * 4
    view = views([top + "x", "\U0010ffffabcd", "ab\ud7ffz"])
    assert view.resolve("events", "ab\ud800cd") == ()
    assert view.resolve("events", top) == (top + "x",)
    assert view.resolve("events", "\U0010ffffabc") == ("\U0010ffffabcd",)
    assert view.resolve("events", "ab\ud7ff") == ()
    assert view.resolve("events", "ab\ud7ffz") == ("ab\ud7ffz",)

"""The conversation list's filters, counts and keyset pages on both backends, and the page's answers to bad input
(over HTTP, each naming its field); plus the pure pieces of the view: links and triage rendering."""

from __future__ import annotations

import datetime
import os

import httpx2
import pytest
from conftest import Ledger, Served
from corpus import Writer

from harness.ledger.browse import ConversationFilter, PageKey
from harness.ui import views


def _fill(ledger: Ledger) -> dict[str, datetime.datetime]:
    a = Writer(ledger.store, ledger.workspace, "conv-a", "alice")
    a.call("search_events", {"actor": "x"}, {"events": []})
    b = Writer(ledger.store, ledger.workspace, "conv-b", "bob")
    b.call("search_events", {"actor": "y"}, {"events": []})
    b.call("get_raw_event", {"event_id": "needle-42"}, None, error="not_found: no event")
    c = Writer(ledger.store, ledger.workspace, "conv-c", "carol")
    c.start("github_actor", {"login": "z"})
    return {cid: w.rows[0].ts for cid, w in (("conv-a", a), ("conv-b", b), ("conv-c", c))}


def _ids(ledger: Ledger, where: ConversationFilter, after: PageKey | None = None, limit: int = 50) -> list[str]:
    with ledger.store.snapshot() as snap:
        return [r.conversation_id for r in snap.conversation_page(where, after, limit)]


def test_filters_and_counts(ledger: Ledger) -> None:
    started = _fill(ledger)
    assert _ids(ledger, ConversationFilter()) == ["conv-c", "conv-b", "conv-a"]
    assert _ids(ledger, ConversationFilter(status="error")) == ["conv-b"]
    assert _ids(ledger, ConversationFilter(status="ok")) == ["conv-b", "conv-a"]
    assert _ids(ledger, ConversationFilter(status="in_flight")) == ["conv-c"]
    assert _ids(ledger, ConversationFilter(tool_name="github_actor")) == ["conv-c"]
    assert _ids(ledger, ConversationFilter(principal="bob")) == ["conv-b"]
    assert _ids(ledger, ConversationFilter(text="needle-4")) == ["conv-b"]
    assert _ids(ledger, ConversationFilter(text="no such text")) == []
    assert _ids(ledger, ConversationFilter(since=started["conv-b"])) == ["conv-c", "conv-b"]
    assert _ids(ledger, ConversationFilter(until=started["conv-b"])) == ["conv-a"]
    assert _ids(ledger, ConversationFilter(since=started["conv-b"], until=started["conv-c"], status="error")) == [
        "conv-b"]
    with ledger.store.snapshot() as snap:
        rows = {r.conversation_id: r for r in snap.conversation_page(ConversationFilter(), None, 10)}
    b, c = rows["conv-b"], rows["conv-c"]
    assert (b.calls, b.ended, b.errors, b.in_flight, b.last_chain_seq, b.principal) == (2, 2, 1, 0, 4, "bob")
    assert (c.calls, c.in_flight, c.errors, c.last_chain_seq) == (1, 1, 0, 1)


def test_keyset_pages_cover_every_conversation_once(ledger: Ledger) -> None:
    _fill(ledger)
    seen, after = [], None
    while True:
        with ledger.store.snapshot() as snap:
            page = snap.conversation_page(ConversationFilter(), after, 1)
        if not page:
            break
        seen.append(page[0].conversation_id)
        after = page[0].key
    assert seen == ["conv-c", "conv-b", "conv-a"]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("status=done", "status:"),
        ("tool=%3Cscript%3E", "tool:"),
        ("since=yesterday", "since:"),
        ("after_ts=2026-01-01T00:00:00Z&after_id=%2F..", "after_id:"),
        ("text=" + "x" * 300, "text:"),
    ],
)
def test_bad_filters_are_refused_naming_the_field(served: Served, query: str, field: str) -> None:
    reply = httpx2.get(f"{served.base}/ui/?{query}")
    assert reply.status_code == 400
    assert f'<p class="problem"><bdi>{field}' in reply.text
    assert reply.headers["content-security-policy"].startswith("default-src 'none'; style-src 'self';")


def test_responses_are_read_only_and_hardened(served: Served, ledger: Ledger) -> None:
    _fill(ledger)
    page = httpx2.get(f"{served.base}/ui/c/conv-b")
    assert page.status_code == 200 and page.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    for method in ("PUT", "DELETE", "PATCH"):
        assert httpx2.request(method, f"{served.base}/ui/c/conv-b").status_code == 405
    assert httpx2.post(f"{served.base}/ui/").status_code == 405
    # A foreign Host or Origin is refused before the view runs, as on /mcp.
    assert httpx2.get(f"{served.base}/ui/", headers={"host": "evil.test"}).status_code == 403
    assert httpx2.get(f"{served.base}/ui/", headers={"origin": "https://evil.test"}).status_code == 403
    assert httpx2.get(f"{served.base}/ui/c/conv-zzz").status_code == 404


def test_sidecar_results_are_served_inert(served: Served, ledger: Ledger) -> None:
    writer = Writer(ledger.store, ledger.workspace, "big", "p")
    writer.call("search_events", {}, {"events": ["<script>x</script>" * 200]})
    end = writer.rows[-1]
    reply = httpx2.get(f"{served.base}{views.result_url('big', str(end.id))}")
    assert reply.status_code == 200 and reply.text.startswith('{"events": ["<script>')
    assert reply.headers["content-type"] == "text/plain; charset=utf-8"
    assert reply.headers["content-security-policy"] == "default-src 'none'; sandbox; frame-ancestors 'none'"
    assert reply.headers["x-content-type-options"] == "nosniff"
    assert httpx2.get(f"{served.base}{views.result_url('big', 'not-a-row')}").status_code == 404


def test_a_fifo_in_place_of_a_sidecar_file_is_missing_not_a_hung_server(served: Served, ledger: Ledger) -> None:
    writer = Writer(ledger.store, ledger.workspace, "big", "p")
    writer.call("search_events", {}, {"events": ["x" * 4000]})
    end = writer.rows[-1]
    sidecar = ledger.workspace / str(end.result_sidecar_path)
    sidecar.unlink()
    os.mkfifo(sidecar)
    # An open that blocked on the FIFO would never answer; the timeout turns that into a failure.
    reply = httpx2.get(f"{served.base}{views.result_url('big', str(end.id))}", timeout=30)
    assert reply.status_code == 404
    assert "the sidecar file is missing" in reply.text


def test_links_quote_every_piece() -> None:
    assert views.conversation_url("a:b.c") == "/ui/c/a%3Ab.c"
    assert views.conversation_url("x", after_chain_seq=5) == "/ui/c/x?after_chain_seq=5"
    assert views.result_url("x", "../../etc") == "/ui/c/x/result/..%2F..%2Fetc"
    assert views.list_url({"text": "a&b=<c>", "tool": ""}) == "/ui/?text=a%26b%3D%3Cc%3E"


def test_triage_views_take_only_their_shape() -> None:
    pr = views.triage_view("fp_agent_pr", {"title": "t", "body": "<b>", "files": {"b": "", "a": ""}, "branch": 3})
    assert pr == views.PrView("", "", "t", "<b>", ["a", "b"])
    assert views.triage_view("fp_agent_pr", {"title": "t", "files": ["a"]}) is None
    verify = views.triage_view("fp_agent_verify", {"verified": True, "checks": [{"name": "x", "rule_ids": ["R", 1]}]})
    assert verify is not None and verify.checks == [views.CheckLine("x", "R", False, "")]
    assert views.triage_view("fp_agent_verify", {"verified": "yes", "checks": []}) is None
    assert views.triage_view("search_events", {"verified": True, "checks": []}) is None

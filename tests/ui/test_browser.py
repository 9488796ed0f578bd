"""The ledger web view in a real headless Chromium, on SQLite and PostgreSQL: the conversation list, a timeline, a
tampered row shown as the first bad chain_seq, and a hostile corpus that never executes and never breaks the layout."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Ledger, Served
from corpus import HOSTILE, triage_session

VIEWPORT = {"width": 1280, "height": 900}
# Elements no page of the view has; any of them on a page means agent text became markup.
FOREIGN = "script, img, svg, iframe, style, base, meta[http-equiv], object, embed, a[href^='javascript' i], [onerror], [onload], [onmouseover], [onfocus]"


@dataclasses.dataclass
class Tab:
    page: Any
    base: str
    console: list[str] = dataclasses.field(default_factory=list)
    errors: list[str] = dataclasses.field(default_factory=list)
    requests: list[str] = dataclasses.field(default_factory=list)

    def open(self, path: str) -> Any:
        response = self.page.goto(self.base + path)
        self.page.wait_for_load_state("networkidle")
        return response

    def box(self, selector: str) -> dict[str, float]:
        return self.page.locator(selector).first.bounding_box()

    def page_width(self) -> int:
        return self.page.evaluate("Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)")


@pytest.fixture
def tab(chromium: Any, served: Served) -> Iterator[Tab]:
    context = chromium.new_context(viewport=VIEWPORT, java_script_enabled=True)
    page = context.new_page()
    tab = Tab(page, served.base)
    page.on("console", lambda m: tab.console.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: tab.errors.append(str(e)))
    page.on("request", lambda r: tab.requests.append(r.url))
    yield tab
    context.close()


def _assert_silent(tab: Tab, served: Served) -> None:
    assert tab.console == [] and tab.errors == []
    assert list(served.view.csp_reports) == []
    assert tab.page.evaluate("typeof window.__pwned") == "undefined"
    # Only the view's own pages and its one style sheet were fetched: no canary, no foreign origin.
    assert [u for u in tab.requests if not u.startswith(tab.base + "/ui/")] == []
    assert [u for u in tab.requests if "canary" in u] == []


def test_list_and_timeline(tab: Tab, served: Served, ledger: Ledger, tmp_path: Path) -> None:
    for n in range(3):
        triage_session(ledger.store, ledger.workspace, f"conv-{n}", hostile=False)
    tab.open("/ui/")
    ids = tab.page.locator("#conversations tr.conversation td.id").all_inner_texts()
    assert ids == ["conv-2", "conv-1", "conv-0"]  # newest first
    first = tab.page.locator("#conversations tr.conversation").first.locator("td").all_inner_texts()
    assert first[3:] == ["alice@example.test", "5", "1", "1", "9"]  # principal, calls, errors, in flight, rows
    tab.page.screenshot(path=str(tmp_path / "list.png"), full_page=True)

    tab.page.fill("input[name=tool]", "fp_agent_pr")
    tab.page.click("button[type=submit]")
    tab.page.wait_for_load_state("networkidle")
    assert "tool=fp_agent_pr" in tab.page.url
    assert tab.page.locator("#conversations tr.conversation").count() == 3

    tab.page.click("text=conv-1")
    tab.page.wait_for_load_state("networkidle")
    assert tab.page.inner_text("#chain").startswith("Chain ok: 9 rows")
    calls = tab.page.locator("#timeline > li.call")
    assert calls.count() == 5
    assert [calls.nth(i).get_attribute("class") for i in range(5)] == [
        "call ok", "call error", "call ok", "call ok", "call in_flight"]
    assert "in flight" in calls.nth(4).locator(".status").inner_text()
    assert "not_found: no event deploy-svc" in calls.nth(1).inner_text()
    checks = calls.nth(2).locator("table.checks tbody tr").all_inner_texts()
    assert len(checks) == 2 and "failed" in checks[1] and "R-URL-1" in checks[1]
    assert "not verified" in calls.nth(2).locator(".triage h3").inner_text()
    pr = calls.nth(3).locator(".triage.pr")
    assert pr.locator("h3").inner_text() == "Pull request: FP: hostile-pkg"
    assert pr.locator("ul.files li").all_inner_texts() == ["packages/hostile-pkg.json", "suppressions/hostile.json"]
    tab.page.screenshot(path=str(tmp_path / "timeline.png"), full_page=True)

    tab.page.click("#call-4 a.full")
    tab.page.wait_for_load_state("networkidle")
    assert tab.page.inner_text("body").startswith('{"target_repo": "trustsight"')
    assert (tmp_path / "list.png").stat().st_size > 0 and (tmp_path / "timeline.png").stat().st_size > 0
    _assert_silent(tab, served)


def test_keyset_pages(tab: Tab, served: Served, ledger: Ledger) -> None:
    from corpus import Writer

    for n in range(53):
        Writer(ledger.store, ledger.workspace, f"page-{n:02d}", "p").call("search_events", {"n": n}, {"events": []})
    tab.open("/ui/")
    first = tab.page.locator("#conversations tr.conversation td.id").all_inner_texts()
    tab.page.click("#next")
    tab.page.wait_for_load_state("networkidle")
    second = tab.page.locator("#conversations tr.conversation td.id").all_inner_texts()
    assert first == [f"page-{n:02d}" for n in range(52, 2, -1)] and second == ["page-02", "page-01", "page-00"]
    assert tab.page.locator("#next").count() == 0
    _assert_silent(tab, served)


def test_tampered_row_is_the_first_bad_chain_seq(tab: Tab, served: Served, ledger: Ledger, tmp_path: Path) -> None:
    written = triage_session(ledger.store, ledger.workspace, "tampered", hostile=False)
    triage_session(ledger.store, ledger.workspace, "intact", hostile=False)
    row = written.rows[2]  # chain_seq 3
    ledger.admin.tamper([("UPDATE ledger.tool_invocations SET arguments = ? WHERE id = ?", ['{"n":9}', str(row.id)])])
    tab.open("/ui/c/tampered")
    assert tab.page.inner_text("#bad-seq") == "3"
    assert "hash_mismatch" in tab.page.inner_text("#chain")
    tab.page.screenshot(path=str(tmp_path / "tampered.png"), full_page=True)
    tab.open("/ui/c/intact")
    assert tab.page.inner_text("#chain").startswith("Chain ok")
    tab.open("/ui/verify")
    assert tab.page.inner_text("#verdict").startswith("Problems found")
    assert tab.page.locator("#problems tbody tr").all_inner_texts() == [
        "tampered\t3\thash_mismatch\tthe recomputed row_hash differs from the stored one"]
    _assert_silent(tab, served)


def test_verify_against_an_uploaded_heads_file(tab: Tab, served: Served, ledger: Ledger, tmp_path: Path) -> None:
    import datetime
    import json

    from harness.ledger.verify import heads_document

    triage_session(ledger.store, ledger.workspace, "cut", hostile=False)
    doc = heads_document(ledger.store.heads(), backend=ledger.store.backend,
                         exported_at=datetime.datetime.now(datetime.UTC))
    doc["heads"][0]["chain_seq"] += 2  # heads that claim two rows more than the ledger has: a cut tail
    import hashlib

    from harness.text import canonjson

    doc["digest"] = hashlib.sha256(canonjson.dumps_bytes(doc["heads"])).hexdigest()
    heads = tmp_path / "heads.json"
    heads.write_text(json.dumps(doc))
    tab.open("/ui/verify")
    tab.page.set_input_files("input[name=heads]", str(heads))
    tab.page.click("text=Verify against heads")
    tab.page.wait_for_load_state("networkidle")
    assert "against the uploaded heads (1 checked)" in tab.page.inner_text("#verdict")
    assert tab.page.locator("#problems tbody tr td").nth(2).inner_text() == "head_behind"
    _assert_silent(tab, served)
    heads.write_text("not json")
    tab.open("/ui/verify")
    tab.page.set_input_files("input[name=heads]", str(heads))
    tab.page.click("text=Verify against heads")
    tab.page.wait_for_load_state("networkidle")
    assert tab.page.inner_text("p.problem").startswith("heads: not a JSON document")
    # The refused upload is answered 400, which the browser notes; nothing else is said.
    assert tab.console == ["error: Failed to load resource: the server responded with a status of 400 (Bad Request)"]


def test_hostile_corpus_never_executes_nor_breaks_the_layout(
    tab: Tab, served: Served, ledger: Ledger, tmp_path: Path
) -> None:
    triage_session(ledger.store, ledger.workspace, "benign", hostile=False)
    tab.open("/ui/c/benign")
    benign = {s: tab.box(s) for s in ("#top", "h1", "#chain", "#call-1 .head")}

    triage_session(ledger.store, ledger.workspace, "hostile", hostile=True)
    for path in ("/ui/", "/ui/c/hostile", "/ui/?text=%3Cscript%3E", "/ui/verify"):
        tab.open(path)
        assert tab.page.locator(FOREIGN).count() == 0, path
        assert tab.page_width() <= VIEWPORT["width"], path
        assert tab.page.locator("#bottom").is_visible(), path
    tab.open("/ui/c/hostile")
    # The page keeps its frame: the same header, title, chain line and first call heading as the benign page.
    hostile = {s: tab.box(s) for s in ("#top", "h1", "#chain", "#call-1 .head")}
    for selector, box in benign.items():
        assert (hostile[selector]["x"], hostile[selector]["width"]) == (box["x"], box["width"]), selector
    assert hostile["#top"] == benign["#top"] and hostile["h1"]["y"] == benign["h1"]["y"]
    # The 1 MiB PR body arrives whole, as text, inside a scrolling box of bounded height.
    body = tab.page.locator("#call-4 .triage.pr pre.body")
    assert len(body.inner_text()) > 1 << 20 and body.bounding_box()["height"] < 600
    text = tab.page.inner_text("#timeline")
    for piece in HOSTILE[:6]:
        assert piece in text  # shown as the characters it is
    tab.page.locator("#call-1 details.args summary").click()
    tab.page.hover("#call-1 pre")
    tab.page.screenshot(path=str(tmp_path / "hostile.png"))
    _assert_silent(tab, served)


def test_the_watchers_see_a_violation_when_there_is_one(tab: Tab, served: Served, ledger: Ledger) -> None:
    # What the silence above is measured with: markup that did reach the page is blocked and reported.
    tab.open("/ui/")
    tab.page.evaluate("document.body.insertAdjacentHTML('beforeend', '<img src=\"https://evil.test/x.png\">')")
    deadline = tab.page.evaluate("Date.now()") + 10_000
    while not served.view.csp_reports and tab.page.evaluate("Date.now()") < deadline:
        tab.page.wait_for_timeout(100)
    assert len(served.view.csp_reports) == 1
    assert "img-src" in served.view.csp_reports[0]["body"] and "evil.test" in served.view.csp_reports[0]["body"]
    assert any("Content Security Policy" in line for line in tab.console)
    assert tab.page.locator(FOREIGN).count() == 1

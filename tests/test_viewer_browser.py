"""The viewer in real headless Chromium (driven over the DevTools protocol, tests/browser.py).

The live timeline while a real watcher merges agents, a click on a citation showing the passage and
its page, the layout at 390 px and 1280 px, and keyboard access to every control. Skipped without
Chromium (a failure instead when CCONDUCTOR_REQUIRE_BROWSER is set, as in CI).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator.commit.processor import Processor
from orchestrator.session.record import create_session
from tests.browser import Browser, chromium
from tests.conftest import sample_claim, sample_source, store_text, write_artifacts
from tests.helpers.viewer import Served, served
from tests.helpers.watching import running_watcher

TABS = ("timeline", "agents", "quality", "contradictions", "report", "graph")
LOADED = "document.querySelector('#tab') && !document.querySelector('#tab .loading') && " \
         "document.querySelector('#tab').children.length > 0"


@pytest.fixture(scope="module")
def sessions(viewed_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    chromium()  # skip (or fail in CI) before any work when there is no browser
    folder = tmp_path_factory.mktemp("viewer-browser") / "sessions"
    shutil.copytree(viewed_run.parent, folder, symlinks=True)
    return folder


@pytest.fixture(scope="module")
def server(sessions: Path) -> Iterator[Served]:
    with served(sessions) as running:
        yield running


@pytest.fixture(scope="module")
def browser(sessions: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    opened = Browser(tmp_path_factory.mktemp("chromium-profile"), 1280, 900)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture(scope="module")
def sid(viewed_run: Path) -> str:
    return viewed_run.name


def open_tab(browser: Browser, server: Served, sid: str, tab: str) -> None:
    browser.go(f"{server.base}/#/s/{sid}/{tab}")
    browser.wait(f"{LOADED} && document.querySelector('#tab').dataset.tab === '{tab}'", f"the {tab} tab")


def click(browser: Browser, selector: str) -> None:
    """A real mouse click in the middle of the first element matching ``selector``."""
    box = browser.js(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView("
                     "{block: 'center'}); const r = e.getBoundingClientRect(); return [r.x + r.width / 2, "
                     "r.y + r.height / 2]; })()")
    assert isinstance(box, list)
    for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
        browser.call("Input.dispatchMouseEvent", session=True, type=kind, x=box[0], y=box[1], button="left",
                     clickCount=1)


def _agent(paths: Any, name: str, text: str, snippet: str) -> None:
    sha = store_text(paths, text)
    write_artifacts(paths, name, {"sources.json": {"sources": [sample_source("S1", content_sha256=sha)]},
                                  "claims.json": {"claims": [sample_claim("C1", snippet=snippet)]}})


def test_the_live_timeline_updates_while_agents_merge(browser: Browser, server: Served, sessions: Path) -> None:
    paths = create_session(sessions, "Does sleep help memory?")
    browser.resize(1280, 900)
    open_tab(browser, server, paths.root.name, "timeline")
    browser.wait("document.querySelector('#live').textContent === 'live'", "the live stream to connect")
    processor = Processor(paths)
    try:
        with running_watcher(processor, rescan_interval=2.0, flush_interval=0.2, stop_timeout=60):
            _agent(paths, "sleep-researcher", "Sleep deprivation reduces working memory performance in adults.",
                   "reduces working memory performance in adults")
            browser.wait("[...document.querySelectorAll('#timeline li[data-type=\"merge.committed\"]')]"
                         ".some(li => li.textContent.includes('sleep-researcher: attempt 1 merged'))",
                         "the first merge in the timeline")
            _agent(paths, "second-researcher", "Eight hours of sleep improved recall compared with four hours.",
                   "Eight hours of sleep improved recall")
            browser.wait("[...document.querySelectorAll('#timeline li[data-type=\"merge.committed\"]')]"
                         ".some(li => li.textContent.includes('second-researcher: attempt 1 merged'))",
                         "the second merge in the timeline")
            # the header follows the committed graph without a reload
            browser.wait("document.querySelector('#overview').textContent.includes('2 claims')",
                         "the header's claim count", timeout=30)
    finally:
        processor.close()
    rows = browser.js("[...document.querySelectorAll('#timeline li')].map(li => li.dataset.type)")
    assert isinstance(rows, list) and rows.index("merge.committed") < rows.index("lock.seen"), "newest first"


def test_a_click_on_a_citation_shows_the_passage_and_the_page(browser: Browser, server: Served, sid: str,
                                                             sessions: Path) -> None:
    browser.resize(1280, 900)
    open_tab(browser, server, sid, "report")
    claim_id = str(browser.js("document.querySelector('button.cite').dataset.claims.split(' ')[0]"))
    click(browser, "button.cite")
    browser.wait("!document.querySelector('#panel').hidden && document.querySelector('.passage mark')",
                 "the evidence panel")
    graph = json.loads((sessions / sid / "knowledge-graph.json").read_text())
    claim = next(c for c in graph["claims"] if c["id"] == claim_id)
    marked = browser.js("document.querySelector('.passage mark').textContent")
    assert marked == claim["evidence"][0]["verification"]["matched_text"]
    browser.wait("(() => { const i = document.querySelector('.pageview img'); return i && i.complete && "
                 "i.naturalWidth > 0 && document.querySelectorAll('.pageview .mark').length > 0; })()",
                 "the rendered page with the passage marked", timeout=60)
    geometry = browser.js("(() => { const i = document.querySelector('.pageview img').getBoundingClientRect();"
                          " return [...document.querySelectorAll('.pageview .mark')].map(m => {"
                          " const r = m.getBoundingClientRect(); return [r.left - i.left, r.top - i.top,"
                          " i.right - r.right, i.bottom - r.bottom, r.width, r.height]; }); })()")
    assert isinstance(geometry, list) and geometry
    for left, top, right, bottom, width, height in geometry:
        assert min(left, top, right, bottom) >= -1 and width > 2 and height > 2, "a mark lies off the page"
    page = browser.js("document.querySelector('.page-holder h5').textContent")
    assert f"Page {claim['evidence'][0]['verification']['page']} of" in str(page)


OVERFLOW = ("(() => { const width = window.innerWidth; let right = 0; for (const e of document.querySelectorAll("
            "'body *')) { if (e.closest('.items, pre, .passage, .table-wrap') || e.closest('[hidden]')) continue;"
            " const r = e.getBoundingClientRect(); if (r.width) right = Math.max(right, r.right); }"
            " return [width, Math.ceil(right), document.documentElement.scrollWidth]; })()")


@pytest.mark.parametrize("width", [390, 1280])
def test_the_layout_fits_a_phone_and_a_desktop(browser: Browser, server: Served, sid: str, width: int) -> None:
    browser.resize(width, 900)
    browser.go(f"{server.base}/#/")
    browser.wait("document.querySelector('main table')", "the session list")
    pages = {"sessions": browser.js(OVERFLOW)}
    for tab in TABS:
        open_tab(browser, server, sid, tab)
        pages[tab] = browser.js(OVERFLOW)
    open_tab(browser, server, sid, "report")
    click(browser, "button.cite")
    browser.wait("document.querySelector('.pageview img') && document.querySelector('.pageview img').complete",
                 "the page image", timeout=60)
    pages["evidence panel"] = browser.js(OVERFLOW)
    for name, measured in pages.items():
        assert isinstance(measured, list)
        shown, right, scroll = measured
        assert shown == width
        assert scroll <= width, f"{name} scrolls sideways at {width} px ({scroll} px wide)"
        assert right <= width + 1, f"something on {name} reaches {right} px on a {width} px screen"


FOCUSABLE = ("(() => { const all = [...document.querySelectorAll('a[href], button, input, select, [tabindex=\"0\"]')]"
             ".filter(e => !e.disabled && !e.closest('[hidden]') && e.getClientRects().length &&"
             " getComputedStyle(e).visibility !== 'hidden');"
             " all.forEach((e, i) => e.dataset.k = String(i)); return all.length; })()")


def _tab_through(browser: Browser, count: int) -> set[str]:
    """Tab from the first control of the page (a blur would leave Chromium's starting point where focus was)."""
    browser.js("window.scrollTo(0, 0); document.querySelector('[data-k=\"0\"]').focus()")
    reached: set[str] = {"0"}
    for _ in range(count + 2):
        browser.key("Tab", "Tab", 9)
        key = browser.js("document.activeElement ? (document.activeElement.dataset.k || '') : ''")
        if key:
            reached.add(str(key))
    return reached


@pytest.mark.parametrize("tab", TABS)
def test_the_keyboard_reaches_every_control(browser: Browser, server: Served, sid: str, tab: str) -> None:
    browser.resize(1280, 900)
    open_tab(browser, server, sid, tab)
    count = browser.js(FOCUSABLE)
    assert isinstance(count, int) and count > 5
    reached = _tab_through(browser, count)
    missing = browser.js(f"[...document.querySelectorAll('[data-k]')].filter(e => !{sorted(reached)!r}"
                         ".includes(e.dataset.k)).map(e => e.outerHTML.slice(0, 120))")
    assert not missing, f"Tab never reaches: {missing}"


def test_a_citation_opens_and_closes_from_the_keyboard(browser: Browser, server: Served, sid: str) -> None:
    browser.resize(1280, 900)
    open_tab(browser, server, sid, "report")
    browser.js("document.querySelector('button.cite').focus()")
    browser.key("Enter", "Enter", 13, text="\r")
    browser.wait("!document.querySelector('#panel').hidden && document.activeElement.id === 'panel-title'",
                 "the panel to open with focus on its title")
    browser.wait("document.querySelector('.passage mark')", "the passage")
    count = browser.js("document.querySelectorAll('#panel button, #panel [tabindex=\"0\"]').length")
    assert isinstance(count, int) and count >= 2
    seen = set()
    for _ in range(count + 2):
        browser.key("Tab", "Tab", 9)
        seen.add(browser.js("document.activeElement.id || document.activeElement.className"))
    assert "panel-close" in seen and "passage" in seen
    browser.key("Escape", "Escape", 27)
    browser.wait("document.querySelector('#panel').hidden && document.activeElement.classList.contains('cite')",
                 "the panel to close with focus back on the citation")


def test_contradictions_and_a_rejection_are_shown_with_their_details(browser: Browser, server: Served,
                                                                     sessions: Path) -> None:
    from tests.conftest import merge_pending
    from tests.test_contradictions import VACCINE_12, VACCINE_40, agent

    paths = create_session(sessions, "Does the vaccine work?")
    agent(paths, "alpha", [VACCINE_40])
    agent(paths, "beta", [VACCINE_12])
    write_artifacts(paths, "careless", {"claims.json": {"claims": [
        {"id": "C1", "statement": "x", "confidence": 2, "priority": "low", "evidence": []}]}})
    assert merge_pending(paths) == {"alpha": "merged", "beta": "merged", "careless": "rejected"}
    browser.resize(390, 800)
    open_tab(browser, server, paths.root.name, "contradictions")
    text = str(browser.js("document.querySelector('#tab').textContent"))
    assert VACCINE_40 in text and VACCINE_12 in text and "costs quality points" in text
    click(browser, "#tab .side button")
    browser.wait("document.querySelector('.passage mark') && document.querySelector('.passage mark').textContent"
                 f" === {json.dumps(VACCINE_40.rstrip('.'))}", "the first side's passage")
    browser.key("Escape", "Escape", 27)
    open_tab(browser, server, paths.root.name, "agents")
    card = str(browser.js("document.querySelector('[data-agent=\"careless\"]').textContent"))
    assert "rejected" in card and "/claims/0/confidence" in card and "schema.maximum" in card and "Fix:" in card
    click(browser, "[data-agent=\"careless\"] button")
    browser.wait("document.querySelector('[data-agent=\"careless\"] .agent-detail').textContent"
                 ".includes('Retry instructions')", "the retry instructions")
    assert browser.js(OVERFLOW)[2] <= 390  # type: ignore[index]


def test_a_tampered_and_damaged_session_is_shown_as_such(browser: Browser, server: Served, sessions: Path,
                                                         sid: str) -> None:
    """The page says what the API says: the report refused with the command to run, a claim whose view says
    verified shown as not vouched for, and a damaged quality.json named with its fix in the header."""
    copy = sessions / "tampered"
    shutil.copytree(sessions / sid, copy, symlinks=True)
    try:
        graph = json.loads((copy / "knowledge-graph.json").read_text())
        claim = graph["claims"][0]
        for evidence in claim["evidence"]:  # its stored texts deleted: its evidence verified in the file only
            (copy / "sources" / f"{evidence['verification']['text_sha256']}.txt").unlink(missing_ok=True)
        (copy / "knowledge-graph.json").write_text(json.dumps(graph).replace('"verified":false', '"verified":true'))
        (copy / "quality.json").write_text('{"score": NaN}')
        open_tab(browser, server, "tampered", "report")
        text = str(browser.js("document.querySelector('#main').innerText"))
        assert "The report is not shown" in text and "cconductor status tampered" in text
        assert "quality.json" in str(browser.js("document.querySelector('.damaged').innerText"))
        assert browser.js("!!document.querySelector('#graph-warning')")
        browser.go(f"{server.base}/#/s/tampered/graph")
        browser.wait("document.querySelector('#graph-view-warning .unverified')", "the graph's warning")
        browser.js(f"import('/static/evidence.js').then((m) => m.showClaims('tampered', [{json.dumps(claim['id'])}]))")
        browser.wait("document.querySelector('#panel-body .claim .unverified')", "the claim's warning")
        panel = str(browser.js("document.querySelector('#panel-body').innerText"))
        assert "Not vouched for by the ledger" in panel and "verified (" not in panel  # the ledger's count
        assert "the view file says verified" in panel
    finally:
        shutil.rmtree(copy)

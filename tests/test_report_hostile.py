"""The HTML report shows what agents wrote as text, never as markup: hostile payloads in every agent field."""

from __future__ import annotations

import copy
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from orchestrator.graph.quality import score_graph
from orchestrator.graph.quality_gate import gate
from orchestrator.report.html import render_html
from tests.browser import run_chromium
from tests.test_report import LEDGER, OUTLINE, SESSION, make_graph, mission_dict

PAYLOADS = [
    '<script>document.title="PWNED-1"</script>',
    '"><img src=x onerror="document.title=\'PWNED-2\'">',
    "'><svg onload=document.title='PWNED-3'>",
    "</textarea></style></title><iframe src=javascript:document.title='PWNED-4'>",
]
URL_PAYLOADS = ["javascript:document.title='PWNED-5'", 'https://example.org/"onmouseover="alert(1)']


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [(k, v or "") for k, v in attrs]


def hostile_graph() -> tuple[dict[str, Any], dict[str, Any]]:
    graph = copy.deepcopy(make_graph())
    payload = " ".join(PAYLOADS)
    for number, source in enumerate(graph["sources"]):
        source["title"] = f"{source['title']} {PAYLOADS[number % len(PAYLOADS)]}"
        source["authors"] = [f"Mallory {PAYLOADS[1]}"]
        source["venue"] = PAYLOADS[2]
        source["doi"] = f"10.1000/x{PAYLOADS[1]}"
        source["url"] = URL_PAYLOADS[number % len(URL_PAYLOADS)]
        source["publisher"] = PAYLOADS[3]
    for claim in graph["claims"]:
        claim["statement"] = f"{claim['statement']} {payload}"
        claim["category"] = PAYLOADS[0]
        for evidence in claim["evidence"]:
            evidence["snippet"] = f"{evidence['snippet']} {PAYLOADS[1]}"
            evidence.setdefault("locator", {})["section"] = PAYLOADS[2]
            evidence["verification"]["matched_text"] = PAYLOADS[3]
            evidence["verification"]["reason"] = PAYLOADS[0]
    for gap in graph.get("gaps", []):
        gap["description"] = payload
    outline = copy.deepcopy(OUTLINE)
    body = outline["report_outline"]
    body["title"] = f"Report {PAYLOADS[0]}"
    body["summary"] = f"{body['summary']} {PAYLOADS[1]}"
    for section in body["sections"]:
        section["heading"] = f"{section['heading']} {PAYLOADS[2]}"
        for paragraph in section["paragraphs"]:
            paragraph["text"] = f"{paragraph['text']} {PAYLOADS[3]}"
    return graph, outline


@pytest.fixture(scope="module")
def hostile_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    graph, outline = hostile_graph()
    report = score_graph(graph)
    quality = report.to_json(gate(report, graph, mission_dict()["success_criteria"]))
    page = render_html(graph, session=SESSION, quality=quality, mission=mission_dict(), outline=outline, ledger=LEDGER)
    path = tmp_path_factory.mktemp("hostile") / "mission-report.html"
    path.write_text(page, encoding="utf-8")
    return path


def test_no_agent_text_becomes_markup(hostile_page: Path) -> None:
    page = hostile_page.read_text(encoding="utf-8")
    parsed = _Collector()
    parsed.feed(page)
    assert not {"script", "img", "svg", "iframe", "textarea"} & set(parsed.tags), parsed.tags
    assert not [k for k, _ in parsed.attrs if k.lower().startswith("on")]
    assert not [v for k, v in parsed.attrs if k in ("href", "src") and v.strip().lower().startswith("javascript:")]
    assert "&lt;script&gt;document.title=" in page  # shown, escaped
    assert page.count("PWNED-2") >= 1  # the payloads are there, as text


def test_no_payload_runs_in_a_real_browser(hostile_page: Path, tmp_path: Path) -> None:
    result = run_chromium(hostile_page, tmp_path / "profile", "--dump-dom", "--virtual-time-budget=2000")
    dom = result.stdout.decode("utf-8")
    assert result.returncode == 0 and "</html>" in dom, result.stderr.decode()[-2000:]
    title = dom.split("<title>", 1)[1].split("</title>", 1)[0]
    assert not title.startswith("PWNED"), f"a payload ran: the page title became {title!r}"
    assert title.startswith("Report &lt;script&gt;"), title  # the agent's title, shown as text
    assert '<ol class="references">' in dom

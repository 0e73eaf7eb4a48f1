"""The HTML report in real headless Chromium: a non-trivial screenshot; bibliography and score in the DOM."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from orchestrator.graph.quality import score_graph
from orchestrator.graph.quality_gate import gate
from orchestrator.report.html import render_html
from tests.browser import HEIGHT, WIDTH, png_size, run_chromium
from tests.test_report import LEDGER, OUTLINE, SESSION, make_graph, mission_dict


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    graph = make_graph()
    report = score_graph(graph)
    quality = report.to_json(gate(report, graph, mission_dict()["success_criteria"]))
    page = render_html(
        graph, session=SESSION, quality=quality, mission=mission_dict(), outline=OUTLINE, ledger=LEDGER
    )
    path = tmp_path_factory.mktemp("report") / "mission-report.html"
    path.write_text(page, encoding="utf-8")
    return path


def test_the_report_renders_to_a_real_screenshot(report_file: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    result = run_chromium(
        report_file, tmp_path / "profile", f"--screenshot={shot}", f"--window-size={WIDTH},{HEIGHT}"
    )
    assert shot.is_file(), (
        f"no screenshot; chromium exited {result.returncode}: {result.stderr.decode()[-2000:]}"
    )
    data = shot.read_bytes()
    assert png_size(data) == (WIDTH, HEIGHT)
    assert len(data) > 40_000, "the screenshot is nearly empty: the page did not render its content"


def test_the_dom_has_the_bibliography_and_the_score(report_file: Path, tmp_path: Path) -> None:
    result = run_chromium(report_file, tmp_path / "profile", "--dump-dom")
    dom = result.stdout.decode("utf-8")
    assert result.returncode == 0 and "</html>" in dom, result.stderr.decode()[-2000:]
    assert '<ol class="references">' in dom and 'id="ref-1"' in dom and "Engines of Analysis" in dom
    assert "Quality score" in dom and "/100" in dom
    assert "<script>" not in dom and "&lt;script&gt;" in dom


MEASURE = (
    "<script>let right = 0; for (const e of document.body.querySelectorAll('*')) {"
    " if (!e.closest('.table-wrap')) right = Math.max(right, e.getBoundingClientRect().right); }"
    " const over = [...document.querySelectorAll('.table-wrap')].map(e => e.scrollWidth - e.clientWidth);"
    " document.title = 'fits:' + Math.ceil(right) + ':' + Math.max(0, ...over);</script>"
)


def test_the_report_fits_a_390_px_phone_screen(report_file: Path, tmp_path: Path) -> None:
    page = report_file.read_text(encoding="utf-8")
    assert "<table" in page and "https://" in page
    # a test copy only: the page's CSP forbids scripts, which is what keeps reports safe
    probe = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
    probe = probe.replace("</head>", "<style>html { width: 390px; }</style></head>")
    probe = probe.replace("</body>", MEASURE + "</body>")
    copy = tmp_path / "probe.html"
    copy.write_text(probe, encoding="utf-8")
    result = run_chromium(copy, tmp_path / "profile", "--dump-dom", "--window-size=390,800",
                          "--virtual-time-budget=2000")
    found = re.search(r"<title>fits:(\d+):(\d+)", result.stdout.decode("utf-8"))
    assert found, result.stderr.decode()[-2000:]
    right, overflow = int(found.group(1)), int(found.group(2))
    assert right <= 390, f"something reaches {right} px on a 390 px screen"
    assert overflow <= 2, f"a table is {overflow} px wider than the screen"

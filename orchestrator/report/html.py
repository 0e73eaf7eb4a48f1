"""``mission-report.html``: the report document as one self-contained page (pure).

Inline CSS only, no scripts, no external assets, so the file opens anywhere and can be
mailed or archived as is. Every string from agents or sources goes through
:func:`html.escape`; links are emitted only for http(s) URLs.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Mapping
from typing import Any

from orchestrator.graph.citations import Ref
from orchestrator.report.blocks import (
    Block,
    Bullets,
    Cite,
    Document,
    Emph,
    Figure,
    Line,
    Link,
    Missing,
    Para,
    Quote,
    Strong,
    Table,
    Text,
    quote_without_source_markers,
    without_source_markers,
)
from orchestrator.report.document import build_document

#: Defence in depth: even a markup bug could not load or run anything.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
CSS = """
:root { --ink: #1f2328; --muted: #59636e; --rule: #d1d9e0; --accent: #0b5cad; --bg: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff;
  font: 16px/1.6 -apple-system, "Segoe UI", "Noto Sans", "DejaVu Sans", Helvetica, Arial, sans-serif; }
main { max-width: 54rem; margin: 0 auto; padding: 2.5rem 1.5rem 4rem; overflow-wrap: anywhere; }
h1 { font-size: 2rem; line-height: 1.25; margin: 0 0 .5rem; }
h2 { font-size: 1.35rem; margin: 2.2rem 0 .8rem; padding-bottom: .3rem;
  border-bottom: 1px solid var(--rule); }
.byline { color: var(--muted); font-size: .9rem; margin: 0 0 1rem; }
.score { display: inline-block; padding: .35rem .8rem; border-radius: 1rem; background: var(--bg);
  border: 1px solid var(--rule); font-weight: 600; margin-bottom: 1rem; }
.score b { color: var(--accent); font-size: 1.15rem; }
nav.toc { display: flex; flex-wrap: wrap; gap: .2rem 1rem; font-size: .9rem; margin: 0 0 1.5rem; }
nav.toc a { white-space: nowrap; }
.gate-passed { color: #1a7f37; } .gate-failed { color: #a40e26; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
.cite { white-space: nowrap; font-size: .9em; }
.missing { color: #a40e26; font-size: .85em; }
ul { padding-left: 1.4rem; }
li { margin: .35rem 0; }
q.snippet { font-style: italic; color: #333; }
table { border-collapse: collapse; width: 100%; margin: .6rem 0 1.2rem; font-size: .92rem; }
th, td { text-align: left; vertical-align: top; padding: .4rem .6rem; border-bottom: 1px solid var(--rule);
         overflow-wrap: anywhere; }
.table-wrap { max-width: 100%; overflow-x: auto; }
@media (max-width: 480px) {
  main { padding: 1.5rem .8rem 3rem; }
  nav.toc a { white-space: normal; }
  table { font-size: .8rem; }
  th, td { padding: .3rem .35rem; }
}
th { background: var(--bg); }
ol.references { padding-left: 2.6rem; }
ol.references li { padding-left: .3rem; }
ol.references li::marker { content: "[" counter(list-item) "]  "; color: var(--muted); }
ol.references li:target { background: #fff8c5; }
figure.document-part { margin: 1rem 0 1.6rem; }
figure.document-part img { max-width: 100%; height: auto; border: 1px solid var(--rule, #ddd); }
figure.document-part figcaption { font-size: .9rem; color: var(--muted); margin-top: .4rem; }
tr.cited td { background: #fff8c5; }
"""


def esc(text: str) -> str:
    return html.escape(re.sub(r"\s+", " ", text), quote=True)


def inline(line: Line) -> str:
    out = []
    for part in line:
        if isinstance(part, Text):
            out.append(esc(without_source_markers(part.text)))
        elif isinstance(part, Strong):
            out.append(f"<strong>{esc(part.text)}</strong>")
        elif isinstance(part, Emph):
            out.append(f"<em>{esc(part.text)}</em>")
        elif isinstance(part, Quote):
            out.append(f'<q class="snippet">{esc(quote_without_source_markers(part.text))}</q>')
        elif isinstance(part, Link):
            safe = re.match(r"^https?://\S+$", part.url)
            out.append(f'<a href="{esc(part.url)}">{esc(part.text)}</a>' if safe else esc(part.text))
        elif isinstance(part, Cite):
            refs = "; ".join(_ref(r) for r in part.citation.refs)
            out.append(f'<span class="cite">[{refs}]</span>')
        elif isinstance(part, Missing):
            out.append(f'<span class="missing">[citation needed: {esc(part.ref)}]</span>')
    return "".join(out)


def _ref(ref: Ref) -> str:
    """``1, p. 4971``: the number links to the reference, each printed page to its page of the PDF; a document
    without pages is cited by section (``1, § Fleet``)."""
    out = f'<a href="#ref-{ref.number}">{ref.number}</a>'
    if ref.pages:
        pages = [f'<a class="page" href="{esc(href)}">{esc(text)}</a>' if href else esc(text)
                 for text, href in ref.page_links()]
        out += f", {ref.page_prefix()} " + ", ".join(pages)
    return out + (f", {esc(ref.section_text())}" if ref.sections else "")


def _figure(item: Figure) -> str:
    """A figure with its image embedded (the page stays self-contained), or a table with its cited rows marked."""
    body = ""
    if item.image:
        data = base64.b64encode(item.image).decode("ascii")
        media = "image/jpeg" if item.image.startswith(b"\xff\xd8") else "image/png"
        body = f'<img src="data:{media};base64,{data}" alt="{esc(item.label)}">'
    if item.header or item.rows:
        head = "".join(f"<th>{esc(h)}</th>" for h in item.header)
        rows = "".join(
            ('<tr class="cited">' if n in item.cited_rows else "<tr>")
            + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>"
            for n, row in enumerate(item.rows, start=1))
        body += ('<div class="table-wrap"><table>' + (f"<thead><tr>{head}</tr></thead>" if head else "")
                 + f"<tbody>{rows}</tbody></table></div>")
    return f'<figure class="document-part">{body}<figcaption>{inline(item.caption)}</figcaption></figure>'


def block(item: Block) -> str:
    if isinstance(item, Para):
        return f"<p>{inline(item.line)}</p>"
    if isinstance(item, Bullets):
        items = ("<li>" + "<br>".join(inline(line) for line in lines) + "</li>" for lines in item.items)
        return "<ul>" + "".join(items) + "</ul>"
    if isinstance(item, Table):
        head = "".join(f"<th>{esc(h)}</th>" for h in item.header)
        rows = "".join("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in row) + "</tr>" for row in item.rows)
        return f'<div class="table-wrap"><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>'
    if isinstance(item, Figure):
        return _figure(item)
    entries = "".join(f'<li id="ref-{n}" value="{n}">{inline(line)}</li>' for n, line in item.entries)
    return f'<ol class="references">{entries}</ol>'


def to_html(document: Document) -> str:
    toc = "".join(f'<a href="#{s.anchor}">{esc(s.heading)}</a>' for s in document.sections)
    score = ""
    if document.score is not None:
        gate = ""
        if document.criteria is not None:
            met, checked = document.criteria
            quality = next((s.anchor for s in document.sections if s.kind == "quality"), "")
            said = f"{'all' if met == checked else f'{met} of'} {checked} mission criteria met"
            gate = (f' · <a class="{"gate-passed" if met == checked else "gate-failed"}" href="#{quality}">'
                    f"{esc(said)}</a>")
        score = (f'<div class="score">Quality score <b>{esc(str(document.score))}</b>/100 '
                 f"({esc(str(document.band))}){gate}</div>")
    body = [f"<h1>{esc(document.title)}</h1>", f'<p class="byline">{inline(document.byline)}</p>', score,
            f'<nav class="toc">{toc}</nav>', *(block(b) for b in document.lead)]
    for section in document.sections:
        body.append(f'<section id="{section.anchor}"><h2>{esc(section.heading)}</h2>')
        body += [block(b) for b in section.blocks]
        body.append("</section>")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n"
        f"<title>{esc(document.title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n"
        + "\n".join(b for b in body if b)
        + "\n</main>\n</body>\n</html>\n"
    )


def render_html(
    graph: Mapping[str, Any],
    *,
    session: Mapping[str, Any],
    quality: Mapping[str, Any] | None,
    mission: Mapping[str, Any] | None,
    outline: Mapping[str, Any] | None,
    ledger: list[dict[str, Any]] | None,
    outline_agent: str = "synthesis-agent",
) -> str:
    """The whole report as one HTML page; same content as the Markdown report."""
    return to_html(build_document(graph, session=session, quality=quality, mission=mission, outline=outline,
                                  ledger=ledger, outline_agent=outline_agent))

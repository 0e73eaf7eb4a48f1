"""``mission-report.md``: the report document as CommonMark (pure).

Text from agents and sources is backslash-escaped, so a title like ``[1] *x* <b>`` can
neither fake a citation nor inject markup; unescaped ``[n]`` / ``[n, p. 4]`` are always
citations that resolve to the numbered bibliography.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

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

_SPACE = re.compile(r"\s+")
#: Underscores inside words never start emphasis in CommonMark, so ``snake_case`` stays readable.
_SPECIAL = re.compile(r"([\\`*\[\]<>|#~]|(?<!\w)_|_(?!\w))")
_LINE_START = re.compile(r"^(\d+)([.)])|^([+\-=>])")


def escape(text: str) -> str:
    """CommonMark-escape inline text (runs of whitespace become one space)."""
    return _SPECIAL.sub(r"\\\1", _SPACE.sub(" ", text))


def _safe_url(url: str) -> str | None:
    return url if re.match(r"^https?://[^\s<>]+$", url) else None


def _wrap(text: str, mark: str) -> str:
    """Emphasis markers must hug the text, so surrounding spaces stay outside them."""
    core = text.strip()
    if not core:
        return text
    left, right = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()):]
    return f"{left}{mark}{escape(core)}{mark}{right}"


def inline(line: Line) -> str:
    out = []
    for part in line:
        if isinstance(part, Text):
            out.append(escape(without_source_markers(part.text)))
        elif isinstance(part, Strong):
            out.append(_wrap(part.text, "**"))
        elif isinstance(part, Emph):
            out.append(_wrap(part.text, "*"))
        elif isinstance(part, Quote):
            out.append(f"“*{escape(quote_without_source_markers(part.text))}*”")
        elif isinstance(part, Link):
            url = _safe_url(part.url)
            out.append(f"[{escape(part.text)}](<{url}>)" if url else escape(part.text))
        elif isinstance(part, Cite):
            out.append(part.citation.label())
        elif isinstance(part, Missing):
            out.append(f"\\[citation needed: {escape(part.ref)}\\]")
    return "".join(out)


def _paragraph(line: Line) -> str:
    text = inline(line).strip()
    return _LINE_START.sub(lambda m: m.group(0)[:-1] + "\\" + m.group(0)[-1], text)


def _cell(line: Line) -> str:
    return inline(line).strip() or " "


def block(item: Block) -> str:
    if isinstance(item, Para):
        return _paragraph(item.line)
    if isinstance(item, Bullets):
        return "\n".join("- " + "  \n  ".join(_paragraph(line) for line in lines) for lines in item.items)
    if isinstance(item, Table):
        head = "| " + " | ".join(escape(h) for h in item.header) + " |"
        rule = "|" + "|".join("---" for _ in item.header) + "|"
        rows = ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in item.rows]
        return "\n".join([head, rule, *rows])
    if isinstance(item, Figure):
        return _figure(item)
    return "\n\n".join(f'<a id="ref-{n}"></a>[{n}] {inline(line).strip()}' for n, line in item.entries)


def _figure(item: Figure) -> str:
    """A figure as an image beside the report (its stored PNG), a table as a Markdown table; then the caption."""
    parts = []
    if item.image_path:
        parts.append(f"![{escape(item.label)}]({item.image_path})")
    if item.header or item.rows:
        width = max([len(item.header), *(len(r) for r in item.rows)])
        header = list(item.header) + [""] * (width - len(item.header))
        lines = ["| " + " | ".join(escape(h) or " " for h in header) + " |",
                 "|" + "|".join("---" for _ in header) + "|"]
        for row in item.rows:
            cells = list(row) + [""] * (width - len(row))
            lines.append("| " + " | ".join(escape(c) or " " for c in cells) + " |")
        parts.append("\n".join(lines))
    parts.append(_paragraph(item.caption))
    return "\n\n".join(parts)


def to_markdown(document: Document) -> str:
    parts = [f"# {escape(document.title)}", f"*{inline(document.byline)}*"]
    parts += [block(b) for b in document.lead]
    for section in document.sections:
        parts.append(f"## {escape(section.heading)}")
        parts += [block(b) for b in section.blocks]
    return "\n\n".join(p for p in parts if p) + "\n"


def render_markdown(
    graph: Mapping[str, Any],
    *,
    session: Mapping[str, Any],
    quality: Mapping[str, Any] | None,
    mission: Mapping[str, Any] | None,
    outline: Mapping[str, Any] | None,
    ledger: list[dict[str, Any]] | None,
    outline_agent: str = "synthesis-agent",
) -> str:
    """The whole report as Markdown; see :func:`orchestrator.report.document.build_document` for the content."""
    document = build_document(graph, session=session, quality=quality, mission=mission, outline=outline,
                              ledger=ledger, outline_agent=outline_agent)
    return to_markdown(document)


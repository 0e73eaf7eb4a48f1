"""The mission report, built from the validated knowledge graph only (pure).

:func:`build_document` (in :mod:`~orchestrator.report.document`) turns the graph, the synthesis
agent's outline, the quality report and the session into the document model of
:mod:`~orchestrator.report.blocks`, whose text is kept apart from citations, so the Markdown and
HTML renderers show exactly the same content and only escape differently. Section content is
built in :mod:`~orchestrator.report.sections`; citations go through
:class:`~orchestrator.graph.citations.Citer`, which cites verified evidence only.

Renderers: :func:`orchestrator.report.markdown.render_markdown` and
:func:`orchestrator.report.html.render_html` (also importable from this package).
"""

from orchestrator.report.document import build_document
from orchestrator.report.headings import kind_of
from orchestrator.report.html import render_html
from orchestrator.report.markdown import render_markdown

__all__ = ["build_document", "kind_of", "render_html", "render_markdown"]

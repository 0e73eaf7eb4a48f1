"""What the model is told about each client tool: names, descriptions and input schemas.

The declarations are data, kept apart from the code that runs the tools, so the exact text the
model reads is in one place and the dispatcher (:class:`agents.claude.tools.Toolbox`) enables a
subset by the agent definition's tool names (``fetch_paper`` names two tools; ``web_search`` and
``web_fetch`` are Anthropic server tools, declared from the config).
"""

from __future__ import annotations

from typing import Any

__all__ = ["CLIENT_TOOLS", "MAX_HITS", "PAGE_WINDOW", "SERVER_TOOLS", "TOOL_GROUPS"]

PAGE_WINDOW = 8_000
MAX_HITS = 15


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    schema = {"type": "object", "additionalProperties": False, "properties": properties, "required": required}
    return {"name": name, "description": description, "input_schema": schema}


_ID = {"type": "string", "description": "A DOI (10.xxxx/...), an arXiv id (2401.01234) or a paper_id."}
CLIENT_TOOLS: dict[str, dict[str, Any]] = {
    "search_passages": _tool(
        "search_passages",
        "Full-text search (BM25) over every stored source text: the session's documents and the papers and "
        "pages you fetched. Returns verbatim passages with source_id and page. Quote evidence only from text "
        "returned by this tool or read_source_page.",
        {"query": {"type": "string", "description": "Keywords."},
         "source_id": {"type": "string", "description": "Search only this source (optional)."},
         "limit": {"type": "integer", "minimum": 1, "maximum": MAX_HITS, "description": "Default 8."}},
        ["query"],
    ),
    "read_source_page": _tool(
        "read_source_page",
        "Read one page of a stored source text verbatim (pages are counted from 1). Long pages come in "
        f"windows of {PAGE_WINDOW} characters; pass offset to read on.",
        {"source_id": {"type": "string"}, "page": {"type": "integer", "minimum": 1},
         "offset": {"type": "integer", "minimum": 0, "description": "Offset in the page (default 0)."}},
        ["source_id", "page"],
    ),
    "search_papers": _tool(
        "search_papers",
        "Search scholarly indexes (OpenAlex, Crossref, Semantic Scholar, arXiv) for papers. Returns metadata "
        "only; fetch a paper before citing it.",
        {"query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1, "maximum": 10}},
        ["query"],
    ),
    "fetch_paper_metadata": _tool(
        "fetch_paper_metadata",
        "Look a paper up by DOI or arXiv id and store its title and abstract as a citable source (one page).",
        {"identifier": _ID}, ["identifier"]),
    "fetch_open_access_pdf": _tool(
        "fetch_open_access_pdf",
        "Download the open-access PDF of a paper, store its text page by page as a citable source and return "
        "its source_id, content_sha256 and page count. Then read it with read_source_page.",
        {"identifier": _ID}, ["identifier"]),
}
TOOL_GROUPS = {"fetch_paper": ("fetch_paper_metadata", "fetch_open_access_pdf")}
SERVER_TOOLS = ("web_search", "web_fetch")

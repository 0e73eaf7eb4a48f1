"""The pages of a document returned by Anthropic's ``web_fetch`` server tool.

A fetched page arrives either as plain text or as a base64 PDF; either way it must become stored
page texts before the model may cite it, so quotes from the web are verified like any other.
A document that cannot be read gives no pages (the caller tells the model not to cite it).
"""

from __future__ import annotations

import base64
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["document_pages"]


def document_pages(source: Mapping[str, Any]) -> list[str]:
    """The page texts of a ``web_fetch`` document source; [] when it holds nothing readable."""
    data = source.get("data")
    if not isinstance(data, str) or not data.strip():
        return []
    if source.get("type") == "text":
        return [data]
    if source.get("type") == "base64" and source.get("media_type") == "application/pdf":
        from agents.offline.pdfmeta import UnreadablePdf, read_pdf

        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "page.pdf"
            try:
                path.write_bytes(base64.b64decode(data))
                return read_pdf(path)[1]
            except (UnreadablePdf, ValueError):
                return []
    return []

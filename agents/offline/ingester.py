"""pdf-analyzer: ingest the local documents and paper-metadata libraries into sources + source texts.

Every document's normalised text goes into the content-addressed store, so every later snippet
can be checked against exactly what was read. Source items stay small (abstracts clipped) so a
library of a thousand records stays well within the per-agent artifact budget, and
``manifest.json`` says what was skipped and why, because ingestion never fails on one bad file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.offline.docstructure import Structure, extract_structure, find_sections
from agents.offline.ingest import Document, IngestResult, ingest_dirs, read_library
from agents.offline.retry_repair import complete_retry
from agents.runtime import AgentContext

__all__ = ["run", "source_item"]

ABSTRACT_CHARS = 600
MANIFEST_SKIPPED = 400  # listed one by one; the rest are counted


def source_item(doc: Document) -> dict[str, Any]:
    """The sources.json item: the Document's source with a clipped abstract."""
    item = dict(doc.source)
    abstract = item.get("abstract")
    if isinstance(abstract, str) and len(abstract) > ABSTRACT_CHARS:
        cut = abstract[: ABSTRACT_CHARS - 1].rsplit(" ", 1)[0]
        item["abstract"] = cut.rstrip(" ,;:") + "\u2026"
    return item


def _collect(inputs: dict[str, Any]) -> tuple[IngestResult, list[str]]:
    result = IngestResult()
    seen: set[str] = set()
    read: list[str] = []
    batches = [("dir", d) for d in inputs.get("input_dirs") or ()]
    batches += [("lib", p) for p in inputs.get("libraries") or ()]
    for kind, location in batches:
        path = Path(str(location))
        batch = ingest_dirs([path], bool(inputs.get("include_notes"))) if kind == "dir" else read_library(path)
        read.append(str(path))
        result.skipped.extend(batch.skipped)
        for doc in batch.documents:
            if doc.id not in seen:  # the same text from a folder and a library is one source
                seen.add(doc.id)
                result.documents.append(doc)
    return result, read


def _structure(context: AgentContext, doc: Document, parts: Structure, notes: list[dict[str, str]]) -> None:
    """Add the document's sections, figures, tables and captions; a failure costs them, never the document."""
    path = doc.source.get("local_path")
    pdf = Path(path) if isinstance(path, str) and path.lower().endswith(".pdf") else None
    try:
        found = extract_structure(doc, pdf)
    except Exception as exc:  # a PDF pdfium cannot lay out still has its text
        notes.append({"path": str(path), "reason": f"figures and tables not extracted ({type(exc).__name__}: {exc})"})
        found = Structure(sections=find_sections(doc))
    for sha, (data, suffix) in found.objects.items():
        if context.store_object(data, suffix) != sha:
            raise RuntimeError(f"stored object of {doc.id} does not hash to {sha}")
    for name in ("sections", "figures", "tables", "captions"):
        getattr(parts, name).extend(getattr(found, name))


#: Describes the figures of an ingestion in place (agents/claude/figures.py), before they are written;
#: returns what it could not describe, and why.
Describe = Callable[[list[Document], Structure], list[str]]


def _produce(context: AgentContext, describe: Describe | None = None) -> tuple[int, int, int, int, int]:
    result, read = _collect(context.task.inputs)
    items = []
    pages = 0
    parts = Structure()
    notes: list[dict[str, str]] = []
    for doc in result.documents:
        sha = context.store_source_text(doc.text)
        if sha != doc.content_sha256:  # cannot happen unless Document.text changes; never cite a wrong text
            raise RuntimeError(f"stored text of {doc.id} hashes to {sha}, not {doc.content_sha256}")
        items.append(source_item(doc))
        pages += len(doc.pages)
        _structure(context, doc, parts, notes)
    if describe is not None and parts.figures:
        notes += [{"path": "", "reason": f"figure not described: {why}"} for why in describe(result.documents, parts)]
    if items:
        context.write_items("sources", "sources", items)
    for name in ("sections", "figures", "tables", "captions"):
        if getattr(parts, name):
            context.write_items(name, name, getattr(parts, name))
    skipped = [
        {"path": str(s.path), **({"line": s.line} if s.line is not None else {}), "reason": s.reason}
        for s in result.skipped
    ]
    context.write_items(
        "manifest",
        "skipped",
        skipped[:MANIFEST_SKIPPED],
        extra={"inputs": read, "documents": len(items), "pages": pages, "skipped_total": len(skipped),
               "figure_count": len(parts.figures), "table_count": len(parts.tables), "structure_notes": notes},
    )
    return len(items), pages, len(skipped), len(parts.figures), len(parts.tables)


def run(context: AgentContext, describe: Describe | None = None) -> None:
    resubmitted = "Re-submitted the ingested sources with the named problems corrected or dropped."
    if complete_retry(context, lambda: _produce(context, describe), resubmitted):
        return
    documents, pages, skipped, figures, tables = _produce(context, describe)
    inputs = context.task.inputs
    asked = len(inputs.get("input_dirs") or ()) + len(inputs.get("libraries") or ())
    summary = (
        f"Ingested {documents} document(s) ({pages} page(s), {figures} figure(s), {tables} table(s)) from {asked} "
        "input location(s) into the source "
        f"store; skipped {skipped} file(s) or record(s) (see manifest.json)."
    )
    status = "completed" if documents or not asked else "failed"
    context.complete(status, summary)

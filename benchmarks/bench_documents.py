"""Figures, tables and captions: extraction time per page and the share found, on a hand-labelled sample.

    python benchmarks/bench_documents.py [--repeat N]

The labels (benchmarks/eval/document_labels.jsonl, 33 figures and 38 tables of the eight papers in
tests/data/scientific-pdfs) were made by looking at the rendered pages: each figure or table with its
label, PDF page, the first words of its caption, whether it stands above or below its caption, and
whether it spans the text width or one column. For each labelled item the script checks that the
extraction found it (same kind, label and page), with its caption (the caption text starts with the
labelled words), and where it is (its region on the labelled side of the caption and in the labelled
column); a table must also have cells (two columns or more). Times are CPU seconds (time.process_time)
of this process, so a loaded machine inflates them less than wall time; they are per page:

- text: today's text extraction (pypdf, ``read_pdf``), every page;
- structure: sections, figures, tables and captions (``extract_structure``), per page of the paper,
  with figure images rendered to PNG; papers without a caption line cost a regular-expression pass.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.offline.docstructure import caption_pages, extract_structure  # noqa: E402
from agents.offline.ingest import ingest_file  # noqa: E402
from agents.offline.pdflayout import open_pdf, page_layout  # noqa: E402
from agents.offline.pdfmeta import read_pdf  # noqa: E402
from agents.offline.pdfstructure import find_objects  # noqa: E402

PAPERS = ROOT / "tests" / "data" / "scientific-pdfs"
LABELS = ROOT / "benchmarks" / "eval" / "document_labels.jsonl"


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\u2019", "'").replace("-\n", "")).strip().casefold()


def _placed(found: Any, side: str, column: str, middle: float | None) -> bool:
    """The region is on the labelled side of its caption and in the labelled column.

    ``middle``: the gutter of a two-column page (None on a one-column page, where every region is "full");
    a region reaching 20 points past it on both sides spans the text width.
    """
    if found is None or found.box is None:
        return False
    box, caption = found.box, found.caption_box
    above = (box[1] + box[3]) / 2 > (caption[1] + caption[3]) / 2
    if middle is None:
        where = "full"
    else:
        where = "left" if box[2] <= middle + 20 else "right" if box[0] >= middle - 20 else "full"
    return above == (side == "above") and where == column


def _gutter(layout: Any) -> float | None:
    """The middle of a two-column page (prose lines end left of it and start right of it), else None."""
    prose = [s.box for s in layout.segments if len(s.text.split()) >= 6]
    if not prose:
        return None
    left, right = min(b[0] for b in prose), max(b[2] for b in prose)
    middle = (left + right) / 2
    columns = sum(b[2] < middle for b in prose) >= 5 and sum(b[0] > middle for b in prose) >= 5
    return middle if columns else None


def _layout_objects(path: Path, pages: list[int]) -> dict[tuple[str, int], Any]:
    """The layout's findings with their caption boxes, by (label, page)."""
    found: dict[tuple[str, int], Any] = {}
    pdf = open_pdf(path)
    try:
        for page in pages:
            layout = page_layout(pdf, page)
            middle = _gutter(layout)
            for item in find_objects(layout):
                found.setdefault((item.label, page), (item, middle))
    finally:
        pdf.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=1, help="time each paper this many times (best is kept)")
    args = parser.parse_args()
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    labels = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines() if line.strip()]
    by_paper: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for label in labels:
        by_paper[label["paper"]].append(label)

    print(f"{'paper':<38} {'pages':>5} {'text s/page':>12} {'structure s/page':>17} {'caption pages':>14}")
    totals = {"pages": 0, "text": 0.0, "structure": 0.0}
    text_only = {"pages": 0, "text": 0.0, "structure": 0.0}
    score: dict[str, dict[str, int]] = {k: defaultdict(int) for k in ("figure", "table")}
    misses: list[str] = []
    for path in sorted(PAPERS.glob("*.pdf")):
        best_text = best_structure = float("inf")
        structure = None
        for _ in range(args.repeat):
            started = time.process_time()
            read_pdf(path)
            best_text = min(best_text, time.process_time() - started)
            doc = ingest_file(path)
            started = time.process_time()
            structure = extract_structure(doc, path)
            best_structure = min(best_structure, time.process_time() - started)
        assert structure is not None
        pages = len(doc.pages)
        shown = caption_pages(doc)
        print(f"{path.name:<38} {pages:>5} {best_text / pages:>12.4f} {best_structure / pages:>17.4f} "
              f"{len(shown):>14}")
        for key, value in (("pages", pages), ("text", best_text), ("structure", best_structure)):
            totals[key] += value
            if not shown:
                text_only[key] += value
        items = {(i["label"].removesuffix(" (continued)"), i["page"]): i for i in structure.figures + structure.tables}
        captions = {c["describes"]: c["text"] for c in structure.captions}
        layout = _layout_objects(path, sorted({label["page"] for label in by_paper[path.name]}))
        for label in by_paper[path.name]:
            counts = score[label["kind"]]
            counts["labelled"] += 1
            item = items.get((label["label"], label["page"]))
            if item is None:
                misses.append(f"{path.name} {label['label']} p.{label['page']}: not found")
                continue
            counts["found"] += 1
            if _flat(captions.get(item["id"], "")).startswith(_flat(label["caption_starts"])):
                counts["with caption"] += 1
            else:
                misses.append(f"{path.name} {label['label']}: caption {captions.get(item['id'], '')[:60]!r}")
            found, middle = layout.get((label["label"], label["page"]), (None, None))
            if _placed(found, label["side"], label["column"], middle):
                counts["region"] += 1
            else:
                misses.append(f"{path.name} {label['label']}: region {getattr(found, 'box', None)} not "
                              f"{label['side']}/{label['column']}")
            if label["kind"] == "table" and item.get("data_sha256") and len(item.get("columns") or []) >= 2:
                counts["cells"] += 1

    print()
    print(f"all papers: text {totals['text'] / totals['pages']:.4f} s/page, structure "
          f"{totals['structure'] / totals['pages']:.4f} s/page (CPU, {totals['pages']} pages)")
    if text_only["pages"]:
        print(f"text-only papers: text {text_only['text'] / text_only['pages']:.4f} s/page, structure "
              f"{text_only['structure'] / text_only['pages']:.5f} s/page ({text_only['pages']} pages)")
    for kind, counts in score.items():
        n = counts["labelled"]
        line = (f"{kind}s: {n} labelled, found {counts['found']} ({counts['found'] / n:.0%}), with their caption "
                f"{counts['with caption']} ({counts['with caption'] / n:.0%}), region on the right side and column "
                f"{counts['region']} ({counts['region'] / n:.0%})")
        if kind == "table":
            line += f", with cells {counts['cells']} ({counts['cells'] / n:.0%})"
        print(line)
    if misses:
        print("\nmissed:")
        for miss in misses:
            print(f"  {miss}")


if __name__ == "__main__":
    main()

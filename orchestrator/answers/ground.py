"""A validated answer as one JSON document (``schemas/answer.schema.json``).

Kept sentences are renumbered: each cited node gets a number by first appearance, markers become
``[n]``; a flagged sentence says so in the text; dropped sentences and citations are listed with
their reasons in ``notes``, so the answer itself says what was removed.
"""

from __future__ import annotations

from typing import Any

from orchestrator.answers.confidence import weighted_mean
from orchestrator.answers.data import Draft, Retrieved
from orchestrator.answers.graph import NodeIndex
from orchestrator.answers.validate import CheckedSentence, Citation
from orchestrator.graph.citations import printed_page
from orchestrator.model.clock import iso_timestamp

NOT_FOUND = "Not found in this session."
SCHEMA_VERSION = 1


def _citation_dict(number: int | None, citation: Citation, index: NodeIndex) -> dict[str, Any]:
    passage = citation.passage
    return {
        "number": number,
        "node_id": citation.node_id,
        "ref": citation.ref,
        "kind": citation.kind,
        "confidence": round(citation.confidence, 3),
        "match": citation.match,
        "status": citation.status,
        "parts": [p.to_dict() for p in citation.parts],
        "trace": [{**s.to_dict(), "from_name": index.name(s.source), "to_name": index.name(s.target)}
                  for s in citation.trace],
        "source": None if passage is None else _source(passage.source_id, passage.title, passage.page,
                                                       passage.section, index),
        "passage": None if passage is None else passage.text,
    }


def _source(source_id: str, title: str, page: int | None, section: str | None, index: NodeIndex) -> dict[str, Any]:
    """The cited source and page; with the number printed on that page when the document has its own (a
    reader looks for "p. 4971" in the journal, not for the PDF's third page), or the section a document
    without pages is cited by."""
    out: dict[str, Any] = {"id": source_id, "title": title, "page": page, **({"section": section} if section else {})}
    if page is not None and (printed := printed_page(index.sources.get(source_id) or {}, page)) != str(page):
        out["printed_page"] = printed
    return out


def ground(session: str, retrieved: Retrieved, draft: Draft | None, checked: list[CheckedSentence],
           index: NodeIndex) -> dict[str, Any]:
    """The answer document: text with numbered citations, per-sentence verdicts, confidence, notes."""
    numbers: dict[str, int] = {}
    citations: list[dict[str, Any]] = []
    sentences: list[dict[str, Any]] = []
    kept_text: list[str] = []
    notes: list[str] = []
    weighted: list[tuple[float, float]] = []
    for sentence in checked:
        status = sentence.status
        cited: list[int] = []
        kept = [c for c in sentence.citations if c.status != "dropped"] if status != "dropped" else []
        kept_ids = {id(c) for c in kept}
        for citation in sentence.citations:
            number = None
            if id(citation) in kept_ids and citation.node_id:
                key = citation.node_id + "|" + "|".join(s.rests_on for s in citation.trace)
                if key not in numbers:
                    numbers[key] = len(numbers) + 1
                    citations.append(_citation_dict(numbers[key], citation, index))
                number = numbers[key]
                cited.append(number)
                weighted.append((citation.confidence, sentence.weight / len(kept)))
            else:
                citations.append(_citation_dict(None, citation, index))
                if status != "dropped":
                    notes.append(f"citation {citation.ref} dropped from {sentence.text!r}: "
                                 + "; ".join(p.detail for p in citation.parts if p.confidence < 0.3))
        if status == "dropped":
            why = "it cites nothing" if not sentence.citations else "; ".join(
                p.detail for c in sentence.citations for p in c.parts if p.confidence < 0.3)
            notes.append(f"dropped {sentence.text!r}: {why}")
        else:
            marks = "".join(f"[{n}]" for n in dict.fromkeys(cited))
            flag = " (low confidence)" if status == "flagged" else ""
            kept_text.append(f"{sentence.text.rstrip('.')}{flag} {marks}.".replace(" .", "."))
            if status == "flagged":
                notes.append(f"flagged {sentence.text!r}: confidence {sentence.confidence:.2f} is under 0.5")
        sentences.append({"text": sentence.text, "confidence": round(sentence.confidence, 3), "status": status,
                          "citations": list(dict.fromkeys(cited))})
    found = bool(kept_text)
    if retrieved.found and not found:
        notes.append("no sentence of the drafted answer could be grounded in this session's graph")
    dropped = sum(1 for s in sentences if s["status"] == "dropped")
    flagged = sum(1 for s in sentences if s["status"] == "flagged")
    answer = " ".join(kept_text) if found else NOT_FOUND
    if dropped and found:
        answer += f" ({dropped} unsupported sentence(s) were dropped; see the notes.)"
    cited_claims = {c["node_id"] for c in citations if c["number"] and c["kind"] == "claim"}
    return {
        "schema_version": SCHEMA_VERSION,
        "session": session,
        "question": retrieved.question,
        "asked_at": iso_timestamp(),
        "found": found,
        "answer": answer,
        "confidence": weighted_mean(weighted) if found else 0.0,
        "sentences": sentences,
        "citations": citations,
        "flagged": flagged,
        "dropped": dropped,
        "notes": notes,
        "contradictions": index.contradictions_of(cited_claims),
        "backend": draft.backend if draft else None,
        "model": draft.model if draft else None,
        "draft": draft.text if draft else None,
        "retrieval": {"store": retrieved.store, "items": [i.id for i in retrieved.items],
                      "timings_ms": retrieved.timings_ms},
    }

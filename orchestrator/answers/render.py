"""The answer as a person reads it in the terminal: prose, numbered citations, confidence, notes."""

from __future__ import annotations

import textwrap
from typing import Any

_QUOTE_CHARS = 300


def render(document: dict[str, Any]) -> str:
    lines = [f"Q: {document['question']}", f"session: {document['session']}", ""]
    lines += textwrap.wrap(document["answer"], 100) or [document["answer"]]
    if not document["found"]:
        lines += ["", "found: false (no citations)"]
        return "\n".join(lines + [f"note: {n}" for n in document["notes"]])
    lines += ["", "Citations:"]
    for citation in document["citations"]:
        if citation["number"] is None:
            continue
        source = citation["source"] or {}
        where = source.get("title") or "(no source)"
        if source.get("section"):  # a document without pages is cited by the heading the passage is under
            where += f", § {source['section']}"
        elif source.get("printed_page"):
            where += f", p. {source['printed_page']} (PDF page {source['page']})"
        elif source.get("page"):
            where += f", p. {source['page']}"
        lines.append(f"  [{citation['number']}] {where} - {citation['kind']} {citation['node_id']} "
                     f"({citation['match']}, confidence {citation['confidence']:.2f})")
        if citation["passage"]:
            quote = " ".join(citation["passage"].split())
            quote = quote if len(quote) <= _QUOTE_CHARS else quote[:_QUOTE_CHARS].rsplit(" ", 1)[0] + " ..."
            lines += textwrap.wrap(f'"{quote}"', 96, initial_indent="      ", subsequent_indent="       ")
        for step in citation["trace"]:
            source, target = step.get("from_name") or step["from"], step.get("to_name") or step["to"]
            lines.append(f"      via {source} --{step['relation']}--> {target}  [{step['rests_on']}]")
    lines += ["", f"confidence: {document['confidence']:.2f} ({document['flagged']} sentence(s) flagged, "
                  f"{document['dropped']} dropped)"]
    for item in document.get("contradictions") or ():
        lines.append(f"contradiction {item.get('id')}: {item.get('description')} ({', '.join(item['claim_ids'])})")
    lines += [f"note: {n}" for n in document["notes"]]
    return "\n".join(lines)

"""synthesis-agent, offline: key findings, coverage, remaining gaps and the report outline.

Read from the committed graph, written extractively: a finding is a verified claim's own sentence, cited
with ``[@<claim global id>]``; only claims with verified evidence are used (the report may cite nothing
else). A claim's weight is the fact-checkers' confidence when assessed, else the researcher's own.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from rapidfuzz import fuzz

from agents.offline.answer_lead import deciding_claims, decision_lead, outdated_label, split_current
from agents.offline.corpus import plan_questions
from agents.offline.outline_kinds import CONTRADICTION_WORDS, kind_of
from agents.offline.retry_repair import complete_retry
from agents.offline.sentences import terms
from agents.offline.text import normalize_ws
from agents.offline.vintage import vintages
from agents.runtime import AgentContext
from orchestrator.session.atomic import dumps_pretty

__all__ = ["DEFAULT_SECTIONS", "Synthesis", "run"]

Item = dict[str, Any]
DEFAULT_SECTIONS = ("Executive Summary", "Key Findings", "Evidence", "Gaps and Contradictions", "Methodology")
PER_QUESTION = 3
ANSWER_LIMIT = 5  # sentences quoted in the Answer
OUTLINE_BUDGET = 60_000

def verified(claim: Item) -> bool:
    return any((e.get("verification") or {}).get("verified") is True for e in claim.get("evidence") or ())


def weight(claim: Item) -> float:
    scores = [float(a["confidence"]) for a in claim.get("assessments") or () if "confidence" in a]
    return round(sum(scores) / len(scores), 4) if scores else float(claim.get("confidence", 0.0))


def rank(claim: Item) -> float:
    """The researcher's own confidence: how well the sentence answers its sub-question (retrieval order)."""
    return float(claim.get("confidence", 0.0))


def status(claim: Item) -> str:
    statuses = {a.get("status") for a in claim.get("assessments") or ()}
    order = ("contradicted", "corroborated", "single-source", "unverified")
    return next((s for s in order if s in statuses), "unassessed")


class Synthesis:
    """The graph as the synthesis sees it: sub-questions, verified claims and their weights."""

    def __init__(self, graph: Item, questions: list[Item], query: str) -> None:
        self.graph = graph
        self.query = normalize_ws(query)
        self.questions = questions
        self.claims = [c for c in graph.get("claims") or () if isinstance(c, dict)]
        self.verified = sorted((c for c in self.claims if verified(c)), key=lambda c: (-weight(c), c["id"]))
        self.sources = {s["id"]: s for s in graph.get("sources") or () if isinstance(s, dict)}
        self.by_question: dict[str, list[Item]] = {q["id"]: [] for q in questions}
        for claim in sorted(self.verified, key=lambda c: (-rank(c), c["id"])):
            self.by_question.get(str(claim.get("sub_question_id")), []).append(claim)
        self.coverage = [self._coverage(q) for q in questions]
        self.cited: set[str] = set()

    def _coverage(self, question: Item) -> Item:
        claims = self.by_question[question["id"]]
        sources = {_source_of(c) for c in claims}
        mine = [c for c in self.claims if c.get("sub_question_id") == question["id"]]
        unverified = sum(1 for c in mine if not verified(c))
        state = "covered" if len(claims) >= 2 else "partial" if claims or unverified else "missing"
        notes = f"{len(claims)} verified claim(s) from {len(sources)} source(s)"
        notes += f", best confidence {weight(claims[0])}" if claims else ""
        notes += f"; {unverified} claim(s) without verified evidence" if unverified else ""
        return {"sub_question_id": question["id"], "status": state, "claim_ids": [c["id"] for c in claims],
                "notes": notes + "."}

    def covered(self) -> int:
        return sum(1 for e in self.coverage if e["status"] == "covered")

    def key_findings(self) -> list[Item]:
        findings: list[Item] = []
        seen: set[str] = set()
        for question in self.questions:
            for claim in self.by_question[question["id"]][:PER_QUESTION]:
                key = normalize_ws(claim["statement"]).casefold()
                if key in seen:
                    continue
                seen.add(key)
                same = [c["id"] for c in self.verified if c["id"] != claim["id"]
                        and fuzz.token_set_ratio(key, c["statement"].casefold()) >= 92][:4]
                w = weight(claim)
                findings.append({
                    "id": f"KF{len(findings) + 1}", "statement": normalize_ws(claim["statement"]),
                    "claim_ids": [claim["id"], *same],
                    "importance": "high" if w >= 0.7 else "medium" if w >= 0.5 else "low",
                    "extra": {"sub_question_id": question["id"], "confidence": w, "status": status(claim)},
                })
        return findings

    def gaps(self) -> list[Item]:
        """Sub-questions still open, each once: one a researcher already reported as a gap is not repeated."""
        gaps = []
        questions = {q["id"]: q for q in self.questions}
        reported = {str(g.get("sub_question_id")) for g in self.graph.get("gaps") or () if isinstance(g, dict)}
        for entry in self.coverage:
            if entry["status"] == "covered" or entry["sub_question_id"] in reported:
                continue
            question = questions[entry["sub_question_id"]]
            text = str(question.get("question"))
            keywords = " ".join(str(k) for k in (question.get("keywords") or ())[:3])
            missing = entry["status"] == "missing"
            gaps.append({
                "id": "gap-" + re.sub(r"[^A-Za-z0-9._-]", "-", question["id"]),
                "description": f"{'No verified evidence' if missing else 'One verified claim only'} answers: "
                               + text,
                "priority": "high" if missing else "medium",
                "sub_question_id": question["id"],
                "suggested_queries": [q for q in dict.fromkeys([keywords, text]) if q.strip()],
            })
        open_items = [c for c in self.graph.get("contradictions") or () if c.get("status") == "open"]
        for n, item in enumerate(open_items, start=1):
            pair = " and ".join(item["claim_ids"][:2])
            about = f"Unresolved contradiction between {pair}: {item.get('description', '')}"
            gaps.append({"id": f"gap-contradiction-{n}", "priority": "low", "description": about[:600]})
        return gaps

    # -- report outline ----------------------------------------------------------------------
    def cite(self, claims: list[Item], limit: int = 3, fresh: bool = False) -> str:
        """Up to ``limit`` extractive sentences, each followed by its marker; unverified claims are
        never cited. Parallel researchers may quote the same sentence, so a sentence appears once
        per paragraph, and with ``fresh`` once in all the fresh paragraphs of the report."""
        out: list[str] = []
        seen = set(self.cited) if fresh else set()
        for claim in claims:
            key = normalize_ws(claim["statement"]).casefold()
            if verified(claim) and key not in seen and len(out) < limit:
                seen.add(key)
                out.append(f"{normalize_ws(claim['statement'])} [@{claim['id']}]")
        if fresh:
            self.cited |= seen
        return " ".join(out)

    def outline(self, headings: list[str]) -> Item:
        if not any(kind_of(h) == "answer" for h in headings):
            headings = ["Answer", *headings]
        builders: dict[str, Callable[[str], list[str]]] = {
            "answer": self._answer, "summary": self._summary, "introduction": self._introduction,
            "findings": self._findings,
            "evidence": self._evidence, "gaps": self._gaps, "contradictions": self._contradictions,
            "quality": self._quality, "method": self._method,
            "conclusion": self._conclusion, "bibliography": lambda heading: [], "custom": self._custom,
        }
        sections: list[Item] = [
            {"heading": h, "paragraphs": [{"text": text} for text in builders[kind_of(h)](h) if text]}
            for h in headings
        ]
        summary = f"Of {len(self.coverage)} sub-questions, {self.covered()} are covered by verified evidence."
        outline = {"title": self.query or "Research report", "sections": sections, "summary": summary}
        while len(dumps_pretty(outline).encode()) > OUTLINE_BUDGET:  # stay under the file limit
            max(sections, key=lambda s: len(s["paragraphs"]))["paragraphs"].pop()
        return outline

    def answer_claims(self, limit: int = 5) -> list[Item]:
        """The claims that answer the query: the two best for the query itself (Q1), a third nearly as
        good, then the best new one of each other sub-question; at most ``limit``, one per sentence."""
        if not self.questions:
            return []
        first, *others = self.questions
        main = self.by_question[first["id"]]
        groups = [[c for n, c in enumerate(main[:3]) if n < 2 or rank(c) >= rank(main[0]) - 0.08]] if main else []
        groups += [self.by_question[q["id"]] for q in others]  # each part: its best sentence not yet chosen
        out: list[Item] = []
        seen: set[str] = set()
        for number, group in enumerate(groups):
            for claim in group:
                key = normalize_ws(claim["statement"]).casefold()
                if key not in seen and len(out) < limit:
                    seen.add(key)
                    out.append(claim)
                    if number:
                        break
        return out

    def _answer(self, heading: str) -> list[str]:
        """The direct answer first: for a yes/no question its decision, then the quoted evidence; a value from
        an archived, superseded or older document after the current one, and said to be outdated."""
        asked = self.by_question[self.questions[0]["id"]] if self.questions else []
        claims = self.answer_claims()
        claims += deciding_claims(self.query, claims, asked, ANSWER_LIMIT - len(claims), _source_of)
        current, parts = self._current_first(claims, ANSWER_LIMIT, 2)
        if not parts:
            return [f"None of the {len(self.sources)} ingested source(s) holds a passage that answers this question."]
        lead = decision_lead(self.query, [c for c in asked if c in current] or current)
        return [f"{lead} {parts[0]}".strip(), *parts[1:]] if lead and current else parts

    def _current_first(self, claims: list[Item], limit: int, older: int) -> tuple[list[Item], list[str]]:
        """The current claims cited in one paragraph, then up to ``older`` outdated ones, each labelled."""
        vintage = vintages(self.sources)
        current, outdated = split_current(claims, vintage, self.query, _source_of)
        cited = self.cite(current, limit=limit, fresh=True)
        labelled = [outdated_label(_source_of(c), vintage, self.sources) + quote for c in outdated[:older]
                    for quote in [self.cite([c], limit=1, fresh=True)] if quote]
        return (current if cited else []), ([cited] if cited else []) + labelled

    def _summary(self, heading: str) -> list[str]:
        sources = {_source_of(c) for c in self.verified}
        overview = (f"From {len(self.sources)} ingested source(s), this report quotes {len(sources)}; "
                    f"{self.covered()} of {len(self.coverage)} sub-question(s) are covered by verified evidence.")
        return [overview]  # the Answer above quotes the best sentences; Key Findings the rest

    def _introduction(self, heading: str) -> list[str]:
        parts = [str(q.get("question")) for q in self.questions[1:]]
        if not parts:
            return []  # a simple question: the title says it, the answer follows
        return [f"The question has {len(parts)} part(s), answered in turn below: " + "; ".join(parts)]

    def _findings(self, heading: str) -> list[str]:
        """Further evidence per sub-question; the query itself is never repeated (it is the title)."""
        out = []
        for number, question in enumerate(self.questions):
            text = " ".join(self._current_first(self.by_question[question["id"]], PER_QUESTION, 1)[1])
            if text:
                out.append(text if number == 0 else f"On \u201c{question.get('question')}\u201d: {text}")
        return out

    def _evidence(self, heading: str) -> list[str]:
        by_source: dict[str, list[Item]] = {}
        for claim in self.verified:
            by_source.setdefault(_source_of(claim), []).append(claim)
        out = []
        for source_id, claims in sorted(by_source.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:10]:
            source = self.sources.get(source_id, {})
            year = f" ({source['year']})" if source.get("year") else ""
            out.append(f"{source.get('title', source_id)}{year} supplies {len(claims)} verified claim(s), "
                       + (f"for example: {example}" if (example := self.cite(claims, limit=2, fresh=True))
                          else "each quoted elsewhere in this report."))
        return out

    def _gaps(self, heading: str) -> list[str]:
        """What is missing, each part once; nothing when nothing is (the report then says so itself, once).

        A heading that also names contradictions ("Gaps and Contradictions") gets the open ones too."""
        questions = {q["id"]: q for q in self.questions}
        first = self.questions[0]["id"] if self.questions else ""
        out = [(f"{'No verified' if e['status'] == 'missing' else 'Only partial'} evidence was found for "
                + ("the question itself." if e["sub_question_id"] == first
                   else f"the part \u201c{questions[e['sub_question_id']].get('question')}\u201d."))
               for e in self.coverage if e["status"] != "covered"]
        if any(word in heading.casefold() for word in CONTRADICTION_WORDS):
            out += self._contradictions(heading)
        open_gaps = [g for g in self.graph.get("gaps") or () if isinstance(g, dict) and g.get("priority") == "high"]
        if open_gaps:  # never claim completeness while the graph records open high-priority gaps
            out.append(f"{len(open_gaps)} high-priority gap(s) reported by the research agents remain open "
                       "(listed below).")
        return out

    def _contradictions(self, heading: str) -> list[str]:
        """Each open contradiction between verified claims, both sides cited; nothing when there is none."""
        claims = {c["id"]: c for c in self.verified}
        out = []
        for item in self.graph.get("contradictions") or ():
            pair = [claims[i] for i in item.get("claim_ids", [])[:2] if i in claims]
            if item.get("status") == "open" and len(pair) == 2:
                out.append(f"Open contradiction: {self.cite(pair[:1])} By contrast: {self.cite(pair[1:])}")
        return out

    def _quality(self, heading: str) -> list[str]:
        evidence = [e for c in self.claims for e in c.get("evidence") or ()]
        ok = sum(1 for e in evidence if (e.get("verification") or {}).get("verified") is True)
        states = [status(c) for c in self.claims]
        return [f"{ok} of {len(evidence)} evidence quotations were found verbatim in the stored source "
                f"texts. {states.count('corroborated')} claim(s) are corroborated by a second source, "
                f"{states.count('single-source')} rest on a single source, {states.count('contradicted')} "
                f"are contradicted and {states.count('unassessed')} were not assessed."]

    def _method(self, heading: str) -> list[str]:
        peer = sum(1 for s in self.sources.values() if s.get("peer_reviewed") is True)
        return [f"{len(self.sources)} source(s) ingested ({peer} peer-reviewed), {len(self.questions)} sub-question(s) "
                "searched by words (BM25) and meaning (embeddings) over sentences, list items and table rows; "
                "every quote was checked against its source's text at its page before it could be cited."]

    def _conclusion(self, heading: str) -> list[str]:
        strongest = sorted(self.verified, key=lambda c: (status(c) != "corroborated", -weight(c)))
        coverage = f"{self.covered()} of {len(self.coverage)} sub-questions are covered"
        return [self.cite(strongest, limit=2, fresh=True),
                f"{coverage}; the gaps say what further sources would answer."]

    def _custom(self, heading: str) -> list[str]:
        wanted = terms(heading)
        matching = [c for c in self.verified if wanted & terms(c["statement"])]
        return [self.cite(matching or self.verified, fresh=True)]


def _source_of(claim: Item) -> str:
    return str((claim.get("evidence") or [{}])[0].get("source_id", ""))


def _produce(context: AgentContext) -> dict[str, int]:
    graph = context.graph()
    synthesis = Synthesis(graph, plan_questions(graph) or context.task.sub_questions, context.task.query)
    findings, gaps = synthesis.key_findings(), synthesis.gaps()
    headings = [str(h) for h in context.task.data.get("required_sections") or DEFAULT_SECTIONS]
    context.write_items("key-findings", "key_findings", findings)
    context.write_items("coverage", "coverage", synthesis.coverage)
    if gaps:
        context.write_items("gaps", "gaps", gaps)
    context.write_artifact("report-outline.json", {"report_outline": synthesis.outline(headings)})
    return {"findings": len(findings), "questions": len(synthesis.coverage), "gaps": len(gaps),
            "covered": synthesis.covered(), "verified": len(synthesis.verified)}


def run(context: AgentContext) -> None:
    resubmitted = "Re-submitted the synthesis with the named problems fixed."
    if complete_retry(context, lambda: _produce(context), resubmitted):
        return
    stats = _produce(context)
    summary = (f"Wrote {stats['findings']} key finding(s) from {stats['verified']} verified claim(s); "
               f"{stats['covered']} of {stats['questions']} sub-question(s) covered, {stats['gaps']} gap(s) "
               "left; the report outline cites verified claims only.")
    context.complete("completed" if stats["verified"] else "partial", summary)

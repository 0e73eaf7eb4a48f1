"""Answer retrieval: BM25 and static embeddings over candidate units, fused, with expansion and answer typing.

Units (sentences, list items, table rows: :mod:`agents.offline.units`) are indexed with their
neighbours, because the sentence that answers often leaves its subject to the previous one. The
query is expanded from the corpus (abbreviations, lay terms, word families, pseudo-relevance
feedback); the BM25 and embedding rankings are fused by reciprocal rank, then adjusted for the
section, the answer kind asked for (:mod:`agents.offline.qtype`) and how current the document is
(:mod:`agents.offline.vintage`). A question nothing answers gets nothing to cite.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from agents.offline.candidates import MIN_COVERAGE, lexical, reranked
from agents.offline.corpus import Corpus
from agents.offline.doccache import code_key
from agents.offline.expansion import feedback, find_abbreviations, lay_expansions, question_terms
from agents.offline.grounding import Grounding
from agents.offline.index import ANALYSIS_CODE, IndexedUnit, bm25_postings, document_analysis, window_vectors
from agents.offline.qtype import classify, fit
from agents.offline.selection import Answer, dedupe, is_broad, spread, with_results
from agents.offline.semantic import embedder
from agents.offline.sentences import Sentence
from agents.offline.softmatch import Coverage, Lexicon, surface_words
from agents.offline.units import quotable
from agents.offline.vintage import Currency, asks_for_current, names_current, vintages
from orchestrator.model.terms import search_terms, search_words, stem_words

__all__ = ["MIN_COVERAGE", "Answer", "Retriever", "dedupe", "quotable"]

MIN_WEIGHT_SHARE = 0.3  # floor of a question term's weight, as a share of the rarest present term's
SUBJECT_WEIGHT = 0.45  # a term that chose the papers (a name they are about) weighs this share within them
KEEP_SHARE = 0.5  # a candidate under this share of the best one's score is not returned ...
UNGATED_SHARE = 0.65  # ... nor one the gate did not pass under this share
RESULTS_ADDED = 4  # results sentences of the best study added for a yes/no question ...
ABSTRACT_UNITS = 40  # ... when it is an abstract or a note of at most this many units, not a long paper
OUTDATED = 0.55  # score factor of a unit from an archived or superseded document
RECENCY = 0.15  # a question about the value in force: the oldest dated statement loses this share of its score
_PERIOD_RE = re.compile(r"(?i)\b(?:(?:19|20)\d\d|q[1-4])\b")
_PRIOR = {"abstract": 1.08, "front": 1.0, "introduction": 0.88, "methods": 1.0, "results": 1.05,
          "discussion": 1.0, "limitations": 1.0, "conclusion": 1.05}


class Retriever:
    """Candidate units of a corpus, their BM25 window index and their embeddings (built once per corpus)."""

    def __init__(self, corpus: Corpus, state: dict[str, Any] | None = None, vectors: np.ndarray | None = None) -> None:
        """Build the index, or restore it from :meth:`state` (the same corpus texts)."""
        self.corpus = corpus
        postings = None
        pages = {sid: doc.pages for sid, doc in corpus.documents.items()}
        if state is None:
            self.units, self.terms, parts = [], [], []
            for number, sid in enumerate(sorted(corpus.documents)):
                rows, terms, doc_vectors = document_analysis(corpus, sid)
                self.units += [self._unit(sid, row, pages[sid], number) for row in rows]
                self.terms += [list(t) for t in terms]
                parts.append(doc_vectors)
            usable = [p for p in parts if p is not None]
            self.vectors = np.vstack(usable) if usable and len(usable) == len(parts) else None
            self.abbreviations = find_abbreviations(d.text for d in corpus.documents.values())
            self.words = surface_words(u.sentence.text for u in self.units)
        else:
            self.units = [self._unit(sid, row, pages[sid], doc) for sid, doc, row in state["units"]]
            self.terms = [list(t) for t in state["terms"]]
            self.abbreviations = dict(state["abbreviations"])
            self.words = dict(state["words"])
            found = state["postings"]
            postings = (dict(found["vocab"]), np.asarray(found["data"], dtype=float),
                        np.asarray(found["indices"], dtype=np.int64), np.asarray(found["indptr"], dtype=np.int64))
            self.vectors = vectors if vectors is not None and len(vectors) == len(self.units) else None
        windows = [[t for j in (i - 1, i, i + 1) if 0 <= j < len(self.units) and self.units[j].doc == unit.doc
                    for t in self.terms[j]] for i, unit in enumerate(self.units)]  # a unit with its neighbours
        self.window_sets = [set(w) for w in windows]
        self._postings = postings or bm25_postings(windows)
        df: Counter[str] = Counter(t for w in self.window_sets for t in w)
        n = max(1, len(windows))
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        self.max_idf = math.log(1 + (n + 0.5) / 0.5)
        self.vocab = sorted(df)
        self._scores: dict[str, np.ndarray] = {}
        self._lexicon: Lexicon | None = None
        self.anchors = self._anchor_counts()
        self.doc_units = Counter(u.sentence.source_id for u in self.units)
        self.window_vectors = window_vectors(self.vectors, [u.doc for u in self.units])
        self.currency = Currency(vintages({sid: doc.source for sid, doc in corpus.documents.items()}),
                                 {sid: str(doc.source.get("title", "")) for sid, doc in corpus.documents.items()})

    @staticmethod
    def _unit(sid: str, row: list[Any], pages: tuple[str, ...], doc: int) -> IndexedUnit:
        page, start, end, section, ok, kind, context = row
        return IndexedUnit(Sentence(sid, page, start, end, pages[page - 1][start:end], context), section, bool(ok), doc,
                     kind)

    _VERSION = 5

    def state(self) -> dict[str, Any]:
        """What :meth:`__init__` needs to restore this index without rebuilding it (JSON-serialisable)."""
        vocab, data, indices, indptr = self._postings
        return {"units": [[u.sentence.source_id, u.doc, [u.sentence.page, u.sentence.start, u.sentence.end,
                                                         u.section, u.quotable, u.kind, u.sentence.context]]
                          for u in self.units],
                "terms": self.terms, "abbreviations": self.abbreviations, "words": self.words,
                "postings": {"vocab": vocab, "data": data.tolist(), "indices": indices.tolist(),
                             "indptr": indptr.tolist()}}

    @classmethod
    def cached(cls, corpus: Corpus, folder: Path | None) -> Retriever:
        """Build once per set of texts: the researcher processes of one session share the index, stored as JSON
        (not a pickle: a session folder may come from elsewhere) and the embeddings as ``.npy``."""
        if folder is None:
            return cls(corpus)
        model = embedder()
        key = hashlib.sha256(repr((cls._VERSION, code_key(*ANALYSIS_CODE), model.name if model else "",
                                   sorted((sid, d.source.get("content_sha256"))
                                          for sid, d in corpus.documents.items()))).encode())
        path = folder / f"retriever-{key.hexdigest()[:20]}.json"
        matrix = path.with_suffix(".npy")
        try:
            vectors = np.load(matrix, allow_pickle=False) if model is not None else None
            return cls(corpus, orjson.loads(path.read_bytes()), vectors)
        except Exception:  # missing or damaged: rebuild
            pass
        retriever = cls(corpus)
        folder.mkdir(parents=True, exist_ok=True)
        if retriever.vectors is not None:
            tmp_matrix = matrix.with_name(f".{matrix.stem}.{os.getpid()}.tmp.npy")
            np.save(tmp_matrix, retriever.vectors, allow_pickle=False)
            os.replace(tmp_matrix, matrix)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(orjson.dumps(retriever.state()))
        os.replace(tmp, path)  # concurrent builders write identical files; the last rename wins
        for stale in [*folder.glob("retriever-*.json"), *folder.glob("retriever-*.npy")]:  # earlier graph states
            if stale not in (path, matrix):
                stale.unlink(missing_ok=True)
        return retriever

    def _anchor_counts(self) -> dict[str, Counter[str]]:
        """Per source, how often each stem occurs (outside references): is a named thing its subject?"""
        counts: dict[str, Counter[str]] = {}
        for unit, terms in zip(self.units, self.terms, strict=True):
            counts.setdefault(unit.sentence.source_id, Counter()).update(terms)
        return counts

    def anchors_of(self, question: str) -> set[str]:
        """Stems of the names a question uses ("S2ORC", "33RE", "SciBERT", "Malawi") that some paper uses."""
        names = [w for w in re.findall(r"[\w-]+", question)[1:]
                 if any(c.isdigit() for c in w) or sum(c.isupper() for c in w) >= 2
                 or (w[:1].isupper() and w.casefold() not in self.abbreviations and len(w) > 2)]
        stems = {s for w in names for s in search_terms(w)}
        return {s for s in stems if s in self.idf and self.idf[s] > 2.0}

    # -- query --------------------------------------------------------------------------------
    def _term_scores(self, term: str) -> np.ndarray:
        """BM25 score of every window for one term (what ``bm25s.BM25.get_scores([term])`` returns)."""
        if term not in self._scores:
            vocab, data, indices, indptr = self._postings
            scores = np.zeros(len(self.units))
            tid = vocab.get(term)
            if tid is not None:
                scores[indices[indptr[tid] : indptr[tid + 1]]] = data[indptr[tid] : indptr[tid + 1]]
            self._scores[term] = scores
        return self._scores[term]

    def expand(self, question: str) -> list[tuple[str, set[str]]]:
        """Each content stem of the question with the stems that may stand in for it."""
        words = question_terms(question)
        stems = stem_words(words)
        groups: list[tuple[str, set[str]]] = []
        flat = " ".join(search_words(question))
        for abbr, long_form in self.abbreviations.items():
            long_stems = search_terms(long_form)
            if len(abbr) > 1 and long_stems and f" {' '.join(search_words(long_form))} " in f" {flat} ":
                groups.append((stem_words([abbr])[0], set(long_stems)))
        for stem in dict.fromkeys(stems):
            alternatives = set(lay_expansions(stem))
            original = next((w for w in words if stem_words([w])[0] == stem), stem)
            if original in self.abbreviations:
                alternatives |= set(search_terms(self.abbreviations[original]))
            if len(stem) >= (4 if stem not in self.idf else 5):  # a word family: "rehab" -> "rehabilit"
                alternatives |= {v for v in self.vocab if v.startswith(stem) and len(v) <= len(stem) + 6}
            groups.append((stem, {a for a in alternatives if a in self.idf and a != stem}))
        return groups

    def _weight(self, stem: str, alternatives: set[str]) -> float:
        if stem in self.idf:
            return self.idf[stem]
        known = [self.idf[a] for a in alternatives if a in self.idf]
        return max(known) if known else self.max_idf  # a word no document uses: the question may be off-corpus

    def weights(self, groups: list[tuple[str, set[str]]]) -> dict[str, float]:
        """Each question term's weight: its idf, at least :data:`MIN_WEIGHT_SHARE` of the rarest term the
        corpus uses (in a single paper its own subject is in every window and still what the question is
        about; in a handful of notes every word is common and none may dominate)."""
        raw = {stem: self._weight(stem, alts) for stem, alts in groups}
        present = [w for w in raw.values() if w < self.max_idf]
        floor = MIN_WEIGHT_SHARE * max(present) if present else 0.0
        return {stem: max(w, floor) for stem, w in raw.items()}

    def lexicon(self) -> Lexicon | None:
        """Word vectors of the corpus vocabulary (built on first use), or None without the model."""
        model = embedder()
        if model is None:
            return None
        if self._lexicon is None:
            self._lexicon = Lexicon(self.words, model)
        return self._lexicon

    def soft_coverage(self, question: str, groups: list[tuple[str, set[str]]],
                      weights: dict[str, float]) -> Coverage:
        """Coverage of the question's weighted terms by a unit and its window, soft and exact."""
        words = {stem_words([w])[0]: w for w in question_terms(question)}
        return Coverage(self.lexicon(), [(words.get(s, s), s, alts, weights[s]) for s, alts in groups],
                        self.terms, self.window_sets)

    # -- ranking ------------------------------------------------------------------------------
    def lexical_scores(self, question: str, context: str = "", subject: set[str] | frozenset[str] = frozenset()
                       ) -> tuple[np.ndarray, list[tuple[str, set[str]]], dict[str, float]]:
        """BM25 of every window for the expanded question (with feedback), its term groups and weights.

        ``subject``: the stems of names that chose the papers to answer from ("Kamuzu Central Hospital",
        "33RE"); within those papers they are everywhere, and the rest of the question (often in the
        reader's own words) tells the answering sentence apart, so they weigh :data:`SUBJECT_WEIGHT`."""
        groups = self.expand(question)
        weights = {s: w * SUBJECT_WEIGHT if s in subject else w for s, w in self.weights(groups).items()}
        score = np.zeros(len(self.units))
        for stem, alts in groups:
            score += weights[stem] * self._term_scores(stem)
            for alt in alts:
                score += 0.6 * weights[stem] * self._term_scores(alt)
        for stem in search_terms(context):
            if stem not in weights:
                score += 0.3 * self.idf.get(stem, 0.0) * self._term_scores(stem)
        return feedback(score, weights, self.window_sets, self.idf, self._term_scores), groups, weights

    def semantic_scores(self, question: str) -> np.ndarray | None:
        """Cosine of every window's embedding with the question's, or None without the model."""
        model = embedder()
        if model is None or self.window_vectors is None:
            return None
        query = model.embed([question])[0]
        return np.asarray(self.window_vectors @ query, dtype=float)

    def search(self, question: str, limit: int = 8, context: str = "", only: set[str] | None = None,
               exclude: set[str] | None = None, min_coverage: float = MIN_COVERAGE,
               mode: str = "fused") -> list[Answer]:
        """The best quotable units for ``question``, near-duplicates removed, best first.

        Two rankings are fused by reciprocal rank: BM25 over the expanded question (the question's own words,
        the papers' abbreviations, lay terms) and the cosine of static embeddings (the reader's words for the
        same thing). With embeddings, the fused top :data:`RERANK_DEPTH` are reranked and the question is
        answered only when its best windows are close enough for this corpus (``candidates.answerable``);
        without them, a unit is a candidate when its window covers ``min_coverage`` of the question's weighted
        terms. ``context``
        (the research query, for a sub-question) adds its terms at low weight; ``exclude`` holds normalised
        sentences already quoted elsewhere; ``mode`` ("lexical", "semantic", "fused") is for measuring the parts.
        """
        if not self.units:
            return []
        kind = classify(question)
        anchors = self.anchors_of(question)
        about = {sid for sid, counts in self.anchors.items() if any(counts[a] >= 3 for a in anchors)}
        if anchors and about:  # a question that names something is answered by the papers about it
            only = about if only is None else only & about
        score, groups, weights = self.lexical_scores(question, context, anchors if anchors and about else set())
        model = embedder()
        sim = None if mode == "lexical" or model is None else self.semantic_scores(question)
        if mode == "semantic" and sim is not None:
            score = np.zeros(len(self.units))
        allowed = np.fromiter((u.quotable and (only is None or u.sentence.source_id in only) for u in self.units),
                              dtype=bool, count=len(self.units))
        cover = self.soft_coverage(question, groups, weights)
        if sim is None or model is None:
            picked = lexical(score, cover, allowed, min_coverage)
        else:
            picked = reranked(score, sim, cover, allowed, model)
        grounding = Grounding.of(question, groups, self.anchors, [u.sentence.source_id for u in self.units],
                                 self.window_sets, self.lexicon())  # a passage about another thing is no answer
        picked = [c for c in picked if grounding.part(c[0]).confidence > 0]
        periods = {p.casefold() for p in _PERIOD_RE.findall(question)}
        current = asks_for_current(question)
        explicit = current and names_current(question)
        scored: list[tuple[float, Answer, bool]] = []
        for i, base, cover_w, gated in picked:
            unit = self.units[i]
            value = base * _PRIOR.get(unit.section, 1.0) + fit(
                kind, unit.sentence.flat, unit.section, question, unit=unit.kind,
                abstract=self.doc_units[unit.sentence.source_id] <= ABSTRACT_UNITS)
            if self.currency.outdated_for(unit.sentence, periods):
                value *= OUTDATED  # an archived copy or an older version: history, not the value in force
            elif current:  # "latest", or no period named: the newer statement
                value *= 1.0 - (2 * RECENCY if explicit else RECENCY) * self.currency.age(unit.sentence)
            scored.append((value, Answer(unit.sentence, round(value, 6), round(cover_w, 4), unit.section), gated))
        scored.sort(key=lambda c: (-c[0], c[1].sentence.source_id, c[1].sentence.page, c[1].sentence.start))
        if sim is not None and scored:  # far below the best is not an answer, however few there are
            best = scored[0][0]
            scored = [c for c in scored if c[0] >= (KEEP_SHARE if c[2] else UNGATED_SHARE) * best]
        candidates = [(value, answer) for value, answer, _ in scored]
        if kind.yes_no and candidates and self.doc_units[candidates[0][1].sentence.source_id] <= ABSTRACT_UNITS:
            candidates = with_results(candidates, [(u.sentence, u.section, u.quotable) for u in self.units],
                                      RESULTS_ADDED)
        answers = [a for _, a in candidates]
        if is_broad(question):  # "these papers": spread the quotes over the papers
            answers = spread(answers[: 10 * limit]) + answers[10 * limit :]
        return dedupe(answers, limit, exclude or set())


def retriever_for(corpus: Corpus) -> Retriever:
    """The answer retriever over the corpus's documents, built on first use and kept on the corpus."""
    if corpus.retriever_cache is None:
        corpus.retriever_cache = Retriever.cached(corpus, corpus.cache_dir)
    found: Retriever = corpus.retriever_cache
    return found

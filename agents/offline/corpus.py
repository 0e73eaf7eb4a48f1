"""What the offline researcher and fact-checker share: the graph's texts as a searchable corpus.

Agents see other agents' sources only through the committed graph, so the corpus is rebuilt from
``knowledge-graph.json`` plus the content-addressed texts, with the sources' GLOBAL ids (the ids
claims must cite). The BM25 index is cached under ``sources/.index/`` keyed by the exact set of
texts, so several researcher instances in one session build it once. Sentence filters live here
too: a claim quoted from a reference list, a caption or a running header is not a finding.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.offline import textindex
from agents.offline.ingest import Document
from agents.offline.text import STOPWORDS, normalize_ws, sentence_spans, tokens, wordlist
from agents.offline.textindex import Hit, PassageIndex
from agents.runtime import AgentContext

__all__ = ["Corpus", "Sentence", "apply_retry", "complete_retry", "load_corpus", "plan_questions", "stem", "terms"]

_INDEX_VERSION = 1

# --- terms -----------------------------------------------------------------------------------

_SUFFIXES = ("ational", "ization", "ations", "ation", "ments", "ment", "ness", "ing", "ies", "ied", "ed",
             "es", "ly", "s")


def stem(word: str) -> str:
    """A crude, deterministic suffix stripper: enough to match 'increases' with 'increased'."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                break
            word = word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
            break
    return word[:-1] if word.endswith("e") and len(word) > 4 else word


def terms(text: str) -> set[str]:
    """Stemmed content words: what two sentences must share to be about the same thing."""
    return {stem(t) for t in tokens(text) if len(t) > 2 and t not in STOPWORDS and not t[0].isdigit()}


# --- sentence filters ------------------------------------------------------------------------

_CAPTION_RE = re.compile(
    r"(?i)^(?:supplementary\s+|suppl\.\s*)?(?:s\d+\s+)?(?:fig(?:ure)?s?|tab(?:le)?s?|chart|scheme|plate|box)"
    r"\.?\s*(?:[A-Z]?\d+|[IVX]+)\b"
)
_BOILERPLATE_RE = re.compile(
    r"(?i)©|\bcopyright\b|creative commons|licen[cs]ed under|\bopen access\b|\breceived:|\baccepted:|"
    r"correspond(?:ence|ing author)|e-?mail|https?://|www\.|\bdoi\b|\bthank|\bgrateful|funded by|"
    r"\bgrant (?:no|number)|acknowledg|competing interests|conflicts? of interest|authors?'? contributions?|"
    r"\bpublished by\b|\barxiv preprint\b|\bin proceedings\b|\bfunding\b|\bsupported by\b|cite this article|"
    r"\b(?:table|figure|fig\.)\s*[a-z]?\d+\s*:"  # a caption inside the "sentence": a table ran into it
)
_HEADING_START_RE = re.compile(r"^[A-Z]{4,} [A-Z]{4,}\b")  # "CLINICAL PERSPECTIVES The N-domain ..."
_JOINED_RE = re.compile(r"\b([A-Za-z]{3,})\. [a-z]")
_ABBREV = frozenset(wordlist("approx etc fig figs resp vs viz incl eqs refs sect suppl"))
_INITIALS_RE = re.compile(r"\b[A-Z]\.\s?(?:[A-Z]\.\s?)?,")
_YEAR_RE = re.compile(r"\(?(?:19|20)\d{2}[a-z]?\)?[.,;:]")
_VENUE_RE = re.compile(
    r"\b(?:[Jj]ournal|J\.|[Pp]roc\.|[Pp]roceedings|[Cc]onference|pp\.|[Vv]ol\.|[Pp]ress)\s"
)
_REF_START_RE = re.compile(r"^(?:\[\d+\]|\d{1,3}\.\s+[A-Z][a-zA-Z'-]+,?\s+[A-Z]{1,3}\b)")
_ENDING_RE = re.compile(r"[.!?][\"'\u201d\u2019)\]]*(?:\s?\[\d+(?:\s*[,\u2013-]\s*\d+)*\])?$")
_REF_HEADING_RE = re.compile(
    r"(?i)^(?:\d+\.?\s*)?(?:references|bibliography|literature cited|works cited)\s*$"
)
_AFTER_REF_RE = re.compile(
    r"(?i)^(?:[A-Z]\s+|\d+\s+)?(?:appendix|appendices|supplementary|supporting information)\b"
)


def reference_like(text: str) -> bool:
    """A reference-list entry: numbered or with several initials, a year and a venue."""
    if _REF_START_RE.match(text):
        return True
    initials = len(_INITIALS_RE.findall(text)) >= 2
    signals = initials + bool(_YEAR_RE.search(text)) + bool(_VENUE_RE.search(text))
    return signals >= 2 or text.count(" et al.") >= 2


def informative(text: str) -> bool:
    """A complete, quotable sentence of prose (not a caption, reference, header or table row)."""
    flat = normalize_ws(text)
    words = flat.split()
    if not 60 <= len(flat) <= 450 or not 9 <= len(words) <= 80:
        return False
    if not (flat[0].isupper() or flat[0] in "\"'\u201c(") or not _ENDING_RE.search(flat):
        return False
    if _CAPTION_RE.match(flat) or _HEADING_START_RE.match(flat) or _BOILERPLATE_RE.search(flat):
        return False
    if reference_like(flat) or any(m.group(1).casefold() not in _ABBREV for m in _JOINED_RE.finditer(flat)):
        return False  # _JOINED_RE: "... of runs. tecting inline ...", two columns or a footnote run together
    visible = flat.replace(" ", "")
    letters = sum(ch.isalpha() for ch in visible)
    digits = sum(ch.isdigit() for ch in visible)
    if letters < 0.75 * len(visible) or digits > 0.12 * len(visible):
        return False
    single = sum(1 for w in words if len(w.strip(".,;:()[]")) == 1 and w.lower() not in ("a", "i"))
    return single <= 0.15 * len(words) and len(terms(flat)) >= 4


def _line_key(line: str) -> str:
    return re.sub(r"\d+", "#", normalize_ws(line)).casefold()


@dataclass(frozen=True)
class Sentence:
    """A verbatim sentence of one page: ``page_text[start:end] == text``."""

    source_id: str
    page: int
    start: int
    end: int
    text: str

    @property
    def flat(self) -> str:
        return normalize_ws(self.text)


@dataclass
class _DocInfo:
    boilerplate: set[str]
    references: tuple[tuple[int, int], tuple[int, int]] | None  # [(page, offset), (page, offset))


def _doc_info(doc: Document) -> _DocInfo:
    """Running headers/footers (lines on many pages) and where the reference list is."""
    seen: Counter[str] = Counter()
    for page in doc.pages:
        seen.update({_line_key(line) for line in page.split("\n") if len(line.strip()) >= 8})
    need = max(3, int(0.3 * len(doc.pages)))
    boilerplate = {key for key, n in seen.items() if n >= need}
    start: tuple[int, int] | None = None
    end = (len(doc.pages) + 1, 0)
    for number, page in enumerate(doc.pages, start=1):
        offset = 0
        for line in page.split("\n"):
            if start is None and number * 2 > len(doc.pages) and _REF_HEADING_RE.match(line.strip()):
                start = (number, offset)
            elif start is not None and _AFTER_REF_RE.match(line.strip()) and len(line) < 80:
                end = (number, offset)
                return _DocInfo(boilerplate, (start, end))
            offset += len(line) + 1
    return _DocInfo(boilerplate, (start, end) if start else None)


@dataclass
class Corpus:
    """The graph's sources with stored texts, their passage index and per-document filters."""

    documents: dict[str, Document]
    index: PassageIndex
    _info: dict[str, _DocInfo] = field(default_factory=dict)
    _df: Counter[str] | None = None
    _retriever: Any = None
    cache_dir: Path | None = None

    def idf(self, term: str) -> float:
        """How rare a (stemmed) term is among the documents: 'S2ORC' says more than 'paper'."""
        if self._df is None:
            self._df = Counter(t for doc in self.documents.values() for t in terms(doc.text))
        return math.log((len(self.documents) + 1) / (self._df[term] + 0.5))

    def retriever(self) -> Any:
        """The answer retriever over these documents (agents.offline.retrieval), built on first use."""
        if self._retriever is None:
            from agents.offline.retrieval import Retriever  # imports corpus: a cycle at module level

            self._retriever = Retriever.cached(self, self.cache_dir)
        return self._retriever

    def title(self, source_id: str) -> str:
        return str(self.documents[source_id].source.get("title") or source_id)

    def close(self) -> None:
        self.index.close()

    def info(self, source_id: str) -> _DocInfo:
        if source_id not in self._info:
            self._info[source_id] = _doc_info(self.documents[source_id])
        return self._info[source_id]

    def sentences(self, hit: Hit, strict: bool = True) -> list[Sentence]:
        """The informative sentences of a hit passage (``strict=False``: any prose sentence)."""
        info = self.info(hit.source_id)
        out = []
        for a, b in sentence_spans(hit.text):
            start, end = hit.char_start + a, hit.char_start + b
            if info.references and info.references[0] <= (hit.page, start) < info.references[1]:
                continue
            text = hit.text[a:b]
            if any(_line_key(line) in info.boilerplate for line in text.split("\n")):
                continue
            if informative(text) if strict else len(text) >= 30 and not reference_like(normalize_ws(text)):
                out.append(Sentence(hit.source_id, hit.page, start, end, text))
        return out

    def search(self, query: str, limit: int, exclude: set[str] | None = None,
               only: list[str] | None = None) -> list[Hit]:
        """BM25 hits, optionally within some sources or outside others (over-fetching so the limit holds)."""
        if only is not None:
            return [h for h in self.index.search(query, limit=limit, source_ids=only)
                    if not exclude or h.source_id not in exclude]
        if not exclude:
            return self.index.search(query, limit=limit)
        hits = self.index.search(query, limit=limit * 3 + 20)
        return [h for h in hits if h.source_id not in exclude][:limit]


def graph_documents(context: AgentContext, graph: dict[str, Any] | None = None) -> list[Document]:
    """One Document per unified graph source whose text is stored, with its global id."""
    graph = context.graph() if graph is None else graph
    docs = []
    for source in graph.get("sources") or ():
        sha = source.get("content_sha256") if isinstance(source, dict) else None
        text = context.source_text(sha) if isinstance(sha, str) else None
        if text is not None and hashlib.sha256(text.encode("utf-8")).hexdigest() == sha:
            docs.append(Document(source=dict(source), pages=tuple(text.split("\f"))))
    return sorted(docs, key=lambda d: d.id)


def load_corpus(context: AgentContext, graph: dict[str, Any] | None = None) -> Corpus:
    """Documents plus a passage index, reusing the session's cached index for the same texts."""
    docs = graph_documents(context, graph)
    key_data = [_INDEX_VERSION, textindex.MAX_SENTENCES, textindex.MAX_CHARS,
                [(d.id, d.source.get("content_sha256")) for d in docs]]
    key = hashlib.sha256(json.dumps(key_data).encode()).hexdigest()[:20]
    path = context.paths.sources / ".index" / f"passages-{key}.sqlite3"
    index = None
    if path.is_file():
        try:
            index = PassageIndex.open(path)
            len(index)  # a damaged cache file fails here; rebuild it then
        except Exception:
            index = None
    if index is None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        PassageIndex.build(docs, tmp).close()
        os.replace(tmp, path)  # concurrent builders write identical files; the last rename wins
        for stale in path.parent.glob("passages-*.sqlite3"):  # indexes of earlier graph states
            if stale != path:
                stale.unlink(missing_ok=True)
        index = PassageIndex.open(path)
    return Corpus({d.id: d for d in docs}, index, cache_dir=path.parent)


def plan_questions(graph: dict[str, Any]) -> list[dict[str, Any]]:
    """Every planner's sub-questions with global ids (plans live in their agents' namespaces)."""
    out = []
    for agent in sorted(graph):
        space = graph[agent]
        if isinstance(space, dict) and isinstance(space.get("sub_questions"), list) and "query" in space:
            out += [{**q, "id": f"{agent}:{q['id']}"} for q in space["sub_questions"] if isinstance(q, dict)]
    return out


# --- retries ---------------------------------------------------------------------------------
# The retry instructions name files and JSON pointers. A retry starts from the rejected files (still
# in the folder, or set aside by the runner), corrects or drops exactly the items named, drops what
# referred to dropped items, and leaves every other item as it was.

ItemFixer = Callable[[dict[str, Any], list[str]], dict[str, Any] | None]
Target = tuple[list[str], str]  # (pointer parts below the item, message)
_REQUIRED = frozenset({"id", "type", "title", "statement", "confidence", "priority", "evidence", "name",
                       "subject", "predicate", "object", "description", "claim_ids", "status", "claim_id",
                       "sub_question_id", "question", "snippet", "source_id", "text"})


def retry_targets(instructions: dict[str, Any]) -> dict[str, list[Target]]:
    """Error problems and SHACL violations by artifact file name: (pointer parts, message)."""
    found = [(p.get("file") or entry.get("path"), p.get("pointer", ""), f"{p.get('message')} {p.get('hint')}")
             for entry in instructions.get("files") or () for p in entry.get("problems") or ()
             if p.get("severity", "error") == "error"]
    found += [(v.get("file"), v.get("pointer", ""), str(v.get("message", "")))
              for v in instructions.get("shacl_violations") or () if v.get("severity", "error") == "error"]
    out: dict[str, list[Target]] = {}
    for file, pointer, message in found:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in str(pointer).split("/")[1:]]
        out.setdefault(Path(str(file or "")).name, []).append((parts, message))
    return out


def _previous_files(context: AgentContext) -> dict[str, dict[str, Any]]:
    """The rejected attempt's artifact files (not completion.json) by name."""
    task = context.task
    for folder in (context.folder, context.paths.state / "attempts" / f"{task.agent}-{task.attempt - 1}"):
        files = {p.name: json.loads(p.read_text(encoding="utf-8"))
                 for p in sorted(folder.glob("*.json")) if p.name != "completion.json"}
        if files:
            return files
    return {}


def _split(parts: list[str]) -> tuple[tuple[str, ...], int, list[str]] | None:
    """Pointer parts -> (path of the item list, item index, parts below the item)."""
    cut = 4 if parts[:1] == ["report_outline"] else 1  # report_outline/sections/N/paragraphs/M
    if len(parts) <= cut or not parts[cut].isdigit():
        return None
    return tuple(parts[:cut]), int(parts[cut]), parts[cut + 1 :]


def _fix_item(item: Any, problems: list[Target], fixer: ItemFixer | None) -> Any:
    """The corrected item, or None to drop it.

    A named list element goes (a bad reference in ``claim_ids``), and so does a named optional
    field; a problem with a required field, or with the item itself, drops the item.
    """
    if not isinstance(item, dict):
        return None
    if fixer is not None and any(not rest or rest[0] in ("evidence", "snippet") for rest, _ in problems):
        return fixer(dict(item), [m for _, m in problems])
    item = dict(item)
    for rest, _ in sorted(problems, key=lambda t: [int(x) if x.isdigit() else -1 for x in t[0]])[::-1]:
        if not rest or rest[0] not in item:
            return None
        value = item[rest[0]]
        if len(rest) >= 2 and rest[1].isdigit() and isinstance(value, list):
            item[rest[0]] = [v for i, v in enumerate(value) if i != int(rest[1])]
            if not item[rest[0]] and rest[0] in _REQUIRED:
                return None
        elif rest[0] in _REQUIRED:
            return None
        else:
            del item[rest[0]]
    return item


def _markers(text: str) -> set[str]:
    found = re.findall(r"\[(@[^\[\]]+)\]", text)
    return {ref.strip().lstrip("@") for marker in found for ref in marker.split(";")}


def _cascade(files: dict[str, dict[str, Any]], agent: str, dropped: set[str]) -> tuple[set[str], int, int]:
    """Remove references to dropped items; drop items left without what they were about.

    Returns the files changed, how many items were dropped and how many only lost a reference
    (a relationship supported by three claims keeps the other two).
    """
    gone = dropped | {f"{agent}:{d}" for d in dropped}
    changed: set[str] = set()
    removed = trimmed = 0
    for file, doc in files.items():
        for key, items in doc.items():
            kept = []
            for item in items if isinstance(items, list) else ():
                if isinstance(item, dict):
                    lists = [n for n in ("claim_ids", "entity_ids") if set(item.get(n) or ()) & gone]
                    for name in lists:
                        item[name] = [x for x in item[name] if x not in gone]
                    need = 2 if key == "contradictions" else 1
                    if {item.get("claim_id"), item.get("subject"), item.get("object")} & gone or (
                            "claim_ids" in lists and len(item["claim_ids"]) < need):
                        removed += 1
                        changed.add(file)
                        continue
                    trimmed += bool(lists)
                    changed.update([file] if lists else [])
                kept.append(item)
            if isinstance(items, list):
                items[:] = kept
        outline = doc.get("report_outline")
        for section in outline.get("sections", []) if isinstance(outline, dict) else []:
            kept = [p for p in section["paragraphs"] if not _markers(p["text"]) & gone]
            if len(kept) < len(section["paragraphs"]):
                removed += len(section["paragraphs"]) - len(kept)
                changed.add(file)
            section["paragraphs"] = kept
    return changed, removed, trimmed


def apply_retry(context: AgentContext, produce: Callable[[], object], fixers: dict[str, ItemFixer]) -> str:
    """Act on the retry instructions; returns the completion note saying what changed.

    ``fixers`` may correct an item of a collection (e.g. re-quote a claim's evidence) or return
    None to drop it. When the rejected files are gone, or a problem names no item, the artifacts
    are regenerated first (deterministically, so the pointers still name the same items).
    """
    targets = retry_targets(context.task.retry_instructions or {})
    files = _previous_files(context)
    notes: list[str] = []
    unmapped = sorted(name for name, found in targets.items()
                      if name not in files or any(not _split(parts) for parts, _ in found))
    if not files or unmapped:
        produce()
        files = _previous_files(context)
        notes.append("regenerated the artifacts" + (f" (problems in {', '.join(unmapped)} name no item)"
                                                    if unmapped else ""))
    dropped: set[str] = set()
    changed = {name for name in targets if name in files}
    for name in sorted(changed):
        grouped: dict[tuple[str, ...], dict[int, list[Target]]] = {}
        for parts, message in targets[name]:
            where = _split(parts)
            if where:
                grouped.setdefault(where[0], {}).setdefault(where[1], []).append((where[2], message))
        for path, by_index in grouped.items():
            items: Any = files[name]
            for part in path:
                items = items[int(part)] if isinstance(items, list) else items.get(part, [])
            valid = [i for i in by_index if isinstance(items, list) and i < len(items)]
            for index in sorted(valid, reverse=True):
                old = items[index]
                fixed = _fix_item(old, by_index[index], fixers.get(path[-1]))
                label = f"{name} /{'/'.join(path)}/{index}" + (f" ({old['id']})" if "id" in old else "")
                if fixed is None:
                    del items[index]
                    dropped.update([old["id"]] if isinstance(old.get("id"), str) else [])
                    notes.append(f"dropped {label}")
                else:
                    items[index] = fixed
                    notes.append(f"corrected {label}")
    touched, removed, trimmed = _cascade(files, context.task.agent, dropped)
    if removed or trimmed:
        notes.append(f"removed {removed} item(s) about dropped items and dropped ids from {trimmed} other(s)")
    changed |= touched
    for name, doc in sorted(files.items()):
        if name in changed or not (context.folder / name).exists():
            context.write_artifact(name, doc)
    return "Retry: " + ("; ".join(notes) if notes else "nothing named could be changed") + "."


def complete_retry(
    context: AgentContext, produce: Callable[[], object], summary: str, fixers: dict[str, ItemFixer] | None = None
) -> bool:
    """On a retry: act on the instructions (:func:`apply_retry`), complete with ``summary`` and
    :func:`apply_retry`'s note, and return True. On a first attempt: do nothing, return False."""
    if not context.task.retry_instructions:
        return False
    context.complete("completed", summary, apply_retry(context, produce, fixers or {}))
    return True

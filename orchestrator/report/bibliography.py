"""Bibliography exports (BibTeX, CSL-JSON) and the reference line shown in reports.

Upstream promised a BibTeX export it never shipped. LaTeX escaping is delegated to
pylatexenc (both directions are maintained there), so titles such as "R&D at 100%"
or authors such as "Kurt Gödel" survive a round trip through any BibTeX parser.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

from pylatexenc.latexencode import UnicodeToLatexEncoder

from orchestrator.model.terms import STOPWORDS
from orchestrator.report.publication import publication

BIBTEX_TYPES = {
    "journal-article": "article", "conference-paper": "inproceedings", "preprint": "misc",
    "book": "book", "book-chapter": "incollection", "thesis": "phdthesis", "report": "techreport",
    "dataset": "misc", "web-page": "misc", "news-article": "article", "documentation": "manual",
    "local-document": "misc", "other": "misc",
}
#: Which BibTeX field holds the source's venue, per entry type.
VENUE_FIELD = {"article": "journal", "inproceedings": "booktitle", "incollection": "booktitle"}
#: Which BibTeX field holds the publisher, per entry type.
PUBLISHER_FIELD = {"phdthesis": "school", "techreport": "institution", "manual": "organization"}
#: Fields BibTeX's standard styles require per entry type; an entry that lacks one is written as @misc
#: (with what is known), so the .bib formats without errors in every style.
REQUIRED_FIELDS = {
    "article": ("author", "title", "journal", "year"),
    "inproceedings": ("author", "title", "booktitle", "year"),
    "incollection": ("author", "title", "booktitle", "publisher", "year"),
    "book": ("author", "title", "publisher", "year"),
    "phdthesis": ("author", "title", "school", "year"),
    "techreport": ("author", "title", "institution", "year"),
    "manual": ("title",),
}
_TYPE_NOTES = {"journal-article": "Journal article", "conference-paper": "Conference paper", "book": "Book",
               "book-chapter": "Book chapter", "thesis": "Thesis", "report": "Report", "news-article": "News article"}
CSL_TYPES = {
    "journal-article": "article-journal", "conference-paper": "paper-conference", "preprint": "article",
    "book": "book", "book-chapter": "chapter", "thesis": "thesis", "report": "report", "dataset": "dataset",
    "web-page": "webpage", "news-article": "article-newspaper", "documentation": "document",
    "local-document": "document", "other": "document",
}
_PARTICLES = frozenset({"van", "von", "der", "den", "de", "del", "della", "di", "da", "du", "la", "le", "dos",
                        "das", "ten", "ter", "zu", "bin", "al"})
_SUFFIXES = frozenset({"jr", "jr.", "sr", "sr.", "ii", "iii", "iv"})
_CORPORATE = frozenset({"organization", "organisation", "institute", "university", "association", "society",
                        "agency", "committee", "council", "inc", "inc.", "ltd", "ltd.", "llc", "corporation",
                        "foundation", "group", "consortium", "department", "office", "bank", "commission"})
_KEY_RE = re.compile(r"^[A-Za-z0-9_:.\-/]{1,64}$")


@cache
def _encoder() -> UnicodeToLatexEncoder:
    return UnicodeToLatexEncoder(
        non_ascii_only=False, replacement_latex_protection="braces-almost-all",
        unknown_char_policy="keep", unknown_char_warning=False,
    )


def latex_escape(text: str) -> str:
    """Text -> LaTeX that typesets as the same characters (specials and accents as macros)."""
    return str(_encoder().unicode_to_latex(" ".join(text.split())))


def split_name(name: str) -> dict[str, str]:
    """'Ada Lovelace' / 'Lovelace, Ada' / 'Johannes van der Waals' -> CSL name parts.

    Organisations and single words become ``{"literal": name}`` so they are never inverted.
    """
    name = " ".join(name.split())
    if "," in name:
        family, _, given = name.partition(",")
        return {"family": family.strip(), "given": given.strip()} if given.strip() else {"literal": family}
    tokens = name.split(" ")
    if len(tokens) == 1 or any(t.lower().strip(",") in _CORPORATE for t in tokens):
        return {"literal": name}
    parts: dict[str, str] = {}
    if tokens[-1].lower() in _SUFFIXES and len(tokens) > 2:
        parts["suffix"] = tokens.pop()
    start = len(tokens) - 1
    while start > 1 and tokens[start - 1] in _PARTICLES:
        start -= 1
    return {"family": " ".join(tokens[start:]), "given": " ".join(tokens[:start]), **parts}


def _ascii_word(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]", "", folded.lower())


def _year(source: Mapping[str, Any]) -> int | None:
    if isinstance(source.get("year"), int):
        return int(source["year"])
    published = source.get("published")
    return int(published[:4]) if isinstance(published, str) and published[:4].isdigit() else None


def _base_key(source: Mapping[str, Any]) -> str:
    custom = (source.get("extra") or {}).get("bibtex_key")
    if isinstance(custom, str) and _KEY_RE.fullmatch(custom):
        return custom
    authors = source.get("authors") or []
    first = split_name(authors[0]) if authors else {}
    who = _ascii_word(first.get("family") or first.get("literal", "").split(" ")[0]) if first else ""
    words = [_ascii_word(w) for w in str(source.get("title", "")).split()]
    content = [w for w in words if w and w not in STOPWORDS]
    word = content[0] if content else ""
    if not who and isinstance(source.get("local_path"), str):  # a user's own file: known by its name
        who = _ascii_word(PurePath(source["local_path"]).stem)
        return (who or word or "source") + str(_year(source) or "")
    if not who:  # no author: two title words, so "Data model: ..." and "Data sharing ..." differ
        return ("".join(content[:2]) or "source") + str(_year(source) or "")
    return who + str(_year(source) or "") + word


def bibtex_keys(sources: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Source id -> citation key: readable (author+year+word), unique, independent of input order."""
    groups: dict[str, list[str]] = defaultdict(list)
    for source in sources:
        groups[_base_key(source)].append(str(source["id"]))
    keys = {}
    for base, ids in groups.items():
        for index, source_id in enumerate(sorted(ids)):
            keys[source_id] = base if index == 0 else f"{base}{_suffix(index)}"
    taken = set(keys.values())
    if len(taken) != len(keys):  # a suffixed key met another base: fall back to the id itself
        keys = {sid: f"{key}-{_ascii_word(sid)}" for sid, key in keys.items()}
    return keys


def _suffix(index: int) -> str:
    letters = ""
    while index > 0:
        index, rest = divmod(index, 26)
        letters = "abcdefghijklmnopqrstuvwxyz"[rest] + letters
    return letters or "a"


def _protect_title(title: str) -> str:
    """Escape, and brace words with inner capitals (BERT, iPhone) so styles keep their case."""
    words = []
    for word in " ".join(title.split()).split(" "):
        escaped = latex_escape(word)
        words.append(f"{{{escaped}}}" if any(ch.isupper() for ch in word[1:]) else escaped)
    return " ".join(words)


def _bib_name(name: str) -> str:
    parts = split_name(name)
    if "literal" in parts:
        return "{" + latex_escape(parts["literal"]) + "}"
    text = latex_escape(parts["family"])
    if "suffix" in parts:
        text += ", " + latex_escape(parts["suffix"])
    return f"{text}, {latex_escape(parts['given'])}"


def _verbatim(value: str) -> str:
    """URLs and DOIs are verbatim fields: no escaping, but braces must not unbalance the entry."""
    return value.replace("{", "%7B").replace("}", "%7D").replace("\\", "%5C")


def _bibtex_fields(source: Mapping[str, Any], kind: str) -> list[tuple[str, str]]:
    fields: list[tuple[str, str]] = []
    if source.get("authors"):
        fields.append(("author", " and ".join(_bib_name(a) for a in source["authors"])))
    fields.append(("title", _protect_title(str(source.get("title", "")))))
    printed = publication(source)
    if printed.get("venue"):
        fields.append((VENUE_FIELD.get(kind, "howpublished"), latex_escape(printed["venue"])))
    fields += [(name, latex_escape(printed[key])) for key, name in (("volume", "volume"), ("issue", "number"),
                                                                     ("pages", "pages")) if printed.get(key)]
    if _year(source):
        fields.append(("year", str(_year(source))))
    if source.get("publisher"):
        fields.append((PUBLISHER_FIELD.get(kind, "publisher"), latex_escape(source["publisher"])))
    if source.get("doi"):
        fields.append(("doi", _verbatim(source["doi"])))
    if source.get("arxiv_id"):
        fields += [("eprint", _verbatim(source["arxiv_id"])), ("archiveprefix", "arXiv")]
    if source.get("url") or source.get("pdf_url"):
        fields.append(("url", _verbatim(source.get("url") or source["pdf_url"])))
    if isinstance(source.get("accessed_at"), str):
        fields.append(("urldate", source["accessed_at"][:10]))
    if source.get("type") == "preprint":
        fields.append(("note", "Preprint"))
    return fields


def to_bibtex(sources: Iterable[Mapping[str, Any]]) -> str:
    """One BibTeX entry per source, in the given order."""
    sources = list(sources)
    keys = bibtex_keys(sources)
    entries = []
    for source in sources:
        kind = BIBTEX_TYPES.get(str(source.get("type")), "misc")
        fields = _bibtex_fields(source, kind)
        if not {name for name, _ in fields} >= set(REQUIRED_FIELDS.get(kind, ())):
            kind = "misc"
            fields = _bibtex_fields(source, kind)
            if str(source.get("type")) in _TYPE_NOTES:
                fields.append(("note", _TYPE_NOTES[str(source.get("type"))]))
        body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
        entries.append(f"@{kind}{{{keys[str(source['id'])]},\n{body}\n}}\n")
    return "\n".join(entries)


def _date_parts(value: Any) -> dict[str, list[list[int]]] | None:
    if not isinstance(value, str):
        return None
    parts = [int(p) for p in re.findall(r"\d+", value[:10])][:3]
    return {"date-parts": [parts]} if parts else None


def to_csl_json(sources: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """CSL-JSON items (as Zotero and citeproc import them), one per source, in the given order."""
    items = []
    for source in sources:
        kind = str(source.get("type"))
        item: dict[str, Any] = {"id": str(source["id"]), "type": CSL_TYPES.get(kind, "document"),
                                "title": str(source.get("title", ""))}
        if source.get("authors"):
            item["author"] = [split_name(a) for a in source["authors"]]
        year = _year(source)
        issued = _date_parts(source.get("published")) or ({"date-parts": [[year]]} if year else None)
        if issued:
            item["issued"] = issued
        optional = {"DOI": source.get("doi"), "URL": source.get("url") or source.get("pdf_url"),
                    "container-title": source.get("venue"), "publisher": source.get("publisher"),
                    "abstract": source.get("abstract"), "language": source.get("language")}
        printed = publication(source)
        optional |= {"container-title": printed.get("venue"), "volume": printed.get("volume"),
                     "issue": printed.get("issue"), "page": (printed.get("pages") or "").replace("--", "-")}
        item.update({k: v for k, v in optional.items() if v})
        if source.get("arxiv_id"):
            item["number"] = f"arXiv:{source['arxiv_id']}"
            item.setdefault("publisher", "arXiv")
        accessed = _date_parts(source.get("accessed_at"))
        if accessed:
            item["accessed"] = accessed
        items.append(item)
    return items


def doi_url(doi: str) -> str:
    doi = re.sub(r"^(https?://(dx\.)?doi\.org/|doi:)", "", doi.strip(), flags=re.IGNORECASE)
    return "https://doi.org/" + quote(doi, safe="/:;()._-")


def display_authors(names: list[str], limit: int = 6) -> str:
    """'Lovelace, A., Babbage, C., & Somerville, M.' (et al. past ``limit``)."""
    shown = []
    for name in names[:limit]:
        parts = split_name(name)
        if "literal" in parts:
            shown.append(parts["literal"])
        else:
            initials = " ".join(f"{g[0]}." for g in re.split(r"[\s-]+", parts["given"]) if g)
            shown.append(f"{parts['family']}, {initials}" if initials else parts["family"])
    if len(names) > limit:
        return ", ".join(shown) + ", et al."
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + ", & " + shown[-1]


def shown_path(local_path: str) -> str:
    """A local file as a reader knows it: its folder and name, not this machine's absolute path."""
    path = PurePath(local_path)
    return path.name if path.parent.name in ("", ".") else f"{path.parent.name}/{path.name}"


def reference_parts(source: Mapping[str, Any]) -> dict[str, str]:
    """The pieces of a human-readable reference; renderers add markup and escaping."""
    parts = {"title": " ".join(str(source.get("title", "")).split())}
    if source.get("authors"):
        parts["authors"] = display_authors(list(source["authors"]))
    year = _year(source)
    if year or not source.get("local_path"):  # a user's own file has no publication date to miss
        parts["year"] = str(year) if year else "n.d."
    for field in ("venue", "publisher"):
        if source.get(field):
            parts[field] = str(source[field])
    if source.get("doi"):
        parts["link"] = doi_url(str(source["doi"]))
    elif source.get("arxiv_id"):
        parts["link"] = f"https://arxiv.org/abs/{quote(str(source['arxiv_id']), safe='/.')}"
    elif source.get("url") or source.get("pdf_url"):
        parts["link"] = str(source.get("url") or source.get("pdf_url"))
    elif source.get("local_path"):
        parts["location"] = shown_path(str(source["local_path"]))
    parts["kind"] = str(source.get("type", "other")).replace("-", " ")
    if source.get("peer_reviewed") is True:
        parts["kind"] += ", peer reviewed"
    return parts

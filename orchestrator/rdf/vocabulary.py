"""The RDF vocabulary of the graph: namespaces, node IRIs, and the table of fields to predicates.

Why table-driven: the same field table converts JSON fields to predicates (rdf/convert.py) and
maps a SHACL result's path back to the JSON field (rdf/shacl_report.py), so a violation points at
the exact place in the agent's file. Classes and files per kind come from model/kinds.py.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import quote, unquote

from rdflib import Literal, Namespace, URIRef
from rdflib.namespace import DCTERMS, RDFS, SKOS

from orchestrator.model.kinds import COLLECTIONS, EVIDENCE_PREVIEW_FIELD, EVIDENCE_RDF_CLASS, KINDS

CC = Namespace("https://cconductor.dev/ontology#")
BIBO = Namespace("http://purl.org/ontology/bibo/")
CITO = Namespace("http://purl.org/spar/cito/")
DCMITYPE = Namespace("http://purl.org/dc/dcmitype/")

Triple = tuple[URIRef, URIRef, URIRef | Literal]
KindOf = Callable[[str], str | None]

#: contribution ``items`` key → node kind (the kind is the IRI segment).
ITEM_KINDS: dict[str, str] = COLLECTIONS
#: kind → (artifact file, top-level key): the fallback origin when an item lacks provenance.
KIND_FILE: dict[str, tuple[str, str]] = {k.name: (k.artifact_file, k.collection) for k in KINDS}
KIND_CLASS: dict[str, URIRef] = {k.name: CC[k.rdf_class] for k in KINDS} | {"evidence": CC[EVIDENCE_RDF_CLASS]}
SOURCE_TYPE_CLASS: dict[str, URIRef] = {
    "journal-article": BIBO.AcademicArticle, "conference-paper": BIBO.AcademicArticle,
    "preprint": BIBO.Manuscript, "book": BIBO.Book, "book-chapter": BIBO.Chapter,
    "thesis": BIBO.Thesis, "report": BIBO.Report, "dataset": DCMITYPE.Dataset,
    "web-page": BIBO.Webpage, "news-article": BIBO.Article, "documentation": BIBO.Manual,
    "local-document": BIBO.Document, "other": BIBO.Document,
}
_PREVIEW_FIELD = {k.name: k.preview_field for k in KINDS} | {"evidence": EVIDENCE_PREVIEW_FIELD}

# (JSON path inside the item, predicate, conversion). Conversions: str int dec bool date
# datetime uri json strs (list of str); ref:<kind> / refs:<kind> are IRI references, where
# kind "node" means entity or claim (decided by kind_of) and "sub-question" is resolved apart.
STR, INT, DEC, BOOL = "str", "int", "dec", "bool"
_S, _I, _D, _B = STR, INT, DEC, BOOL
FIELDS: dict[str, tuple[tuple[tuple[str, ...], URIRef, str], ...]] = {
    "source": (
        (("title",), DCTERMS.title, _S), (("type",), CC.sourceType, _S),
        (("authors",), DCTERMS.creator, "strs"), (("year",), CC.year, _I), (("venue",), CC.venue, _S),
        (("publisher",), DCTERMS.publisher, _S), (("peer_reviewed",), CC.peerReviewed, _B),
        (("doi",), BIBO.doi, _S), (("url",), BIBO.uri, "uri"), (("pdf_url",), CC.pdfUrl, "uri"),
        (("arxiv_id",), CC.arxivId, _S), (("local_path",), CC.localPath, _S),
        (("content_sha256",), CC.contentSha256, _S), (("page_labels",), CC.pageLabels, "json"),
        (("abstract",), DCTERMS.abstract, _S),
        (("published",), DCTERMS.issued, "date"), (("accessed_at",), CC.accessedAt, "datetime"),
        (("citation_count",), CC.citationCount, _I), (("language",), DCTERMS.language, _S),
        (("extra",), CC.extra, "json"),
    ),
    "claim": (
        (("statement",), CC.statement, _S), (("confidence",), CC.confidence, _D),
        (("priority",), CC.priority, _S), (("category",), CC.category, _S),
        (("sub_question_id",), CC.subQuestion, "ref:sub-question"),
        (("entity_ids",), DCTERMS.subject, "refs:entity"), (("tags",), CC.tag, "strs"),
        (("extra",), CC.extra, "json"),
    ),
    "evidence": (
        (("source_id",), CITO.citesAsEvidence, "ref:source"), (("snippet",), CC.snippet, _S),
        (("locator", "page"), CC.page, _I), (("locator", "section"), CC.section, _S),
        (("locator", "char_start"), CC.charStart, _I), (("locator", "char_end"), CC.charEnd, _I),
        (("locator", "table"), CC.citesTable, "ref:table"), (("locator", "figure"), CC.citesFigure, "ref:figure"),
        (("note",), CC.note, _S), (("verification", "verified"), CC.verified, _B),
        (("verification", "score"), CC.matchScore, _D), (("verification", "page"), CC.matchedPage, _I),
    ),
    "entity": (
        (("name",), RDFS.label, _S), (("type",), CC.entityType, _S),
        (("description",), DCTERMS.description, _S), (("aliases",), SKOS.altLabel, "strs"),
        (("extra",), CC.extra, "json"),
    ),
    "relationship": (
        (("subject",), CC.subject, "ref:node"), (("predicate",), CC.predicate, _S),
        (("object",), CC.object, "ref:node"), (("confidence",), CC.confidence, _D),
        (("claim_ids",), CC.supportedBy, "refs:claim"),
    ),
    "gap": (
        (("description",), DCTERMS.description, _S), (("priority",), CC.priority, _S),
        (("sub_question_id",), CC.subQuestion, "ref:sub-question"),
        (("suggested_queries",), CC.suggestedQuery, "strs"),
    ),
    "contradiction": (
        (("claim_ids",), CC.involvesClaim, "refs:claim"), (("description",), DCTERMS.description, _S),
        (("status",), CC.status, _S), (("resolution",), CC.resolution, _S),
    ),
    "key-finding": (
        (("statement",), CC.statement, _S), (("claim_ids",), CC.supportedBy, "refs:claim"),
        (("importance",), CC.importance, _S),
    ),
    "sub-question": (
        (("question",), CC.question, _S), (("priority",), CC.priority, _S),
        (("keywords",), CC.keyword, "strs"), (("facet",), CC.facet, _S),
    ),
    "confidence-score": (
        (("claim_id",), CC.aboutClaim, "ref:claim"), (("confidence",), CC.confidence, _D),
        (("status",), CC.status, _S), (("rationale",), CC.rationale, _S),
        (("supporting_source_ids",), CC.supportingSource, "refs:source"),
    ),
    "section": (
        (("source_id",), DCTERMS.isPartOf, "ref:source"), (("title",), DCTERMS.title, _S),
        (("number",), CC.sectionNumber, _S), (("level",), CC.level, _I), (("page",), CC.page, _I),
        (("char_start",), CC.charStart, _I), (("extra",), CC.extra, "json"),
    ),
    "figure": (
        (("source_id",), DCTERMS.isPartOf, "ref:source"), (("label",), RDFS.label, _S), (("page",), CC.page, _I),
        (("bbox",), CC.region, "json"), (("image_sha256",), CC.imageSha256, _S),
        (("section_id",), CC.inSection, "ref:section"), (("description",), DCTERMS.description, _S),
        (("extra",), CC.extra, "json"),
    ),
    "table": (
        (("source_id",), DCTERMS.isPartOf, "ref:source"), (("label",), RDFS.label, _S), (("page",), CC.page, _I),
        (("bbox",), CC.region, "json"), (("data_sha256",), CC.dataSha256, _S),
        (("columns",), CC.columnHeader, "strs"), (("row_count",), CC.rowCount, _I),
        (("section_id",), CC.inSection, "ref:section"), (("extra",), CC.extra, "json"),
    ),
    "caption": (
        (("source_id",), DCTERMS.isPartOf, "ref:source"), (("text",), CC.captionText, _S), (("page",), CC.page, _I),
        (("describes",), CC.describes, "ref:figure|table"), (("char_start",), CC.charStart, _I),
        (("char_end",), CC.charEnd, _I), (("extra",), CC.extra, "json"),
    ),
    "coverage": (
        (("sub_question_id",), CC.subQuestion, "ref:sub-question"), (("status",), CC.status, _S),
        (("claim_ids",), CC.supportedBy, "refs:claim"), (("notes",), CC.note, _S),
    ),
}
_FIELD_PATH = {(kind, pred): path for kind, fields in FIELDS.items() for path, pred, _ in fields}


def field_path(kind: str, predicate: URIRef) -> tuple[str, ...] | None:
    """The JSON path (inside an item of ``kind``) that ``predicate`` was converted from."""
    return _FIELD_PATH.get((kind, predicate))


def agent_iri(agent: str) -> URIRef:
    """The agent's IRI; it also names the agent's named graph."""
    return URIRef(f"urn:cconductor:agent:{agent}")


def session_iri(session_id: str) -> URIRef:
    return URIRef(f"urn:cconductor:session:{quote(session_id, safe='')}")


def node_iri(kind: str, global_id: str) -> URIRef:
    """``urn:cconductor:<kind>:<global id>``; the ':' of the id is kept, anything unsafe is %-encoded."""
    return URIRef(f"urn:cconductor:{kind}:{quote(global_id, safe=':')}")


def parse_node_iri(iri: str) -> tuple[str, str] | None:
    """Inverse of :func:`node_iri` (and of evidence IRIs, whose id is ``<claim id>/<n>``)."""
    if not iri.startswith("urn:cconductor:"):
        return None
    kind, _, rest = iri[len("urn:cconductor:"):].partition(":")
    return (kind, unquote(rest)) if rest else None

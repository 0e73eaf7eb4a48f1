"""The one table of item kinds: every layer (merge, RDF, schemas, views, reports) reads it.

A kind is one sort of graph item an agent contributes (a source, a claim, ...). Adding a
kind, or a reference between kinds, is one entry here; the merge's reference resolution,
the RDF classes, the fallback provenance of a node and the per-collection schema check
all follow from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Reference:
    """A field of an item that names other items.

    ``path`` uses ``*`` for "each element of a list". A strict reference that resolves to
    nothing rejects the merge; a lenient one (plan ids are advisory) is kept with a warning.
    """

    path: str
    targets: tuple[str, ...]
    strict: bool = True


@dataclass(frozen=True)
class Kind:
    """One item kind: where it lives in JSON, in the artifact folder and in RDF."""

    collection: str  # top-level key in artifacts and in the unified view ("key_findings")
    name: str  # node kind, the IRI segment ("key-finding")
    artifact_file: str  # the artifact file that holds it by convention
    rdf_class: str  # local name of its class in the cconductor ontology
    preview_field: str  # the field that names an item in messages
    references: tuple[Reference, ...] = ()

    @property
    def schema_file(self) -> str:
        """The artifact schema that validates a list of this kind (wherever the list appears)."""
        return self.artifact_file


KINDS: tuple[Kind, ...] = (
    Kind("sources", "source", "sources.json", "Source", "title"),
    # A document's structure (docs/data-model.md#documents): before claims, whose evidence may cite a table or figure.
    Kind("sections", "section", "sections.json", "Section", "title", (
        Reference("source_id", ("sources",)),
    )),
    Kind("figures", "figure", "figures.json", "Figure", "label", (
        Reference("source_id", ("sources",)),
        Reference("section_id", ("sections",)),
    )),
    Kind("tables", "table", "tables.json", "Table", "label", (
        Reference("source_id", ("sources",)),
        Reference("section_id", ("sections",)),
    )),
    Kind("captions", "caption", "captions.json", "Caption", "text", (
        Reference("source_id", ("sources",)),
        Reference("describes", ("figures", "tables")),
    )),
    Kind("claims", "claim", "claims.json", "Claim", "statement", (
        Reference("evidence/*/source_id", ("sources",)),
        Reference("evidence/*/locator/table", ("tables",)),
        Reference("evidence/*/locator/figure", ("figures",)),
        Reference("entity_ids/*", ("entities",)),
        Reference("sub_question_id", ("sub_questions",), strict=False),
    )),
    Kind("entities", "entity", "entities.json", "Entity", "name"),
    Kind("relationships", "relationship", "relationships.json", "Relationship", "predicate", (
        Reference("subject", ("entities", "claims")),
        Reference("object", ("entities", "claims")),
        Reference("claim_ids/*", ("claims",)),
    )),
    Kind("gaps", "gap", "gaps.json", "Gap", "description", (
        Reference("sub_question_id", ("sub_questions",), strict=False),
    )),
    Kind("contradictions", "contradiction", "contradictions.json", "Contradiction", "description", (
        Reference("claim_ids/*", ("claims",)),
    )),
    Kind("key_findings", "key-finding", "key-findings.json", "KeyFinding", "statement", (
        Reference("claim_ids/*", ("claims",)),
    )),
    Kind("confidence_scores", "confidence-score", "confidence-scores.json", "ConfidenceAssessment", "claim_id", (
        Reference("claim_id", ("claims",)),
        Reference("supporting_source_ids/*", ("sources",)),
    )),
    Kind("coverage", "coverage", "coverage.json", "CoverageAssessment", "sub_question_id", (
        Reference("sub_question_id", ("sub_questions",), strict=False),
        Reference("claim_ids/*", ("claims",)),
    )),
    Kind("sub_questions", "sub-question", "plan.json", "SubQuestion", "question"),
)

#: Evidence is a node of its own in RDF but lives inside a claim in JSON.
EVIDENCE_RDF_CLASS = "Evidence"
EVIDENCE_PREVIEW_FIELD = "snippet"

BY_COLLECTION: dict[str, Kind] = {k.collection: k for k in KINDS}
BY_NAME: dict[str, Kind] = {k.name: k for k in KINDS}

#: The collections that describe a document's structure (sections, figures, tables, captions).
DOCUMENT_COLLECTIONS: tuple[str, ...] = ("sections", "figures", "tables", "captions")

#: collection key -> node kind, in the table's order (the order of merges and views).
COLLECTIONS: dict[str, str] = {k.collection: k.name for k in KINDS}


def wrap_for_schema(collection: str, items: Any) -> tuple[dict[str, Any], str]:
    """The document and schema file that check a collection found in any artifact file.

    ``plan.json``'s schema also requires a query, so a bare list of sub-questions gets one.
    """
    kind = BY_COLLECTION[collection]
    wrapper: dict[str, Any] = {collection: items}
    if collection == "sub_questions":
        wrapper["query"] = "-"
    return wrapper, kind.schema_file

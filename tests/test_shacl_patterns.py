"""Every anchored sh:pattern means "the whole value", as SHACL's XPath regex does, under pyshacl.

pyshacl evaluates sh:pattern with Python's :mod:`re`, where ``$`` also matches before a final newline:
``"10.1234/abc\\n"`` passed ``^10\\.[0-9]{4,9}/\\S+$`` and was stored with its newline. Each shape with
an anchored pattern is tried here with a valid value, the same value with a trailing newline (and
other whitespace), directly against the shapes graph (any new anchored pattern must list an example).
"""

from __future__ import annotations

import pyshacl
import pytest
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF

from orchestrator.model.layout import SessionPaths, resource_dir
from orchestrator.rdf.shacl import CCSH, SH, shapes
from tests.conftest import merge_pending, sample_source, write_artifacts

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:rdflib")

#: A valid value for each property shape whose sh:pattern is anchored.
VALID = {
    CCSH["SourceShape-doi"]: "10.1234/abc",
    CCSH["SourceShape-contentSha256"]: "ab" * 32,
    CCSH["FigureShape-image"]: "cd" * 32,
    CCSH["TableShape-data"]: "ef" * 32,
}


def _anchored() -> dict[URIRef, tuple[URIRef, URIRef]]:
    """Each property shape with an anchored pattern -> (its path, the class its node shape targets)."""
    g = shapes().graph
    found = {}
    for shape, pattern in g.subject_objects(SH.pattern):
        if not (str(pattern).startswith("^") or str(pattern).endswith("$")):
            continue
        assert isinstance(shape, URIRef)
        [owner] = list(g.subjects(SH.property, shape))
        path, target = g.value(shape, SH.path), g.value(owner, SH.targetClass)
        assert isinstance(path, URIRef) and isinstance(target, URIRef)
        found[shape] = (path, target)
    return found


def _violations(shape: URIRef, value: str) -> list[str]:
    path, target = _anchored()[shape]
    data = Graph()
    node = URIRef("urn:test:node")
    data.add((node, RDF.type, target))
    data.add((node, path, Literal(value)))
    _, report, _ = pyshacl.validate(data, shacl_graph=shapes().graph, advanced=False)
    return [str(component) for result in report.subjects(SH.sourceShape, shape)
            for component in report.objects(result, SH.sourceConstraintComponent)]


def test_every_anchored_pattern_has_an_example() -> None:
    assert set(_anchored()) == set(VALID)


@pytest.mark.parametrize("shape", list(VALID), ids=[s.rsplit("#", 1)[-1] for s in VALID])
@pytest.mark.parametrize("suffix", ["\n", " ", "\t", "\r\n", "\n\n"], ids=["lf", "space", "tab", "crlf", "lflf"])
def test_a_value_with_trailing_whitespace_is_rejected(shape: URIRef, suffix: str) -> None:
    assert _violations(shape, VALID[shape]) == []
    assert _violations(shape, VALID[shape] + suffix) != []
    assert _violations(shape, suffix + VALID[shape]) != []


def test_the_shapes_file_keeps_standard_patterns() -> None:
    """The rewriting is for pyshacl only: shapes.ttl holds SHACL's own (XPath) patterns."""
    text = (resource_dir("ontology") / "shapes.ttl").read_text(encoding="utf-8")
    assert "\\\\Z" not in text and '"^[0-9a-f]{64}$"' in text


@pytest.mark.parametrize("doi, status", [("10.1234/abc", "merged"), ("10.1234/abc\n", "rejected"),
                                         ("10.1234/ab c", "rejected")])
def test_a_doi_with_a_trailing_newline_is_rejected_at_merge(session: SessionPaths, doi: str, status: str) -> None:
    write_artifacts(session, "agent-a", {"sources.json": {"sources": [sample_source(doi=doi)]}})
    assert merge_pending(session) == {"agent-a": status}
    if status == "rejected":
        text = session.retry_instructions("agent-a").read_text(encoding="utf-8")
        assert "/sources/0/doi" in text and "not a bare DOI" in text


def test_the_repair_memory_refuses_names_with_a_trailing_newline() -> None:
    """What crosses sessions is checked whole: a rule or shape name with a newline after it is refused."""
    from orchestrator.memory.vocabulary import signature_allowed

    def shacl(rule: str, shape: str) -> bool:
        return signature_allowed("shacl", "claims.json", rule, [("shape", shape),
                                                                ("components", "MinCountConstraintComponent")])

    assert shacl("shacl.MinCountConstraintComponent", "ClaimShape-statement")
    assert not shacl("shacl.MinCountConstraintComponent\n", "ClaimShape-statement")
    assert not shacl("shacl.MinCountConstraintComponent", "ClaimShape-statement\n")

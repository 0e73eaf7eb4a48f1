"""Canonical identifiers: the same work is recognised however an agent or a provider writes it."""

from __future__ import annotations

import pytest

from orchestrator.model.scholarly_ids import DisjointSets, clean_arxiv_id, clean_doi, clean_url


@pytest.mark.parametrize("written", ["10.1000/XYZ", "doi:10.1000/xyz", "https://doi.org/10.1000/xyz.",
                                     "https://dx.doi.org/10.1000/xyz"])
def test_doi_forms(written: str) -> None:
    assert clean_doi(written) == "10.1000/xyz"


@pytest.mark.parametrize("written", ["1706.03762", "1706.03762v5", "arXiv:1706.03762", "https://arxiv.org/abs/1706.03762v2",
                                     "http://export.arxiv.org/pdf/1706.03762.pdf", "10.48550/arXiv.1706.03762"])
def test_arxiv_forms(written: str) -> None:
    assert clean_arxiv_id(written) == "1706.03762"


def test_old_style_arxiv_ids_and_garbage() -> None:
    assert clean_arxiv_id("hep-th/9901001v2") == "hep-th/9901001"
    assert clean_arxiv_id("not an id") is None and clean_doi("no doi here") is None and clean_doi(None) is None


def test_urls_compare_without_scheme_www_fragment_or_trailing_slash() -> None:
    expected = "//example.org/paper"
    assert clean_url("https://www.Example.org/paper/#top") == clean_url("http://example.org/paper") == expected
    assert clean_url("https://example.org/a?x=1") != clean_url("https://example.org/a?x=2")
    assert clean_url("  ") is None


def test_disjoint_sets_keep_the_smallest_index_as_representative() -> None:
    sets = DisjointSets(6)
    sets.union(4, 2)
    sets.union(5, 4)
    sets.union(1, 3)
    assert [sets.find(i) for i in range(6)] == [0, 1, 2, 1, 2, 2]

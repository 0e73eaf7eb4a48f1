"""The report cites only verified evidence, resolves every number, escapes text, exports bibliographies."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from pylatexenc import latex2text

from orchestrator.contract.schemas import SchemaRegistry
from orchestrator.graph.citations import check_outline, claim_lookup, claim_resolver, find_markers
from orchestrator.graph.quality import score_graph
from orchestrator.graph.quality_gate import gate
from orchestrator.report import build_document, kind_of
from orchestrator.report.bibliography import bibtex_keys, split_name, to_bibtex, to_csl_json
from orchestrator.report.html import render_html
from orchestrator.report.markdown import render_markdown
from orchestrator.run.missions import load_mission

AR = "academic-researcher"
WR = "web-researcher"
SCRIPT_TITLE = "<script>alert('x')</script> & friends"


def _ok(page: int | None, score: float = 100.0) -> dict[str, Any]:
    return {"verified": True, "score": score, "matched_text": "...", "page": page, "reason": "exact match"}


def _claim(cid: str, statement: str, evidence: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    agent, _, local = cid.partition(":")
    return {
        "id": cid,
        "local_id": local,
        "statement": statement,
        "confidence": 0.8,
        "priority": "medium",
        "evidence": evidence,
        "provenance": {"agent": agent},
        **extra,
    }


def make_graph() -> dict[str, Any]:
    """A knowledge graph shaped like ``build_views`` output, with verified and unverified evidence."""
    sources = [
        {
            "id": f"{AR}:S1",
            "type": "journal-article",
            "title": "Engines of Analysis",
            "authors": ["Ada Lovelace", "Charles Babbage"],
            "year": 1843,
            "venue": "Scientific Memoirs",
            "peer_reviewed": True,
            "doi": "10.1000/engines.1843",
            "aliases": [f"{AR}:S1", f"{WR}:S9"],
        },
        {
            "id": f"{WR}:S2",
            "type": "web-page",
            "title": SCRIPT_TITLE,
            "url": "https://example.org/post",
            "aliases": [f"{WR}:S2"],
        },
        {
            "id": f"{AR}:S3",
            "type": "preprint",
            "title": "Unreliable Notes",
            "authors": ["Kurt Gödel"],
            "year": 1931,
            "arxiv_id": "1931.00001",
            "aliases": [f"{AR}:S3"],
        },
        {"id": f"{AR}:S4", "type": "book", "title": "Never Cited", "year": 1900, "aliases": [f"{AR}:S4"]},
    ]
    claims = [
        _claim(
            f"{AR}:C1",
            "The engine computes Bernoulli numbers.",
            [
                {
                    "source_id": f"{AR}:S1",
                    "snippet": "compute the Bernoulli numbers",
                    "locator": {"page": 4},
                    "verification": _ok(4),
                }
            ],
            sub_question_id="research-planner:Q1",
            priority="high",
        ),
        _claim(
            f"{WR}:C2",
            "Analytical engines were discussed online.",
            [
                {"source_id": f"{WR}:S2", "snippet": "engines <b>discussed</b>", "verification": _ok(None)},
                {
                    "source_id": f"{AR}:S1",
                    "snippet": "the engine weaves patterns",
                    "locator": {"page": 7},
                    "verification": _ok(7, 96.5),
                },
            ],
            sub_question_id="Q1",
        ),
        _claim(
            f"{AR}:C3",
            "Every statement is provable.",
            [
                {
                    "source_id": f"{AR}:S3",
                    "snippet": "all is provable",
                    "locator": {"page": 2},
                    "verification": {
                        "verified": False,
                        "score": 40.0,
                        "matched_text": "",
                        "page": None,
                        "reason": "snippet not found in the source text",
                    },
                }
            ],
            confidence=0.3,
        ),
        _claim(
            f"{AR}:C4",
            "Some statements are undecidable.",
            [
                {
                    "source_id": f"{AR}:S3",
                    "snippet": "undecidable propositions",
                    "locator": {"page": 3},
                    "verification": _ok(3),
                }
            ],
            sub_question_id="research-planner:Q2",
            category="logic",
            assessments=[{"confidence": 0.95, "status": "corroborated", "by": "fact-checker"}],
        ),
    ]
    return {
        "schema_version": 1,
        "session": "s-1",
        "generated_at": "2026-11-22T09:30:00.000Z",
        "commit_seq": 7,
        "research-planner": {
            "query": "What can engines compute?",
            "sub_questions": [
                {"id": "Q1", "question": "What did the engine compute?", "priority": "high"},
                {"id": "Q2", "question": "What are the limits of proof?", "priority": "medium"},
                {"id": "Q3", "question": "Who funded the engine?", "priority": "low"},
            ],
        },
        "synthesis-agent": {
            "key_findings": [
                {"statement": "Engines compute numbers.", "claim_ids": [f"{AR}:C1"], "importance": "high"},
                {"statement": "Everything is provable.", "claim_ids": ["C3"], "importance": "high"},
                {"statement": "Limits exist.", "claim_ids": ["C4"], "importance": "medium"},
            ]
        },
        "sources": sources,
        "claims": claims,
        "entities": [],
        "relationships": [],
        "gaps": [
            {
                "id": f"{AR}:gap-1",
                "description": "Funding is unknown.",
                "priority": "high",
                "sub_question_id": "research-planner:Q3",
                "suggested_queries": ["engine funding"],
            }
        ],
        "contradictions": [
            {
                "id": f"{AR}:X1",
                "claim_ids": [f"{AR}:C3", f"{AR}:C4"],
                "description": "Provability disagrees.",
                "status": "open",
            }
        ],
        "stats": {"agents": 4},
    }


SESSION = {
    "id": "s-1",
    "query": "What can engines compute?",
    "status": "completed",
    "iteration": 3,
    "cost_usd": 1.25,
    "agents": {AR: {"attempts": 2, "state": "merged"}, WR: {"attempts": 1, "state": "merged"}},
}
LEDGER = [
    {"seq": 1, "agent": AR, "action": "reject", "attempt": 1},
    {"seq": 2, "agent": AR, "action": "merge", "attempt": 2},
    {"seq": 3, "agent": WR, "action": "merge", "attempt": 1},
]
OUTLINE: dict[str, Any] = {
    "report_outline": {
        "title": "Engines & Limits",
        "summary": "Engines compute [@C1].",
        "sections": [
            {
                "heading": "Key Findings",
                "paragraphs": [
                    {"text": "The engine computes Bernoulli numbers [@academic-researcher:C1; @C2]."},
                    {"text": "Proof has limits [@C4], although some said otherwise [@C3]."},
                ],
            },
            {"heading": "Historical Context", "paragraphs": [{"text": "Engines were discussed [@C2]."}]},
        ],
    }
}


def mission_dict() -> dict[str, Any]:
    return load_mission("academic-research").to_dict()


def render(graph: dict[str, Any] | None = None, **overrides: Any) -> str:
    kwargs: dict[str, Any] = {
        "session": SESSION,
        "quality": None,
        "mission": mission_dict(),
        "outline": None,
        "ledger": LEDGER,
    } | overrides
    return render_markdown(graph or make_graph(), **kwargs)


def sections_of(markdown: str) -> dict[str, str]:
    parts = re.split(r"^## (.+)$", markdown, flags=re.M)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


CITE_RE = re.compile(r"(?<!\\)\[((?:\d+(?:, pp?\. [\d, ]+)?)(?:; \d+(?:, pp?\. [\d, ]+)?)*)\](?!\()")


def citation_numbers(text: str) -> list[int]:
    return [int(ref.split(",")[0]) for match in CITE_RE.finditer(text) for ref in match.group(1).split("; ")]


def bibliography_numbers(markdown: str) -> list[int]:
    return [int(n) for n in re.findall(r'^<a id="ref-(\d+)"></a>\[\1\] ', markdown, flags=re.M)]


# -- markdown ------------------------------------------------------------------------------


@pytest.mark.parametrize("outline", [None, OUTLINE])
def test_markdown_has_every_required_section_in_order(outline: Any) -> None:
    markdown = render(outline=outline)
    headings = list(sections_of(markdown))
    required = mission_dict()["success_criteria"]["required_sections"]
    assert [h for h in headings if h in required] == required
    assert markdown.startswith("# ")


@pytest.mark.parametrize("outline", [None, OUTLINE])
def test_every_citation_number_resolves_to_a_bibliography_entry_numbered_by_first_appearance(
    outline: Any,
) -> None:
    markdown = render(outline=outline)
    body, _, bibliography = markdown.partition("## Bibliography")
    cited = citation_numbers(body)
    listed = bibliography_numbers(bibliography)
    assert cited and set(cited) == set(listed)
    assert listed == list(range(1, len(listed) + 1))
    first_seen = list(dict.fromkeys(cited))
    assert first_seen == sorted(first_seen)


def test_cited_claims_show_their_source_and_page_in_the_evidence_section() -> None:
    markdown = render(outline=OUTLINE)
    evidence = sections_of(markdown)["Evidence"]
    assert "[1, p. 4]" in markdown  # next to the claim in the text
    entry = evidence.split(f"**{AR}:C1**")[1].split("\n- ")[0]
    assert (
        "compute the Bernoulli numbers" in entry
        and "Engines of Analysis, p. 4" in entry
        and "[1, p. 4]" in entry
    )
    c2 = evidence.split(f"**{WR}:C2**")[1].split("\n- ")[0]
    assert "Engines of Analysis, p. 7; match 96.5%" in c2 and "page not given" in c2


def test_unverified_claims_are_never_cited() -> None:
    for outline in (None, OUTLINE):
        markdown = render(outline=outline)
        evidence = sections_of(markdown)["Evidence"]
        assert f"{AR}:C3" not in evidence and "all is provable" not in evidence
        bibliography = sections_of(markdown)["Bibliography"]
        assert "Unreliable Notes" in bibliography  # cited through the verified claim C4
        assert "Never Cited" not in bibliography
    assert "\\[citation needed: C3\\]" in render(outline=OUTLINE)
    assert "Everything is provable" not in render()  # key finding backed only by C3
    graph = make_graph()
    graph["claims"] = [c for c in graph["claims"] if c["id"] == f"{AR}:C3"]
    markdown = render(graph=graph)
    assert citation_numbers(markdown) == [] and "No source is cited." in markdown


def test_outline_sections_fill_required_slots_and_extra_ones_follow() -> None:
    markdown = render(outline=OUTLINE)
    headings = list(sections_of(markdown))
    assert headings.index("Historical Context") == headings.index("Key Findings") + 1
    assert "Engines & Limits" in markdown.splitlines()[0]
    assert "Engines compute" in sections_of(markdown)["Abstract"]
    assert "[1, pp. 4, 7; 2]" in sections_of(markdown)["Key Findings"]


def test_quality_gaps_and_method_sections() -> None:
    graph = make_graph()
    report = score_graph(graph)
    result = gate(report, graph, mission_dict()["success_criteria"])
    markdown = render(quality=report.to_json(result))
    quality = sections_of(markdown)["Quality Assessment"]
    assert f"**{report.score}/100**" in quality and "| Source quality | 30 |" in quality
    assert "min_peer_reviewed_sources" in quality and "**FAIL**" in quality
    gaps = sections_of(markdown)["Research Gaps"]
    assert "Funding is unknown." in gaps and "Q3" in gaps and "under Contradictions" in gaps
    contradictions = sections_of(markdown)["Contradictions"]
    assert "Provability disagrees." in contradictions and "“Every statement is provable.”" in contradictions
    method = sections_of(markdown)["Methodology"]
    assert f"| {AR} | merged | 2 | 1 | 1 |" in method and "academic-researcher" in method
    assert "cost $1.25" in method


def test_markdown_escapes_source_text() -> None:
    markdown = render(outline=OUTLINE)
    assert "<script>" not in markdown and "\\<script\\>" in markdown
    graph = make_graph()
    graph["claims"][0]["statement"] = "Claim [note] with *stars* and | pipes"
    markdown = render(graph=graph)
    assert "\\[note\\]" in markdown and "\\*stars\\*" in markdown


def test_a_sources_own_reference_numbers_never_meet_the_reports() -> None:
    """One numbering: "[79]" of the paper is dropped from prose and elided in quotes; the report's "[n, p. x]" stay."""
    graph = make_graph()
    claim = graph["claims"][0]
    claim["statement"] = "Quality improvement needs leadership [79] and funds [4, 12]."
    markdown = render(graph=graph)
    html = render_html(graph, session=SESSION, quality=None, mission=mission_dict(), outline=None, ledger=LEDGER)
    assert "leadership and funds." in markdown and "[79]" not in markdown and "\\[79\\]" not in markdown
    assert "leadership and funds." in html and "[79]" not in html
    assert citation_numbers(markdown) and max(citation_numbers(markdown)) <= len(bibliography_numbers(markdown))


def test_rendering_is_deterministic() -> None:
    assert render(outline=OUTLINE) == render(outline=OUTLINE)


def test_heading_kinds() -> None:
    assert kind_of("Key findings") == "key_findings" and kind_of("References") == "bibliography"
    assert kind_of("How this research was done") == "methodology" and kind_of("Market Size") == "custom"


def test_custom_section_lists_claims_of_its_category() -> None:
    mission = mission_dict()
    mission["success_criteria"]["required_sections"] = ["Logic", "Unknown Topic", "Bibliography"]
    markdown = render(mission=mission)
    assert "Some statements are undecidable." in sections_of(markdown)["Logic"]
    assert "No section “Unknown Topic” was written" in sections_of(markdown)["Unknown Topic"]


# -- html ----------------------------------------------------------------------------------


def test_html_escapes_source_strings_and_links_citations() -> None:
    page = render_html(
        make_graph(), session=SESSION, quality=None, mission=mission_dict(), outline=OUTLINE, ledger=LEDGER
    )
    assert (
        "<script>" not in page and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; friends" in page
    )
    assert "engines &lt;b&gt;discussed&lt;/b&gt;" in page
    anchors = set(re.findall(r'id="ref-(\d+)"', page))
    links = set(re.findall(r'href="#ref-(\d+)"', page))
    assert links and links == anchors
    external = set(re.findall(r'(?:href|src)="([^#"][^"]*)"', page))
    assert external == {
        "https://doi.org/10.1000/engines.1843",
        "https://example.org/post",
        "https://arxiv.org/abs/1931.00001",
    }
    assert "<script" not in page.lower() and "<link" not in page.lower()


def test_html_has_the_same_sections_as_markdown() -> None:
    kwargs: dict[str, Any] = {
        "session": SESSION,
        "quality": None,
        "mission": mission_dict(),
        "outline": OUTLINE,
        "ledger": LEDGER,
    }
    page = render_html(make_graph(), **kwargs)
    headings = re.findall(r"<h2>(.*?)</h2>", page)
    assert headings == list(sections_of(render_markdown(make_graph(), **kwargs)))


def test_html_never_links_a_javascript_url() -> None:
    graph = make_graph()
    graph["sources"][1]["url"] = "javascript:alert(1)"
    page = render_html(graph, session=SESSION, quality=None, mission=None, outline=None, ledger=None)
    assert 'href="javascript' not in page


# -- citations ----------------------------------------------------------------------------


def test_find_markers() -> None:
    text = "A [@C1] b [@academic-researcher:C3; @C2] c [@ C9] [see @C4] [@C5,C6]"
    assert [refs for _, _, refs in find_markers(text)] == [["C1"], ["academic-researcher:C3", "C2"]]
    start, end, _ = find_markers(text)[0]
    assert text[start:end] == "[@C1]"


def test_check_outline_reports_unresolved_unverified_and_malformed_markers() -> None:
    graph = make_graph()
    outline = copy.deepcopy(OUTLINE)
    outline["report_outline"]["sections"][1]["paragraphs"].append({"text": "Nope [@C99] and [@C1, C2]."})
    problems = check_outline(
        outline,
        claim_resolver(graph, "synthesis-agent"),
        claim_lookup(graph),
        "artifacts/synthesis-agent/report-outline.json",
        "",
    )
    by_rule = {p.rule: p for p in problems}
    assert set(by_rule) == {"citation.unverified", "citation.unresolved", "citation.malformed"}
    unverified = by_rule["citation.unverified"]
    assert unverified.pointer == "/report_outline/sections/0/paragraphs/1/text"
    assert "'[@C3]'" in unverified.message and "snippet not found" in unverified.message
    assert "verbatim" in unverified.hint
    unresolved = by_rule["citation.unresolved"]
    assert (
        unresolved.pointer == "/report_outline/sections/1/paragraphs/1/text"
        and "'[@C99]'" in unresolved.message
    )
    assert by_rule["citation.malformed"].file == "artifacts/synthesis-agent/report-outline.json"


def test_report_outline_schema() -> None:
    registry = SchemaRegistry.default()
    assert registry.validate_document("report-outline", OUTLINE, "o.json") == []
    problems = registry.validate_document(
        "report-outline",
        {"report_outline": {"title": "t", "sections": [{"heading": "h", "paragraphs": [{"txt": "x"}]}]}},
        "o.json",
    )
    assert {(p.pointer, p.rule) for p in problems} == {
        ("/report_outline/sections/0/paragraphs/0", "schema.required"),
        ("/report_outline/sections/0/paragraphs/0", "schema.additionalProperties"),
    }


def test_ambiguous_bare_reference_does_not_resolve() -> None:
    graph = make_graph()
    graph["claims"].append(_claim(f"{WR}:C1", "Another C1.", []))
    resolve = claim_resolver(graph, "synthesis-agent")
    assert resolve("C1") is None and resolve(f"{WR}:C1") == f"{WR}:C1" and resolve("C4") == f"{AR}:C4"
    assert claim_resolver(graph, WR)("C1") == f"{WR}:C1"


# -- bibliography -------------------------------------------------------------------------

TRICKY = "Fish & Chips: 100% of $5 #1 a_b {x} ~ ^ \\ Über naïve BERT"


def tricky_sources() -> list[dict[str, Any]]:
    return [
        {
            "id": "a:S1",
            "type": "journal-article",
            "title": TRICKY,
            "authors": [
                "Kurt Gödel",
                "Émile Zola-Ñandú",
                "Johannes van der Waals",
                "World Health Organization",
            ],
            "year": 2020,
            "venue": "J. Logic & Co",
            "doi": "10.1000/x_y",
            "peer_reviewed": True,
        },
        {
            "id": "a:S2",
            "type": "conference-paper",
            "title": "Attention",
            "authors": ["Ashish Vaswani"],
            "year": 2017,
            "venue": "NeurIPS",
            "url": "https://arxiv.org/abs/1706.03762",
            "arxiv_id": "1706.03762",
        },
        {"id": "a:S3", "type": "preprint", "title": "Attention", "authors": ["Ashish Vaswani"], "year": 2017},
        {
            "id": "b:S4",
            "type": "web-page",
            "title": "A page",
            "url": "https://example.org/a?b=1&c=%20",
            "accessed_at": "2026-11-20T10:00:00Z",
        },
        {"id": "b:S5", "type": "thesis", "title": "A thesis", "publisher": "MIT", "published": "2019-05-02"},
        {"id": "b:S6", "type": "report", "title": "A report", "publisher": "OECD"},
    ]


def test_bibtex_entry_types_and_unique_stable_keys() -> None:
    bib = to_bibtex(tricky_sources())
    kinds = re.findall(r"^@(\w+)\{([^,]+),", bib, flags=re.M)
    # the thesis and the report name no author, which BibTeX's styles require of those types: @misc, with a note
    assert [k for k, _ in kinds] == ["article", "inproceedings", "misc", "misc", "misc", "misc"]
    keys = [key for _, key in kinds]
    assert (
        len(set(keys)) == len(keys)
        and keys[1] == "vaswani2017attention"
        and keys[2] == "vaswani2017attentionb"
    )
    assert bibtex_keys(reversed(tricky_sources())) == bibtex_keys(tricky_sources())
    assert "publisher = {MIT}" in bib and "note = {Thesis}" in bib and "note = {Report}" in bib
    assert "eprint = {1706.03762}" in bib
    with_author = to_bibtex([{"id": "c:T", "type": "thesis", "title": "T", "authors": ["Ada Byron"],
                              "publisher": "MIT", "year": 1843}])
    assert with_author.startswith("@phdthesis{") and "school = {MIT}" in with_author


def test_bibtex_round_trips_through_a_parser() -> None:
    import pybtex.database as pybtex_database
    # pylatexenc decodes \textasciicircum to U+02C6; the character meant in text is '^'.
    context = latex2text.get_default_latex_context_db().filter_context(keep_categories=None)
    context.add_context_category(
        "caret", macros=[latex2text.MacroTextSpec("textasciicircum", "^")], prepend=True
    )
    decode = latex2text.LatexNodes2Text(latex_context=context).latex_to_text
    parsed = pybtex_database.parse_string(to_bibtex(tricky_sources()), "bibtex")
    entry = next(iter(parsed.entries.values()))
    assert decode(entry.fields["title"]) == TRICKY
    assert decode(entry.fields["journal"]) == "J. Logic & Co"
    assert entry.fields["doi"] == "10.1000/x_y"
    people = entry.persons["author"]
    assert [decode(" ".join(p.last_names)) for p in people[:2]] == ["Gödel", "Zola-Ñandú"]
    assert people[2].prelast_names == ["van", "der"] and people[2].last_names == ["Waals"]
    assert decode(str(people[3])) == "World Health Organization"
    assert len(parsed.entries) == 6


def test_split_name() -> None:
    assert split_name("Ada Lovelace") == {"family": "Lovelace", "given": "Ada"}
    assert split_name("Lovelace, Ada King") == {"family": "Lovelace", "given": "Ada King"}
    assert split_name("Ludwig van Beethoven") == {"family": "van Beethoven", "given": "Ludwig"}
    assert split_name("Martin Luther King Jr.") == {
        "family": "King",
        "given": "Martin Luther",
        "suffix": "Jr.",
    }
    assert split_name("OpenAI") == {"literal": "OpenAI"}
    assert split_name("World Health Organization") == {"literal": "World Health Organization"}


def test_csl_json_shape() -> None:
    items = to_csl_json(tricky_sources())
    json.dumps(items)
    assert [i["type"] for i in items] == [
        "article-journal",
        "paper-conference",
        "article",
        "webpage",
        "thesis",
        "report",
    ]
    first = items[0]
    assert first["id"] == "a:S1" and first["title"] == TRICKY and first["DOI"] == "10.1000/x_y"
    assert first["author"][0] == {"family": "Gödel", "given": "Kurt"}
    assert first["author"][3] == {"literal": "World Health Organization"}
    assert first["issued"] == {"date-parts": [[2020]]} and first["container-title"] == "J. Logic & Co"
    assert items[1]["URL"] == "https://arxiv.org/abs/1706.03762" and items[1]["number"] == "arXiv:1706.03762"
    assert items[3]["accessed"] == {"date-parts": [[2026, 11, 20]]} and "author" not in items[3]
    assert items[4]["issued"] == {"date-parts": [[2019, 5, 2]]}
    for item in items:
        assert {"id", "type", "title"} <= item.keys()


# -- with a real graph ---------------------------------------------------------------------


def test_report_from_a_graph_built_by_the_pipeline(session: Any) -> None:
    from tests.conftest import merge_pending, sample_claim, sample_source, store_text, write_artifacts

    sha = store_text(session, "Intro page.\fWe show that merging is hard in practice.")
    write_artifacts(
        session,
        "researcher",
        {
            "sources.json": {"sources": [sample_source(content_sha256=sha, doi="10.1234/merge")]},
            "claims.json": {
                "claims": [
                    sample_claim(
                        "C1",
                        evidence=[
                            {
                                "source_id": "S1",
                                "snippet": "merging is hard in practice",
                                "locator": {"page": 2},
                            }
                        ],
                    ),
                    sample_claim(
                        "C2", evidence=[{"source_id": "S1", "snippet": "this text is not in the source"}]
                    ),
                ]
            },
        },
    )
    assert merge_pending(session) == {"researcher": "merged"}
    graph = json.loads(session.kg_json.read_text())
    document = build_document(
        graph, session={"query": "q"}, quality=None, mission=None, outline=None, ledger=None
    )
    assert [s.heading for s in document.sections][-1] == "Bibliography"
    markdown = render_markdown(
        graph, session={"query": "q"}, quality=None, mission=None, outline=None, ledger=None
    )
    assert "[1, p. 2]" in markdown and "researcher:C2" not in sections_of(markdown)["Evidence"]

"""The schemas encode docs/data-model.md, and schema errors become precise, fixable problems."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from orchestrator.contract.formats import format_checker
from orchestrator.contract.schemas import ARTIFACT_SCHEMAS, SchemaRegistry
from orchestrator.model.errors import ConfigError
from orchestrator.model.layout import resource_dir
from orchestrator.model.problems import Problem

SCHEMA_DIR = resource_dir("schemas")
FILE = "artifacts/web-researcher/claims.json"
NOW = "2026-11-22T09:30:00Z"

CLAIM = {
    "id": "C1",
    "statement": "Transformers replaced recurrent networks in machine translation.",
    "confidence": 0.8,
    "priority": "high",
    "evidence": [
        {
            "source_id": "academic-researcher:S3",
            "snippet": "the Transformer outperforms the best previously reported models",
            "locator": {"page": 4, "section": "6.1", "char_start": 10, "char_end": 70},
            "note": "direct comparison",
        }
    ],
    "category": "finding",
    "sub_question_id": "Q1",
    "entity_ids": ["E1"],
    "tags": ["nlp"],
}
SOURCE = {
    "id": "S1",
    "type": "conference-paper",
    "title": "Attention Is All You Need",
    "authors": ["Ashish Vaswani"],
    "year": 2017,
    "venue": "NeurIPS",
    "publisher": "Curran Associates",
    "peer_reviewed": True,
    "doi": "10.48550/arXiv.1706.03762",
    "url": "https://arxiv.org/abs/1706.03762",
    "pdf_url": "https://arxiv.org/pdf/1706.03762",
    "arxiv_id": "1706.03762",
    "local_path": "inputs/attention.pdf",
    "content_sha256": "ab" * 32,
    "page_labels": ["5998", "5999"],
    "abstract": "The dominant sequence transduction models ...",
    "published": "2017-06-12",
    "accessed_at": NOW,
    "citation_count": 100000,
    "language": "en",
    "extra": {"bibtex_key": "vaswani2017"},
}
PROBLEM = Problem(FILE, "/claims/0", "schema.required", "missing", "add it", details={"field": "id"})

ARTIFACTS: dict[str, Any] = {
    "sources.json": {"sources": [SOURCE, {"id": "S2", "type": "web-page", "title": "A blog"}]},
    "claims.json": {"claims": [CLAIM]},
    "entities.json": {
        "entities": [
            {"id": "E1", "name": "Transformer", "type": "method", "description": "d", "aliases": ["T"]}
        ]
    },
    "relationships.json": {
        "relationships": [
            {"subject": "E1", "predicate": "supports", "object": "x:C2", "confidence": 1, "claim_ids": ["C1"]}
        ]
    },
    "gaps.json": {
        "gaps": [{"description": "No data after 2020", "priority": "low", "sub_question_id": "Q1",
                  "suggested_queries": ["transformer 2021"]}]
    },
    "contradictions.json": {
        "contradictions": [{"id": "K1", "claim_ids": ["C1", "b:C2"], "description": "d", "status": "resolved",
                            "resolution": "different datasets"}]
    },
    "plan.json": {
        "query": "What replaced RNNs?",
        "sub_questions": [{"id": "Q1", "question": "Which models?", "priority": "medium", "keywords": ["nmt"],
                           "facet": "history"}],
        "strategy": "survey first",
    },
    "key-findings.json": {"key_findings": [{"statement": "s", "claim_ids": ["C1"], "importance": "high"}]},
    "sections.json": {"sections": [{"id": "SEC1", "source_id": "S1", "title": "2.1 Data", "number": "2.1",
                                    "level": 2, "page": 3, "char_start": 4100}]},
    "figures.json": {"figures": [{"id": "F1", "source_id": "S1", "label": "Figure 1", "page": 3,
                                  "bbox": [72, 400.5, 290, 700], "image_sha256": "ab" * 32, "section_id": "SEC1",
                                  "description": "A bar chart.", "description_by": {"model": "m"}}]},
    "tables.json": {"tables": [{"id": "T1", "source_id": "S1", "label": "Table 1", "page": 4, "data_sha256": "cd" * 32,
                                "columns": ["Model", "BLEU"], "row_count": 2}]},
    "captions.json": {"captions": [{"id": "CAP1", "source_id": "S1", "text": "Table 1: BLEU scores.", "page": 4,
                                    "describes": "T1", "char_start": 10, "char_end": 31}]},
    "confidence-scores.json": {
        "confidence_scores": [{"claim_id": "C1", "confidence": 0, "status": "single-source", "rationale": "r",
                               "supporting_source_ids": ["S1"]}]
    },
    "coverage.json": {
        "coverage": [{"sub_question_id": "Q1", "status": "partial", "claim_ids": ["C1"], "notes": "n"}]
    },
    "completion.json": {
        "agent": "web-researcher", "status": "completed", "summary": "Found 3 claims.", "completed_at": NOW,
        "artifacts": ["claims.json", "sources.json"], "notes": "none",
    },
    "report-outline.json": {"report_outline": {"title": "T", "sections": [
        {"heading": "Key Findings", "paragraphs": [{"text": "Transformers help [@C1]."}]}]}},
}
DOCUMENTS: dict[str, Any] = {
    "retry-instructions": {
        "agent": "web-researcher", "attempt": 1, "max_attempts": 3, "error_class": "schema",
        "files": [{"path": FILE, "size": 120, "problems": [PROBLEM.to_dict()]},
                  {"path": "artifacts/web-researcher/x.json", "size": None, "problems": []}],
        "shacl_violations": [{"focus_node": "web-researcher:C1", "path": None, "message": "m", "hint": "h",
                              "file": None, "pointer": "", "severity": "warning", "preview": None}],
        "action_required": "Fix the listed problems, then recreate the lock file.",
        "created_at": NOW, "lock_file": "web-researcher.kg.lock", "artifact_dir": "artifacts/web-researcher",
    },
    "session": {
        "schema_version": 1, "id": "s-1", "query": "q", "mission": None, "status": "running",
        "status_reason": None, "iteration": 0, "created_at": NOW, "updated_at": NOW,
        "agents": {
            "web-researcher": {"attempts": 1, "state": "merged", "last_commit_seq": 4, "updated_at": NOW}
        },
        "options": {"budget": 5}, "cost_usd": 0.25, "added_by_a_later_version": True,
    },
    "event": {"timestamp": NOW, "type": "merge.completed", "message": "merged", "data": {"agent": "a"}},
    "knowledge-graph": {
        "schema_version": 1, "session": "s-1", "generated_at": NOW, "commit_seq": 4, "stats": {"claims": 1},
        "entities": [], "sources": [], "relationships": [], "gaps": [], "contradictions": [],
        "claims": [{"id": "web-researcher:C1", "provenance": {"agent": "web-researcher"}, "statement": "s"}],
        "web-researcher": {"notes.json": {"free": "form"}},
    },
}


@pytest.fixture(scope="module")
def registry() -> SchemaRegistry:
    return SchemaRegistry.default()


def claims_with(*claims: dict[str, Any]) -> dict[str, Any]:
    return {"claims": list(claims)}


def claim(**changes: Any) -> dict[str, Any]:
    result = copy.deepcopy(CLAIM)
    for key, value in changes.items():
        if value is None:
            del result[key]
        else:
            result[key] = value
    return result


def only(problems: list[Problem]) -> Problem:
    assert len(problems) == 1, [p.render() for p in problems]
    return problems[0]


# -- the schema files themselves -----------------------------------------------------------


@pytest.mark.parametrize("path", sorted(SCHEMA_DIR.glob("*.schema.json")), ids=lambda p: p.name)
def test_every_schema_file_is_a_valid_draft_2020_12_schema(path: Path) -> None:
    schema = json.loads(path.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"https://cconductor.dev/schemas/{path.name}"
    assert schema["title"] and schema["description"]


def test_every_artifact_field_is_described_for_agents() -> None:
    common = json.loads((SCHEMA_DIR / "common.schema.json").read_text(encoding="utf-8"))["$defs"]

    def described(spec: dict[str, Any]) -> bool:
        ref = spec.get("$ref", "")
        return "description" in spec or "description" in common.get(ref.removeprefix("#/$defs/"), {})

    undocumented = [
        f"{name}.{field}"
        for name, definition in common.items()
        if name != "problem"
        for field, spec in definition.get("properties", {}).items()
        if not described(spec)
    ]
    assert undocumented == []


def test_the_folder_holds_a_schema_for_every_artifact_file() -> None:
    names = {p.name.removesuffix(".schema.json") for p in SCHEMA_DIR.glob("*.schema.json")}
    assert names >= ARTIFACT_SCHEMAS | {"common", "retry-instructions", "session", "event", "knowledge-graph"}


def test_registry_is_built_once_per_process() -> None:
    assert SchemaRegistry.default() is SchemaRegistry.default()


@pytest.mark.parametrize(("value", "form", "ok"), [
    ("https://arxiv.org/abs/1706.03762", "uri", True), ("urn:isbn:0451450523", "uri", True),
    ("mailto:a@example.org", "uri", True), ("http://[::1]:8080/a%20b?q=1#frag", "uri", True),
    ("not a uri", "uri", False), ("/relative/path.pdf", "uri", False), ("http://a b", "uri", False),
    ("http://example.org/%zz", "uri", False), ("1http://x", "uri", False), ("http://x/#a#b", "uri", False),
    ("2026-11-22", "date", True), ("2026-02-30", "date", False), ("2026-1-2", "date", False),
    ("2026-11-22T09:30:00Z", "date-time", True), ("2026-11-22T09:30:00.123+01:00", "date-time", True),
    ("2016-12-31T23:59:60Z", "date-time", True), ("2026-11-22 09:30", "date-time", False),
    ("2026-11-22T09:30:00", "date-time", False), ("2026-11-22T24:00:00Z", "date-time", False),
    ("2026-13-01T00:00:00Z", "date-time", False), ("2026-11-22T09:30:00+25:00", "date-time", False),
])
def test_our_formats_follow_the_rfcs(value: str, form: str, ok: bool) -> None:
    assert format_checker().conforms(value, form) is ok


def test_the_install_asks_for_none_of_jsonschemas_format_libraries() -> None:
    """jsonschema imports every format library it finds beside it as it is imported itself (rfc3987-syntax
    builds an IRI grammar then: 1-3 s); our three formats are checked by our own rules, so the package asks
    for plain jsonschema. A machine that has them anyway (a Jupyter install) pays once per process."""
    from importlib.metadata import requires

    from packaging.requirements import Requirement

    asks = [r for r in map(Requirement, requires("cconductor") or []) if r.name == "jsonschema"]
    assert asks and all(not r.extras for r in asks), [str(r) for r in asks]


def test_our_rules_alone_decide_formats_whatever_else_is_installed() -> None:
    from orchestrator.contract.formats import FORMATS

    assert set(format_checker().checkers) == set(FORMATS)  # none of jsonschema's optional checkers


# -- shapes of docs/data-model.md ----------------------------------------------------------


def _def(name: str) -> dict[str, Any]:
    common: dict[str, Any] = json.loads((SCHEMA_DIR / "common.schema.json").read_text(encoding="utf-8"))
    return common["$defs"][name]


def test_claim_shape_matches_the_data_model() -> None:
    claim_def = _def("claim")
    assert set(claim_def["required"]) == {"id", "statement", "confidence", "priority", "evidence"}
    assert set(claim_def["properties"]) == {
        "id", "statement", "confidence", "priority", "evidence", "category", "sub_question_id",
        "entity_ids", "tags", "extra",
    }
    assert claim_def["additionalProperties"] is False


def test_evidence_and_locator_shapes_match_the_data_model() -> None:
    evidence = _def("evidence")
    assert evidence["required"] == ["source_id", "snippet"]
    assert set(evidence["properties"]) == {"source_id", "snippet", "locator", "note", "extra"}
    snippet = evidence["properties"]["snippet"]
    assert (snippet["minLength"], snippet["maxLength"]) == (1, 2000)
    locator = _def("locator")["properties"]
    assert {k: v.get("minimum") for k, v in locator.items() if k != "extra"} == {
        "page": 1, "section": None, "char_start": 0, "char_end": 0, "table": None, "rows": None, "figure": None,
    }


def test_source_shape_matches_the_data_model() -> None:
    source = _def("source")
    assert set(source["required"]) == {"id", "type", "title"}
    assert set(source["properties"]) == set(SOURCE)
    assert _def("sourceType")["enum"] == [
        "journal-article", "conference-paper", "preprint", "book", "book-chapter", "thesis", "report",
        "dataset", "web-page", "news-article", "documentation", "local-document", "other",
    ]
    assert source["properties"]["url"]["format"] == source["properties"]["pdf_url"]["format"] == "uri"
    assert source["properties"]["published"]["format"] == "date"
    assert source["properties"]["accessed_at"]["format"] == "date-time"


def test_identifier_patterns_match_the_data_model() -> None:
    assert _def("localId")["pattern"] == "^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
    assert _def("reference")["pattern"] == "^([a-z][a-z0-9-]{0,63}:)?[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"


# -- valid documents -----------------------------------------------------------------------


@pytest.mark.parametrize("filename", sorted(ARTIFACTS))
def test_valid_artifacts_pass(registry: SchemaRegistry, filename: str) -> None:
    assert registry.validate_artifact(filename, ARTIFACTS[filename], FILE) == []


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_valid_documents_pass(registry: SchemaRegistry, name: str) -> None:
    assert registry.validate_document(name, DOCUMENTS[name], None) == []


def test_every_artifact_schema_has_a_valid_example() -> None:
    assert {name.removesuffix(".json") for name in ARTIFACTS} == ARTIFACT_SCHEMAS


def test_file_names_map_to_artifact_schemas(registry: SchemaRegistry) -> None:
    assert registry.schema_name_for("claims.json") == "claims"
    assert registry.schema_name_for("key-findings.json") == "key-findings"
    assert registry.schema_name_for("notes.json") is None
    assert registry.schema_name_for("session.json") is None
    assert registry.schema_name_for("claims") is None
    assert registry.artifact_file_names() == sorted(ARTIFACTS)


# -- each kind of error --------------------------------------------------------------------


def test_missing_field_points_at_the_object_and_says_what_to_add(registry: SchemaRegistry) -> None:
    data = claims_with(claim(), claim(), claim(confidence=None))
    problem = only(registry.validate_artifact("claims.json", data, FILE))
    assert (problem.file, problem.pointer, problem.rule) == (FILE, "/claims/2", "schema.required")
    assert "'confidence'" in problem.message
    assert problem.hint == "add the field 'confidence' (a number between 0 and 1) to the object at /claims/2"
    assert problem.details["field"] == "confidence"


def test_missing_top_level_key(registry: SchemaRegistry) -> None:
    problem = only(registry.validate_artifact("claims.json", {}, FILE))
    assert (problem.pointer, problem.rule) == ("", "schema.required")
    assert problem.hint == "add the field 'claims' (a list of Claim objects) to the top-level object"


def test_enum_lists_the_allowed_values(registry: SchemaRegistry) -> None:
    problem = only(registry.validate_artifact("claims.json", claims_with(claim(priority="High")), FILE))
    assert (problem.pointer, problem.rule) == ("/claims/0/priority", "schema.enum")
    assert '"High"' in problem.message
    assert problem.hint == 'use one of "high", "medium", "low" (did you mean "high"?)'


def test_unexpected_field_is_named_with_the_allowed_ones_and_extra(registry: SchemaRegistry) -> None:
    problem = only(registry.validate_artifact("claims.json", claims_with(claim(confidance=0.5)), FILE))
    assert (problem.pointer, problem.rule) == ("/claims/0", "schema.additionalProperties")
    assert "'confidance'" in problem.message
    assert problem.hint.startswith("rename 'confidance' to 'confidence' or move it under 'extra'")
    assert "category, confidence, entity_ids, evidence, extra, id, priority, statement" in problem.hint


def test_each_unexpected_field_is_a_separate_problem(registry: SchemaRegistry) -> None:
    problems = registry.validate_artifact("claims.json", {"claims": [], "zzz": 1, "aaa": 2}, FILE)
    assert [(p.pointer, p.details["field"]) for p in problems] == [("", "aaa"), ("", "zzz")]
    assert problems[0].hint.startswith("remove 'aaa' or move it under 'extra'")


def test_wrong_type_names_the_expected_type(registry: SchemaRegistry) -> None:
    problem = only(registry.validate_artifact("claims.json", claims_with(claim(confidence="0.9")), FILE))
    assert (problem.pointer, problem.rule) == ("/claims/0/confidence", "schema.type")
    assert problem.message == (
        'the value at /claims/0/confidence is a string ("0.9") but must be a number between 0 and 1'
    )
    assert problem.hint == "change the value at /claims/0/confidence to a number between 0 and 1"


def test_a_boolean_is_not_a_number(registry: SchemaRegistry) -> None:
    problem = only(registry.validate_artifact("claims.json", claims_with(claim(confidence=True)), FILE))
    assert problem.rule == "schema.type"


def test_maximum(registry: SchemaRegistry) -> None:
    problem = only(registry.validate_artifact("claims.json", claims_with(claim(confidence=1.5)), FILE))
    assert (problem.pointer, problem.rule) == ("/claims/0/confidence", "schema.maximum")
    assert "1.5" in problem.message
    assert problem.hint == "use a number between 0 and 1"


def test_min_items(registry: SchemaRegistry) -> None:
    data = {"contradictions": [{"claim_ids": ["C1"], "description": "d", "status": "open"}]}
    problem = only(registry.validate_artifact("contradictions.json", data, FILE))
    assert (problem.pointer, problem.rule) == ("/contradictions/0/claim_ids", "schema.minItems")
    assert "has 1 item(s); at least 2 required" in problem.message


def test_pattern_gives_an_example(registry: SchemaRegistry) -> None:
    problem = only(registry.validate_artifact("claims.json", claims_with(claim(id="claim 1")), FILE))
    assert (problem.pointer, problem.rule) == ("/claims/0/id", "schema.pattern")
    assert '"claim 1"' in problem.message
    assert problem.hint.startswith("use a local id (a string matching ^[A-Za-z0-9]")
    assert '"S1" or "claim-3"' in problem.hint


def test_snippet_length_limit(registry: SchemaRegistry) -> None:
    evidence = [{"source_id": "S1", "snippet": "x" * 2001}]
    problem = only(registry.validate_artifact("claims.json", claims_with(claim(evidence=evidence)), FILE))
    assert (problem.pointer, problem.rule) == ("/claims/0/evidence/0/snippet", "schema.maxLength")
    assert problem.hint == "shorten it to at most 2000 characters"
    assert len(problem.message) < 200


def test_bad_field_name_in_a_map(registry: SchemaRegistry) -> None:
    session = copy.deepcopy(DOCUMENTS["session"])
    session["agents"]["Web"] = session["agents"]["web-researcher"]
    problem = only(registry.validate_document("session", session, "session.json"))
    assert (problem.pointer, problem.rule) == ("/agents", "schema.pattern")
    assert problem.message.startswith('the object at /agents has the field name "Web"')


@pytest.mark.parametrize(
    ("field", "value", "rule", "hint_part"),
    [
        ("url", "not a uri", "schema.format", "'https://example.org/paper.pdf'"),
        ("pdf_url", "/relative/path.pdf", "schema.format", "absolute URI"),
        ("accessed_at", "2026-11-22", "schema.format", "'2026-11-22T09:30:00Z'"),
        ("accessed_at", "2026-11-22T09:30:00", "schema.format", "time zone"),
        ("published", "2026-13-01", "schema.format", "'2026-11-22'"),
        ("content_sha256", "AB" * 32, "schema.pattern", "^[0-9a-f]{64}$"),
        ("type", "blog", "schema.enum", '"web-page"'),
        ("citation_count", -1, "schema.minimum", "an integer >= 0"),
    ],
)
def test_source_field_checks(
    registry: SchemaRegistry, field: str, value: Any, rule: str, hint_part: str
) -> None:
    data = {"sources": [dict(SOURCE, **{field: value})]}
    problem = only(registry.validate_artifact("sources.json", data, "artifacts/a/sources.json"))
    assert (problem.pointer, problem.rule) == (f"/sources/0/{field}", rule)
    assert hint_part in problem.hint


def test_all_errors_are_reported_sorted_by_pointer(registry: SchemaRegistry) -> None:
    claims = [claim() for _ in range(11)]
    claims[10]["priority"] = "urgent"
    claims[2]["confidence"] = -0.1
    del claims[0]["statement"]
    problems = registry.validate_artifact("claims.json", {"claims": claims}, FILE)
    assert [(p.pointer, p.rule) for p in problems] == [
        ("/claims/0", "schema.required"),
        ("/claims/2/confidence", "schema.minimum"),
        ("/claims/10/priority", "schema.enum"),
    ]
    assert all(p.file == FILE and p.severity == "error" for p in problems)


def test_known_artifact_that_is_not_an_object(registry: SchemaRegistry) -> None:
    problem = only(registry.validate_artifact("claims.json", [CLAIM], FILE))
    assert (problem.pointer, problem.rule) == ("", "schema.type")
    assert problem.message.startswith("the document is a list")


def test_unknown_artifact_is_accepted_when_it_is_an_object(registry: SchemaRegistry) -> None:
    assert registry.validate_artifact("notes.json", {"anything": [1, 2]}, "artifacts/a/notes.json") == []


def test_unknown_artifact_is_rejected_when_it_is_a_list(registry: SchemaRegistry) -> None:
    problem = only(registry.validate_artifact("notes.json", [1, 2], "artifacts/a/notes.json"))
    assert (problem.file, problem.pointer) == ("artifacts/a/notes.json", "")
    assert problem.rule == "artifact.not_object"
    assert "claims.json" in problem.hint


# -- internal documents --------------------------------------------------------------------


def test_unknown_document_schema_is_a_config_error(registry: SchemaRegistry) -> None:
    with pytest.raises(ConfigError, match=r"no schema named 'no-such-schema'"):
        registry.validate_document("no-such-schema", {}, None)


def test_problem_records_round_trip_through_retry_instructions(registry: SchemaRegistry) -> None:
    doc = copy.deepcopy(DOCUMENTS["retry-instructions"])
    doc["files"][0]["problems"].append(Problem(None, "", "x.y", "m", "h", severity="info").to_dict())
    assert registry.validate_document("retry-instructions", doc, None) == []
    doc["error_class"] = "typo"
    doc["attempt"] = 0
    doc["action_required"] = "fix"
    rules = [p.rule for p in registry.validate_document("retry-instructions", doc, None)]
    assert sorted(rules) == ["schema.enum", "schema.minLength", "schema.minimum"]


def test_session_typed_fields_are_checked(registry: SchemaRegistry) -> None:
    session = dict(DOCUMENTS["session"], cost_usd=-1, status="done")
    assert [(p.pointer, p.rule) for p in registry.validate_document("session", session, None)] == [
        ("/cost_usd", "schema.minimum"),
        ("/status", "schema.enum"),
    ]


def test_event_type_pattern(registry: SchemaRegistry) -> None:
    event = dict(DOCUMENTS["event"], type="Merge")
    assert only(registry.validate_document("event", event, None)).rule == "schema.pattern"


def test_knowledge_graph_items_need_id_and_provenance(registry: SchemaRegistry) -> None:
    kg = copy.deepcopy(DOCUMENTS["knowledge-graph"])
    kg["claims"][0].pop("provenance")
    kg["web-researcher"] = []
    assert [(p.pointer, p.rule) for p in registry.validate_document("knowledge-graph", kg, None)] == [
        ("/claims/0", "schema.required"),
        ("/web-researcher", "schema.type"),
    ]


# -- the registry itself -------------------------------------------------------------------


def _copy_schemas(tmp_path: Path) -> Path:
    target = tmp_path / "schemas"
    shutil.copytree(SCHEMA_DIR, target)
    return target


def test_any_of_errors_report_the_best_matching_branch(tmp_path: Path) -> None:
    folder = _copy_schemas(tmp_path)
    probe = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://cconductor.dev/schemas/probe.schema.json",
        "type": "object",
        "properties": {
            "when": {"anyOf": [{"type": "integer"}, {"type": "string", "format": "date-time"}]},
        },
    }
    (folder / "probe.schema.json").write_text(json.dumps(probe), encoding="utf-8")
    registry = SchemaRegistry(folder)
    problem = only(registry.validate_document("probe", {"when": "yesterday"}, None))
    assert (problem.pointer, problem.rule) == ("/when", "schema.format")
    assert "'2026-11-22T09:30:00Z'" in problem.hint
    problem = only(registry.validate_document("probe", {"when": [1]}, None))
    assert (problem.pointer, problem.rule) == ("/when", "schema.anyOf")
    assert problem.hint.startswith("change the value at /when to an integer or an RFC 3339 date-time")


def test_an_invalid_schema_file_is_a_config_error(tmp_path: Path) -> None:
    folder = _copy_schemas(tmp_path)
    (folder / "event.schema.json").write_text('{"$id": "https://x/event.schema.json", "type": 5}')
    with pytest.raises(ConfigError, match=r"event\.schema\.json is unusable"):
        SchemaRegistry(folder)


def test_a_missing_artifact_schema_is_a_config_error(tmp_path: Path) -> None:
    folder = _copy_schemas(tmp_path)
    (folder / "claims.schema.json").unlink()
    with pytest.raises(ConfigError, match=r"lacks claims\.schema\.json"):
        SchemaRegistry(folder)


# -- robustness ----------------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids, max_size=3),
    max_leaves=8,
)
MUTATED_CLAIM = st.dictionaries(st.sampled_from([*CLAIM, "bogus"]), JSON, max_size=6).map(
    lambda changes: {**CLAIM, **changes}
)


def _resolve(document: Any, pointer: str) -> Any:
    node = document
    for raw in pointer.split("/")[1:]:
        part = raw.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


@settings(max_examples=60, deadline=None)
@given(claims=st.lists(MUTATED_CLAIM, max_size=3))
def test_every_problem_points_into_the_document(claims: list[dict[str, Any]]) -> None:
    data = {"claims": claims}
    for problem in SchemaRegistry.default().validate_artifact("claims.json", data, FILE):
        _resolve(data, problem.pointer)
        assert problem.rule.startswith("schema.") and problem.message and problem.hint


def test_a_bad_uri_is_explained_by_our_format_rule_in_a_new_process() -> None:
    import subprocess
    import sys

    code = ("import orchestrator.contract.schemas as s; r = s.SchemaRegistry.default(); "
            "bad = r.validate_artifact('sources.json', {'sources': [{'id': 'S1', 'type': 'web-page', 'title': 't', "
            "'url': 'not a uri'}]}, 'x'); print([(p.rule, p.pointer) for p in bad])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[('schema.format', '/sources/0/url')]", out.stderr

"""The pure merge: deep merge rules, ids, references, and its algebraic properties."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.graph.merge import build_contribution, deep_merge, derived_id
from orchestrator.graph.state import GraphState
from orchestrator.graph.unified import build_views
from orchestrator.model.inputs import InputFile


def f(name: str, data: dict[str, Any], agent: str = "a") -> InputFile:
    return InputFile(name, f"artifacts/{agent}/{name}", f"sha-{name}", data)


def test_objects_merge_arrays_concatenate_equal_scalars_agree() -> None:
    merged, problems = deep_merge([
        f("b.json", {"meta": {"y": 2}, "list": [3], "same": "x"}),
        f("a.json", {"meta": {"x": 1}, "list": [1, 2], "same": "x"}),
    ])
    assert problems == []
    assert merged == {"meta": {"x": 1, "y": 2}, "list": [1, 2, 3], "same": "x"}


def test_type_change_is_a_conflict_naming_both_files() -> None:
    _, problems = deep_merge([f("a.json", {"k": {"x": 1}}), f("b.json", {"k": [1]})])
    assert len(problems) == 1
    assert problems[0].file == "artifacts/a/b.json" and "artifacts/a/a.json" in problems[0].message


def test_nested_conflict_points_at_the_leaf() -> None:
    _, problems = deep_merge([f("a.json", {"m": {"n": 1}}), f("b.json", {"m": {"n": 2}})])
    assert problems[0].pointer == "/m/n"


def test_items_without_id_get_deterministic_ids() -> None:
    gap = {"description": "nothing on costs", "priority": "high"}
    result = build_contribution("a", [f("gaps.json", {"gaps": [gap]})], GraphState("s").excluding("a"),
                                attempt=1, merged_at="t", artifact_sha256="x")
    assert result.contribution["items"]["gaps"][0]["id"] == f"a:{derived_id('gap', gap)}"


def test_duplicate_ids_within_an_agent_are_reported() -> None:
    claim = {"id": "C1", "statement": "s", "confidence": 0.5, "priority": "low", "evidence": []}
    result = build_contribution("a", [f("claims.json", {"claims": [claim, claim]})],
                                GraphState("s").excluding("a"), attempt=1, merged_at="t", artifact_sha256="x")
    assert [p.rule for p in result.problems] == ["merge.duplicate_id"]
    assert result.problems[0].pointer == "/claims/1/id"


def test_ambiguous_bare_reference_lists_candidates() -> None:
    state = GraphState("s")
    for agent in ("x", "y"):
        res = build_contribution(agent, [f("sources.json", {"sources": [{"id": "S1", "type": "other", "title": "t"}]},
                                           agent)], state.excluding(agent), attempt=1, merged_at="t",
                                 artifact_sha256=agent)
        state.put(agent, {"contribution": res.contribution})
    claim = {"id": "C1", "statement": "s", "confidence": 0.5, "priority": "low",
             "evidence": [{"source_id": "S1", "snippet": "q"}]}
    result = build_contribution("z", [f("claims.json", {"claims": [claim]}, "z")], state.excluding("z"),
                                attempt=1, merged_at="t", artifact_sha256="z")
    assert "ambiguous" in result.problems[0].message and "x:S1, y:S1" in result.problems[0].message


json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=3))
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abc"), inner, max_size=3),
    max_leaves=10,
)
file_sets = st.dictionaries(st.sampled_from(["a.json", "b.json", "c.json"]),
                            st.dictionaries(st.sampled_from("xyz"), json_values, max_size=3), max_size=3)


@settings(max_examples=200, deadline=None)
@given(file_sets)
def test_merge_is_deterministic_and_independent_of_listing_order(files: dict[str, dict[str, Any]]) -> None:
    inputs = [f(name, data) for name, data in files.items()]
    first = deep_merge(inputs)
    second = deep_merge(list(reversed(copy.deepcopy(inputs))))
    assert first[0] == second[0]
    assert [p.to_dict() for p in first[1]] == [p.to_dict() for p in second[1]]


def _claims_file(agent: str, count: int) -> InputFile:
    claims = [{"id": f"C{i}", "statement": f"{agent} {i}", "confidence": 0.5, "priority": "low", "evidence": []}
              for i in range(count)]
    return f("claims.json", {"claims": claims}, agent)


def _apply(order: list[tuple[str, int]], repeat: int = 1) -> dict[str, Any]:
    state = GraphState("s")
    for agent, count in order * repeat:
        res = build_contribution(agent, [_claims_file(agent, count)], state.excluding(agent), attempt=1,
                                 merged_at="t", artifact_sha256=f"{agent}{count}")
        state.put(agent, {"contribution": res.contribution, "namespace": res.namespace, "attempt": 1,
                          "merged_at": "t", "artifact_sha256": f"{agent}{count}", "files": []})
    return build_views(state.records, "s", 0, "t")


agents_and_sizes = st.dictionaries(st.sampled_from(["alpha", "beta", "gamma", "delta"]), st.integers(0, 4),
                                   min_size=1)


@settings(max_examples=100, deadline=None)
@given(agents_and_sizes, st.randoms())
def test_merging_agents_is_order_independent_and_idempotent(sizes: dict[str, int], rnd: Any) -> None:
    order = list(sizes.items())
    shuffled = order[:]
    rnd.shuffle(shuffled)
    once = _apply(order)
    assert _apply(shuffled) == once
    assert _apply(order, repeat=2) == once
    assert once["stats"]["claims_count"] == sum(sizes.values())

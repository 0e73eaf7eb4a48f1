"""The pure contradiction detector: statement analysis, pairwise comparison, records, penalty."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.contradictions import ConflictCache, compare, detect, unresolved
from orchestrator.contradictions.entities import groups
from orchestrator.contradictions.statements import analyse, entity_token
from orchestrator.contradictions.summary import PENALTY_MAX, contradiction_penalty, status_lines, summary

BASE = "The vaccine reduced hospital admissions by {} in adults over 65."

CONFLICTS: list[tuple[str, str, str]] = [
    ("numeric", BASE.format("40%"), BASE.format("12%")),
    ("numeric", "The trial enrolled 120 patients across three hospitals.",
     "The trial enrolled 200 patients across three hospitals."),
    ("numeric", "Series A funding for the startup reached $5m last spring.",
     "Series A funding for the startup reached US$ 9 million last spring."),
    ("numeric", "Median response time of the search service is 250 ms.",
     "Median response time of the search service is 2 s."),
    ("numeric", "The new catalyst gives a 3-fold increase in hydrogen yield.",
     "The new catalyst gives a 10-fold increase in hydrogen yield."),
    ("numeric", "The bridge main span measures 1,200 m over the river.",
     "The bridge main span measures 2 km over the river."),
    ("numeric", "The battery pack stores 75 kWh in the long range model.",
     "The battery pack stores 100 kWh in the long range model."),
    ("polarity", "Metformin lowers the risk of colorectal cancer.",
     "Metformin does not lower the risk of colorectal cancer."),
    ("polarity", "The bridge design withstands magnitude seven earthquakes.",
     "The bridge design never withstands magnitude seven earthquakes."),
    ("polarity", "The compiler supports incremental builds on Windows.",
     "The compiler doesn't support incremental builds on Windows."),
    ("polarity", "The treatment improved survival in the elderly cohort.",
     "The treatment failed to improve survival in the elderly cohort."),
    ("polarity", "Patients recovered with antibiotic treatment in the ward.",
     "Patients recovered without antibiotic treatment in the ward."),
    ("polarity", "The protocol guarantees delivery of every message.",
     "The protocol cannot guarantee delivery of every message."),
    ("polarity", "The plant still refines crude oil for export.", "The plant no longer refines crude oil for export."),
    ("polarity", "The amendment passed the lower house in June.", "The amendment failed in the lower house in June."),
    ("polarity", "The striker's club won the cup final in May.", "The striker's club lost the cup final in May."),
    ("polarity", "The court upheld the ban on the pesticide.", "The court overturned the ban on the pesticide."),
    ("polarity", "The nerve damage from the toxin is reversible.", "The nerve damage from the toxin is irreversible."),
    ("numeric", "The lake holds 39 km³ of fresh water.", "The lake holds 10 km³ of fresh water."),
    ("numeric", "The pond holds 2,000 m³ of water in spring.", "The pond holds 3 million litres of water in spring."),
    ("numeric", "Its half-life is 8 days.", "Its half-life is 30 days."),
    ("numeric", "IT spending at the bank rose 5% in 2022.", "IT spending at the bank rose 9% in 2022."),
    ("numeric", "The agency published a 300-page report on the flood.",
     "The agency published a 250-page report on the flood."),
]

LOOK_ALIKES: list[tuple[str, str, str]] = [
    ("percent spelled out", BASE.format("12.5%"), BASE.format("12.5 percent")),
    ("per cent", BASE.format("12.5%"), BASE.format("12.5 per cent")),
    ("thousands separator", "The survey reached 1,000 households in rural districts.",
     "The survey reached 1000 households in rural districts."),
    ("multiplier", "The city counted 1.2 million visitors at the harbour festival.",
     "The city counted 1,200,000 visitors at the harbour festival."),
    ("currency forms", "Series A funding for the startup reached $5m last spring.",
     "Series A funding for the startup reached US$ 5 million last spring."),
    ("unit conversion", "Median response time of the search service is 250 ms.",
     "Median response time of the search service is 0.25 s."),
    ("different units", "The Falcon model reaches 90% accuracy on the benchmark.",
     "The Falcon model reaches 90 ms latency on the benchmark."),
    ("different counted things", "The trial enrolled 120 patients across three hospitals.",
     "The trial enrolled 200 nurses across three hospitals."),
    ("different years", "Coffee exports from Kenya rose 8% in 2019 after the reform.",
     "Coffee exports from Kenya rose 15% in 2021 after the reform."),
    ("within tolerance", "The harbour survey counted 120 grey seals on the beaches.",
     "The harbour survey counted 124 grey seals on the beaches."),
    ("paraphrase", "Regular exercise improves sleep quality in older adults.",
     "In older adults, sleep quality is improved by regular exercise."),
    ("double negation", "The new alloy resists corrosion in salt water.",
     "The new alloy does not fail to resist corrosion in salt water."),
    ("neither nor is one negation", "Neither the vaccine nor the booster caused severe reactions.",
     "Neither the vaccine nor the booster caused severe reactions in adults."),
    ("a lower bound", "More than 10% of the glacier mass in the Alps has melted.",
     "Some 15% of the glacier mass in the Alps has melted."),
    ("an upper bound", "Up to 40 people can attend the workshop in the old library.",
     "Exactly 25 people can attend the workshop in the old library."),
    ("too little said", "Accuracy is 90%.", "Accuracy is 60%."),
    ("unrelated statements", "The library was released in 2019 by a small team.",
     "Coral reefs cover less than one percent of the ocean floor."),
    ("different subjects", "GPT-4 scores 86% on the MMLU benchmark.", "PaLM-2 scores 78% on the MMLU benchmark."),
    ("negation and different numbers", BASE.format("40%"), "The vaccine did not reduce hospital admissions by 12% "
                                                          "in adults over 65."),
    ("not only ... but also", "The new parser is not only fast but also accurate on legal documents.",
     "The new parser is fast and accurate on legal documents."),
    ("no doubt", "There is no doubt that the new parser is accurate on legal documents.",
     "The new parser is accurate on legal documents."),
    ("version numbers", "Version 1.2.3 of the parser fixes the memory leak on startup.",
     "Version 1.2.4 of the parser fixes the memory leak on startup."),
    ("model names with digits", "Llama-2 answers most questions about chemistry correctly.",
     "Llama-3 answers most questions about chemistry correctly."),
    ("acronym that spells a function word", "IT spending at the bank rose 5% in 2022.",
     "HR spending at the bank rose 9% in 2022."),
    ("acronyms as subjects", "The US spends 17% of GDP on health care.", "The EU spends 10% of GDP on health care."),
    ("acronym against a word", "Spending on IT rose 5% in 2022.", "Spending on defence rose 9% in 2022."),
    ("a number naming the noun before it", "The phase 2 trial of the vaccine enrolled 120 patients.",
     "The phase 3 trial of the vaccine enrolled 900 patients."),
    ("a value qualifying the noun after it", "The 5-year survival rate is 68%.", "The 10-year survival rate is 50%."),
    ("a unit word qualifying the noun after it", "The 10 mile race record is 45 minutes.",
     "The 5 mile race record is 21 minutes."),
    ("a specialising modifier", "Cancer deaths fell 3% in 2020.", "Lung cancer deaths fell 12% in 2020."),
    ("cubic units converted", "The reservoir holds 4 km³ of water.", "The reservoir holds 4 billion m³ of water."),
    ("a negated failure", "The bill did not fail in the Senate.", "The bill passed the Senate."),
    ("a share of people and its complement", "In the district, 8% of adults are uninsured.",
     "In the district, 92% of adults are insured."),
]


@pytest.mark.parametrize("kind, a, b", CONFLICTS, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(CONFLICTS)])
def test_conflicts_are_found_in_both_orders(kind: str, a: str, b: str) -> None:
    for first, second in ((a, b), (b, a)):
        found = compare(first, second)
        assert found is not None and found.kind == kind, (first, second)


@pytest.mark.parametrize("why, a, b", LOOK_ALIKES, ids=[w for w, _, _ in LOOK_ALIKES])
def test_look_alikes_are_not_conflicts(why: str, a: str, b: str) -> None:
    assert compare(a, b) is None and compare(b, a) is None


def test_numeric_conflict_says_what_was_compared() -> None:
    found = compare("Median response time of the search service is 250 ms.",
                    "Median response time of the search service is 2 s.")
    assert found is not None and found.compared == {
        "unit": "s", "values": [2.0, 0.25], "texts": ["2 s", "250 ms"], "relative_difference": 0.875,
        "tolerance": 0.1}
    assert found.reason == "different values of the same quantity: “2 s” vs “250 ms” (they differ by 88%)"


def test_a_description_says_something_true_of_years_and_percentages() -> None:
    """An event year 4 years off is not "0%" apart; two percentages are points apart."""
    years = compare("The Golden Gate Bridge opened in 1937.", "The Golden Gate Bridge opened in 1933.")
    assert years is not None and years.reason.endswith("(4 years apart)")
    shares = compare("Turnout in the city was 30% in 2020.", "Turnout in the city was 12% in 2020.")
    assert shares is not None and shares.reason.endswith("(18 percentage points apart)")


def test_a_capitalised_function_word_is_a_name_unless_the_statement_shouts_or_negates() -> None:
    assert entity_token("it") in analyse("IT spending rose 5% in 2022.").topic
    assert entity_token("it") not in analyse("It rose 5% in 2022 across the sector.").topic
    assert entity_token("us") not in analyse("US$ 5 million was spent on the bridge.").topic
    assert analyse("THE TRIAL ENROLLED 120 PATIENTS.").topic == analyse("The trial enrolled 120 patients.").topic
    assert analyse("The drug is NOT approved for children.").negated
    linked = analyse("The US population is 330 million.", (("united states", "entity_usa"), ("us", "entity_usa")))
    assert "entity_usa" in linked.topic  # a declared name stays its entity


def test_no_longer_and_fails_to_negate_once() -> None:
    assert analyse("The factory no longer produces steel.").negated
    assert analyse("The bill failed to pass the Senate.").negated
    failed = analyse("The bill failed in the Senate.")
    assert not failed.negated and failed.flipped and "pass" in failed.topic


def test_entities_sharing_a_name_or_alias_are_one_thing_whatever_their_type() -> None:
    found = groups([{"id": "a:E1", "name": "Rotterdam", "type": "city"},
                    {"id": "b:E1", "name": "rotterdam ", "type": "port"},
                    {"id": "c:E1", "name": "New York City", "type": "city", "aliases": ["NYC"]},
                    {"id": "d:E1", "name": "NYC", "type": "place", "merged_ids": ["d:E2"]},
                    {"id": "e:E1", "name": "Paris", "type": "city"}])
    assert found.token["a:E1"] == found.token["b:E1"] == entity_token("rotterdam")
    assert found.token["c:E1"] == found.token["d:E1"] == found.token["d:E2"] != found.token["e:E1"]
    tokens, names = found.of(["d:E2", "x:E9"])
    assert tokens == {found.token["c:E1"], "x:E9"}  # an id no entity has stands for itself
    assert [n for n, _ in names] == ["new york city", "nyc"]
    nyc = (("new york city", found.token["c:E1"]), ("nyc", found.token["c:E1"]))
    one = compare("NYC has 8.3 million residents.", "New York City has 8.8 million residents.", nyc, nyc)
    assert one is not None and one.kind == "numeric"
    assert compare("NYC has 8.3 million residents.", "New York City has 8.8 million residents.") is None


def test_values_are_intervals_of_their_written_precision() -> None:
    def values(statement: str) -> list[tuple[float, float, str, str]]:
        return [(round(q.low, 4), round(q.high, 4), q.unit, q.bound) for q in analyse(statement).quantities]

    assert values("Turnout was 67.3%.") == [(67.25, 67.35, "%", "")]
    assert values("Turnout was about 67%.") == [(60.3, 73.7, "%", "")]  # hedged: 10%
    assert values("The survey reached 1,200 homes.") == [(1150.0, 1250.0, "#home", "")]  # round: up to 5%
    assert values("At least 10% of adults.") == [(10.0, float("inf"), "%", "lower")]
    assert values("10% or more of adults.") == [(10.0, float("inf"), "%", "lower")]
    assert values("No more than 50 species live there.") == [(float("-inf"), 50.0, "#speci", "upper")]
    assert values("Between 20 and 30 species.") == [(20.0, 30.0, "#speci", "range")]
    assert values("It reaches 104 °F.") == [(39.7222, 40.2778, "°C", "")]
    assert values("The 1990s saw growth in 2019.") == []
    assert analyse("The 2019 survey of 2,000 patients.").years == {2019}
    assert analyse("The drug is approved for children under 5.").topic >= {"under#5", "children"}
    assert "phase#2" in analyse("Phase 2 of the trial enrolled 300 patients.").topic


def test_statement_analysis() -> None:
    s = analyse("Revenue of Acme grew 12.5 percent in 2019, not 20%.")
    assert s.negated and not s.flipped and s.years == {2019}
    assert [(q.value, q.unit, q.text) for q in s.quantities] == [(12.5, "%", "12.5 percent"), (20.0, "%", "20%")]
    assert s.topic == {"revenu", "acm", "increas"}
    assert analyse("costs €40 per month").quantities[0].unit == "eur"
    fell, not_fell = analyse("Prices fell."), analyse("Prices did not fall.")
    assert fell.flipped and not fell.negated and not_fell.flipped and not_fell.negated
    assert analyse("Prices fell.").topic == analyse("Prices rose.").topic == {"price", "increas"}
    swapped = analyse("Response was 45% in the treatment arm and 20% in the placebo arm.")
    assert [q.anchor for q in swapped.quantities] == ["treatment", "placebo"]


def claim(cid: str, statement: str, source: str, **extra: Any) -> dict[str, Any]:
    return {"id": cid, "statement": statement, "evidence": [{"source_id": source, "snippet": "s"}],
            "provenance": {"agent": cid.partition(":")[0]}, **extra}


def test_detect_builds_records_and_respects_sources_and_entities() -> None:
    claims = [
        claim("a:C1", BASE.format("40%"), "a:S1"),
        claim("b:C1", BASE.format("12%"), "b:S1"),
        claim("c:C1", BASE.format("25%"), "a:S1"),  # the same source as a:C1: never against a:C1
        claim("d:C1", "The model scores 86% on the reading comprehension benchmark.", "d:S1", entity_ids=["d:E1"]),
        claim("e:C1", "The model scores 69% on the reading comprehension benchmark.", "e:S1", entity_ids=["e:E9"]),
    ]
    found = detect(claims, [])
    assert [tuple(f["claim_ids"]) for f in found] == [("a:C1", "b:C1"), ("b:C1", "c:C1")]
    assert all(f["id"].startswith("detected:contradiction-") and len(f["id"]) == 33 for f in found)
    assert detect(list(reversed(claims)), []) == found  # order of the input does not matter
    same_entity = [claims[3], {**claims[4], "entity_ids": ["d:E1"]}]
    assert [f["kind"] for f in detect(same_entity, [])] == ["numeric"]
    alike = [{"id": "d:E1", "name": "Falcon", "type": "model"}, {"id": "e:E9", "name": "falcon", "type": "software"}]
    assert [f["kind"] for f in detect(claims[3:], [], entities=alike)] == ["numeric"]


def test_explicit_relationships_any_spelling_and_only_between_claims() -> None:
    claims = [claim("a:C1", "Solar output peaks in summer months in Norway.", "a:S1"),
              claim("b:C1", "Wind output peaks in winter along the coast.", "b:S1")]
    rel = {"id": "r:R1", "subject": "b:C1", "predicate": "Contradicted_By", "object": "a:C1",
           "provenance": {"agent": "r"}}
    [found] = detect(claims, [rel])
    assert found["kind"] == "explicit" and found["claim_ids"] == ["a:C1", "b:C1"]
    assert found["provenance"]["from"] == ["a:C1", "b:C1", "r:R1"]
    assert detect(claims, [{**rel, "predicate": "supports"}]) == []
    assert detect(claims, [{**rel, "object": "x:E1"}]) == []  # an entity, not a claim
    numeric = [claim("a:C1", BASE.format("40%"), "a:S1"), claim("b:C1", BASE.format("12%"), "b:S1")]
    [both] = detect(numeric, [{**rel, "subject": "a:C1", "object": "b:C1", "predicate": "contradicts"}])
    assert both["kinds"] == ["explicit", "numeric"] and "compared" in both


def test_recorded_and_resolved_by_an_agent_and_counted_once() -> None:
    claims = [claim("a:C1", BASE.format("40%"), "a:S1"), claim("b:C1", BASE.format("12%"), "b:S1")]
    open_item = {"id": "f:X1", "claim_ids": ["b:C1", "a:C1", "a:C9"], "status": "open", "description": "d"}
    [found] = detect(claims, [], [open_item])
    assert found["recorded_by"] == ["f:X1"] and not found["resolved"]
    assert unresolved([open_item, found]) == [open_item]
    done = {**open_item, "status": "resolved", "resolution": "seasonal figure"}
    [found] = detect(claims, [], [done])
    assert (found["status"], found["resolved"], found["resolved_by"], found["resolution"]) == (
        "resolved", True, "f:X1", "seasonal figure")
    assert unresolved([done, found]) == []
    [alone] = detect(claims, [])
    assert unresolved([alone]) == [alone]
    assert summary(alone)["counted"] and summary(found)["counted"] is False


def test_penalty_is_capped_and_explained() -> None:
    assert contradiction_penalty([]).points == 0
    assert contradiction_penalty(["x"]).points == 3
    many = contradiction_penalty([f"x{i}" for i in range(12)])
    assert many.points == PENALTY_MAX and "12 unresolved contradictions" in many.detail and "7 more" in many.detail


def test_status_lines() -> None:
    claims = [claim("a:C1", BASE.format("40%"), "a:S1"), claim("b:C1", BASE.format("12%"), "b:S1")]
    lines = status_lines([summary(c) for c in detect(claims, [])])
    assert lines[0] == "conflicts 1 contradiction(s), 1 unresolved"
    assert lines[1].startswith("  [open] numeric   detected:contradiction-")
    assert lines[1].endswith(": a:C1 (a, 40%) vs b:C1 (b, 12%)")
    assert status_lines([]) == []


def test_a_cache_gives_exactly_the_full_result_after_any_change() -> None:
    """Views reuse the last search; after edits, removals, new claims and re-sourcing it must not differ."""
    import random

    rng = random.Random(5)
    pool = [s for _, a, b in CONFLICTS + LOOK_ALIKES for s in (a, b)]
    claims: dict[str, dict[str, Any]] = {}
    cache = ConflictCache()
    seen_any = False
    for step in range(60):
        for _ in range(rng.randint(1, 4)):
            action = rng.random()
            if action < 0.5 or not claims:
                cid = f"{rng.choice('abcdef')}:C{rng.randint(1, 12)}"
                claims[cid] = claim(cid, rng.choice(pool), f"{cid.split(':')[0]}:S{rng.randint(1, 2)}")
            elif action < 0.7:
                del claims[rng.choice(sorted(claims))]
            elif action < 0.85:
                cid = rng.choice(sorted(claims))
                claims[cid] = {**claims[cid], "evidence": [{"source_id": f"z:S{rng.randint(1, 3)}", "snippet": "s"}]}
            else:
                cid = rng.choice(sorted(claims))
                claims[cid] = {**claims[cid], "entity_ids": [f"x:E{rng.randint(1, 2)}"]}
        items = [claims[k] for k in rng.sample(sorted(claims), len(claims))]
        incremental = detect(items, [], cache=cache)
        assert incremental == detect(items, []), f"step {step}"
        seen_any = seen_any or bool(incremental)
    assert seen_any


def test_a_cache_seeded_from_saved_rows_finds_what_a_fresh_search_finds() -> None:
    """What the views keep in the ledger, read back from JSON by a new process: only changed claims are analysed."""
    claims = [claim("a:C1", BASE.format("40%"), "a:S1"), claim("b:C1", BASE.format("12%"), "b:S1"),
              claim("c:C1", BASE.format("12%"), "c:S1")]
    cache = ConflictCache()
    found = detect(claims, [], cache=cache)
    saved = json.loads(json.dumps(cache.take_saved()))
    assert set(saved) == {"a", "b", "c"} and cache.take_saved() == {}  # taken once, until something changes
    fresh = ConflictCache()
    for row in saved.values():
        fresh.seed_from(row)
    fresh.seed_from({"claims": {"x:C1": "damaged"}, "conflicts": [["x"], 5]})  # ignored, never trusted
    assert detect(claims, [], cache=fresh) == found and len(found) == 2
    assert fresh.dirty == set()  # nothing analysed: every claim was as saved
    moved = [claims[0], claims[1], {**claims[2], "evidence": [{"source_id": "a:S1", "snippet": "s"}]}]
    again = ConflictCache()
    for row in saved.values():
        again.seed_from(row)
    assert detect(moved, [], cache=again) == detect(moved, []) != found  # c:C1 now rests on a:C1's source
    assert again.dirty == {"a", "c"}


# -- properties ------------------------------------------------------------------------------

SUBJECTS = ["the pilot plant", "the northern wind farm", "the city hospital", "the regional railway"]
VERBS = ["converts", "delivers", "treats", "carries"]
OBJECTS = ["feedstock into ethanol", "power to the grid", "patients with asthma", "passengers across the valley"]
sentences = st.builds(lambda s, v, o, tail: f"{s.capitalize()} {v} {o}{tail}.", st.sampled_from(SUBJECTS),
                      st.sampled_from(VERBS), st.sampled_from(OBJECTS),
                      st.sampled_from(["", " every day", " in winter", " since 2015"]))
units = st.sampled_from(["%", " percent", " ms", " patients", " kg", " million dollars"])


@settings(max_examples=150, deadline=None)
@given(sentences, sentences)
def test_symmetric_and_never_against_itself(a: str, b: str) -> None:
    assert compare(a, a) is None
    one, other = compare(a, b), compare(b, a)
    assert (one and one.kind) == (other and other.kind)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 10_000), st.integers(0, 3))
def test_the_same_value_written_differently_never_conflicts(value: int, decimals: int) -> None:
    number = value / 10 ** decimals
    a = BASE.format(f"{number}%")
    b = BASE.format(f"{number:,} percent")
    assert compare(a, b) is None


@settings(max_examples=150, deadline=None)
@given(st.floats(1, 1e6), st.floats(0, 0.09), st.floats(0.12, 0.9), units)
def test_hedged_values_within_ten_percent_agree_and_far_ones_do_not(value: float, small: float, large: float,
                                                                     unit: str) -> None:
    template = "Output of the northern wind farm reached {}{} during the winter storm."
    close = value * (1 + small)
    far = value * (1 - large)
    hedged = template.format(f"about {value:.4f}", unit)
    assert compare(hedged, template.format(f"{close:.4f}", unit)) is None
    found = compare(hedged, template.format(f"{far:.4f}", unit))
    assert found is not None and found.kind == "numeric"
    assert compare(template.format(f"{value:.4f}", unit), template.format(f"{value * 1.001 + 0.001:.4f}", unit))


BASE_FORM = {"converts": "convert", "delivers": "deliver", "treats": "treat", "carries": "carry"}


@settings(max_examples=100, deadline=None)
@given(sentences)
def test_double_negation_is_an_assertion(sentence: str) -> None:
    words = sentence.rstrip(".").split(" ")
    index = next(i for i, w in enumerate(words) if w in BASE_FORM)
    base = BASE_FORM[words[index]]
    # "The pilot plant converts X" -> "The pilot plant does not fail to convert X"
    negated_twice = " ".join([*words[:index], "does", "not", "fail", "to", base, *words[index + 1:]]) + "."
    negated_once = " ".join([*words[:index], "does", "not", base, *words[index + 1:]]) + "."
    assert compare(sentence, negated_twice) is None
    found = compare(sentence, negated_once)
    assert found is not None and found.kind == "polarity"

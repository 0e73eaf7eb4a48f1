"""The yes / no / mixed / unclear reading of results sentences (agents/offline/stance.py), on sentences written
for these tests (none is taken from the PubMedQA abstracts the benchmark uses)."""

from __future__ import annotations

from typing import Any

import pytest

from agents.offline.answer_lead import deciding_claims, decision_lead
from agents.offline.stance import MIXED, NO, UNCLEAR, YES, decide, is_yes_no, signals
from agents.offline.units import run_in_kind
from agents.offline.vintage import vintages

DOES = "Does daily walking lower systolic blood pressure in older adults?"

# (question, results sentences, expected decision): each is a rule a biomedical abstract needs.
CASES: list[tuple[str, list[str], str]] = [
    # a p-value above 0.05 is no effect, whatever words surround it
    (DOES, ["Systolic pressure fell by 3 mmHg in walkers and by 2 mmHg in controls (p = 0.41)."], NO),
    (DOES, ["Mean systolic pressure at six months was 131 vs 133 mmHg (P=0.27)."], NO),
    (DOES, ["Walkers had a lower systolic pressure at six months (p = 0.003)."], YES),
    (DOES, ["The reduction in systolic pressure was 6 mmHg in walkers against 1 mmHg in controls (P < .001)."], YES),
    # a ratio's confidence interval crossing 1 is no effect; excluding it is one
    ("Is obesity associated with wound infection after hernia repair?",
     ["Obese patients had more wound infections (OR 1.31, 95% CI 0.84-2.05)."], NO),
    ("Is obesity associated with wound infection after hernia repair?",
     ["Obese patients had more wound infections (OR 2.10, 95% CI 1.35-3.27)."], YES),
    ("Is statin use associated with lower mortality after sepsis?",
     ["Statin users had a hazard ratio for death of 0.92 (95% confidence interval 0.71 to 1.19)."], NO),
    ("Does the new protocol shorten the length of stay?",
     ["The mean difference in length of stay was -1.4 days (95% CI -2.6 to -0.2)."], YES),
    ("Does the new protocol shorten the length of stay?",
     ["The mean difference in length of stay was -0.4 days (95% CI -1.6 to 0.8)."], NO),
    # words of no difference
    (DOES, ["Blood pressure was identical in the two arms at the end of the trial."], NO),
    (DOES, ["Blood pressure did not differ between walkers and controls."], NO),
    (DOES, ["Changes in blood pressure were comparable between walkers and controls."], NO),
    # a sentence that only describes the sample says nothing: no decision is better than a guess
    (DOES, ["Two hundred and twelve adults were enrolled and 187 completed follow-up."], UNCLEAR),
    (DOES, ["Forty-one patients were identified from the registry.", "Mean age averaged 71 years."], UNCLEAR),
    # clauses read apart: an effect in one, none in the other, is mixed
    (DOES, ["Systolic pressure was significantly lower in walkers (p = 0.01), whereas diastolic pressure did not "
            "change (p = 0.62)."], MIXED),
    ("Does early feeding reduce complications after bowel surgery?",
     ["Ileus was less frequent with early feeding (p = 0.02), but anastomotic leaks did not differ (p = 0.7)."], MIXED),
    # hedges toward unclear or mixed
    ("Does vitamin D supplementation prevent falls?",
     ["Falls tended to be less frequent in the supplemented group (p = 0.08).",
      "A benefit in women may exist, but further studies are needed."], UNCLEAR),
    ("Is serum ferritin a predictor of outcome in septic shock?",
     ["Ferritin approached significance as a predictor of death (p = 0.06)."], MIXED),
    ("Does radiotherapy after surgery prolong survival in glioma?",
     ["Survival showed a trend toward improvement with radiotherapy (p = 0.09)."], MIXED),
    # a question about sameness is answered yes by "no difference"
    ("Can the short form replace the full quality-of-life questionnaire?",
     ["Scores of the short form correlated closely with the full questionnaire (r = 0.91)."], YES),
    ("Is telephone follow-up an acceptable alternative to clinic visits after cataract surgery?",
     ["Patient satisfaction did not differ between telephone and clinic follow-up (p = 0.48)."], YES),
    ("Is the point-of-care test as accurate as the laboratory assay for troponin?",
     ["Results of the two assays were similar across the measuring range."], YES),
    ("Is the point-of-care test as accurate as the laboratory assay for troponin?",
     ["The point-of-care test missed significantly more infarctions than the laboratory assay (p < 0.001)."], NO),
    # a question about a negative flips the reading
    ("Is antibiotic prophylaxis unnecessary in clean hand surgery?",
     ["Infection rates did not differ with or without prophylaxis (p = 0.55)."], YES),
    # the question's own direction: a finding the other way says no
    ("Is statin use associated with lower mortality after sepsis?",
     ["Mortality was significantly higher among statin users (p = 0.02)."], NO),
    ("Is statin use associated with lower mortality after sepsis?",
     ["Mortality was significantly lower among statin users (p = 0.02)."], YES),
    ("Does shaving the incision site increase wound infections?",
     ["Wound infections were significantly fewer after shaving (p = 0.03)."], NO),
    # significance stated in words
    ("Is smoking associated with delayed fracture healing?",
     ["Smokers healed significantly later than non-smokers."], YES),
    ("Is smoking associated with delayed fracture healing?",
     ["Healing time was not significantly longer in smokers."], NO),
]


@pytest.mark.parametrize(("question", "sentences", "expected"), CASES, ids=[f"case{n}" for n in range(len(CASES))])
def test_results_sentences_decide_a_yes_no_question(question: str, sentences: list[str], expected: str) -> None:
    assert decide(question, sentences) == expected


@pytest.mark.parametrize("question", [
    "Tranexamic acid in hip arthroplasty: a safe way to reduce blood loss?",
    "Routine chest radiographs after central line placement; still needed?",
    "Early mobilisation after knee replacement: is less more?",
    "Should asymptomatic gallstones be removed?",
])
def test_titles_put_as_questions_are_yes_no(question: str) -> None:
    assert is_yes_no(question)


@pytest.mark.parametrize("question", [
    "Hip fracture in the elderly: which anaesthesia is better?",
    "Knee pain: surgery or physiotherapy?",
    "Bone density",
    "What reduces falls in care homes?",
])
def test_wh_and_choice_questions_are_not_yes_no(question: str) -> None:
    assert not is_yes_no(question)


def test_a_clause_with_its_own_statistics_counts_once_for_each_side() -> None:
    split = signals("Pain fell significantly (p < 0.01); function did not improve (p = 0.3).")
    assert split.finding == pytest.approx(0.5) and split.null == pytest.approx(0.5)
    assert not signals("Sixty-two women were included in the analysis.").any


def _claim(text: str, section: str, source: str = "src-a") -> dict[str, Any]:
    return {"statement": text, "tags": ["finding", "extractive", f"section:{section}"], "source": source}


def test_a_title_put_as_a_question_gets_a_decision() -> None:
    claims = [_claim("Blood loss was significantly lower with tranexamic acid (p < 0.001).", "results")]
    assert decision_lead("Tranexamic acid in hip arthroplasty: a safe way to reduce blood loss?", claims) == "Yes."


def test_background_does_not_decide_when_the_study_reports_results() -> None:
    claims = [_claim("Walking is known to be associated with a lower blood pressure.", "introduction"),
              _claim("Blood pressure did not differ between walkers and controls (p = 0.52).", "results")]
    assert decision_lead(DOES, claims) == "No."
    assert decision_lead("What lowers blood pressure?", claims) == ""


def test_the_deciding_results_of_the_quoted_study_are_quoted_too() -> None:
    quoted = [_claim("We enrolled 300 adults over 65.", "methods"),
              _claim("Three hundred adults were randomised.", "results")]
    candidates = [*quoted, _claim("Systolic pressure fell by 8 mmHg in walkers (p < 0.001).", "results"),
                  _claim("Walkers had fewer strokes (p = 0.01).", "results", source="src-b"),
                  _claim("Walking lowers pressure in younger adults (p < 0.01).", "introduction")]
    added = deciding_claims(DOES, quoted, candidates, 2, lambda c: c["source"])
    assert [c["statement"] for c in added] == ["Systolic pressure fell by 8 mmHg in walkers (p < 0.001)."]
    assert deciding_claims("How much did pressure fall?", quoted, candidates, 2, lambda c: c["source"]) == []
    assert decision_lead(DOES, quoted + added) == "Yes."


def test_a_pmid_is_neither_a_year_nor_a_version_number() -> None:
    found = vintages({"a": {"title": "PMID: 19100463", "local_path": "/docs/19100463.txt"},
                      "b": {"title": "PMID: 20629769", "local_path": "/docs/20629769.txt"},
                      "c": {"title": "Price list", "local_path": "/docs/price-list-20240101.md"},
                      "d": {"title": "Price list", "local_path": "/docs/price-list-20250101.md"}})
    assert found["a"].date is None and not found["a"].outdated and not found["b"].outdated
    assert found["c"].superseded_by == "d" and found["d"].date.isoformat() == "2025-01-01"  # type: ignore[union-attr]


@pytest.mark.parametrize(("label", "kind"), [
    ("MEASUREMENTS AND MAIN RESULTS: Mortality was 20%.", "results"),
    ("PATIENTS AND METHOD: We studied 40 women.", "methods"),
    ("PRIMARY AND SECONDARY OUTCOME MEASURES: Pain at 6 weeks.", "methods"),
    ("BACKGROUND AND OBJECTIVES: Falls are common.", "introduction"),
    ("RESULTS: Pain fell.", "results"),
    ("The US AND UK: two markets.", ""),
])
def test_a_structured_abstracts_compound_label_opens_its_section(label: str, kind: str) -> None:
    assert run_in_kind(label) == kind

"""Answers from a folder of documents: list items, table rows, dates, archived copies, yes/no, embeddings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.offline.corpus import Corpus
from agents.offline.documents import make_document
from agents.offline.ingest import ingest_dirs, ingest_file
from agents.offline.retrieval import Retriever
from agents.offline.semantic import embedder
from agents.offline.stance import MIXED, NO, YES, decide, is_yes_no
from agents.offline.textindex import PassageIndex
from agents.offline.units import document_units
from agents.offline.vintage import asks_for_current, parse_date, vintages
from tests.helpers.data import COMPANY, COMPANY_QUESTIONS


@pytest.fixture(scope="module")
def company() -> Retriever:
    docs = ingest_dirs([COMPANY]).documents
    return Retriever(Corpus({d.id: d for d in docs}, PassageIndex.build(docs)))


def _name(retriever: Retriever, source_id: str) -> str:
    return str(retriever.corpus.documents[source_id].source["local_path"]).rsplit("/", 1)[-1]


def _units(text: str) -> list[tuple[str, str, str, bool]]:
    doc = make_document({"title": "t"}, [text])
    return [(u.kind, doc.pages[0][u.start:u.end], u.context, u.quotable) for u in document_units(doc, set(), None)]


def test_list_items_after_a_lead_in_are_candidates_with_the_lead_in_as_context() -> None:
    units = _units("Key figures for 2024:\n\n- Revenue: $48.2 million\n- Employees at year end: 340\n")
    items = [u for u in units if u[0] == "item"]
    assert [(text, context, ok) for _, text, context, ok in items] == [
        ("- Revenue: $48.2 million", "Key figures for 2024:", True),
        ("- Employees at year end: 340", "Key figures for 2024:", True)]


def test_table_rows_are_candidates_with_their_header_and_quote_verbatim() -> None:
    text = "Quarterly revenue\n\n| Quarter | Revenue ($ million) |\n| Q3 2024 | 12.4 |\n| Q4 2024 | 13.3 |\n"
    rows = [u for u in _units(text) if u[0] == "row"]
    assert [r[1].rsplit("\n", 1)[-1] for r in rows] == ["| Q3 2024 | 12.4 |", "| Q4 2024 | 13.3 |"]
    # a row too short to verify on its own is quoted with its header; the quote stays verbatim
    assert all(r[1].startswith("Quarterly revenue") and "Revenue ($ million)" in r[1] and r[3] for r in rows)


def test_prose_wrapped_over_lines_after_a_colon_stays_one_sentence() -> None:
    text = ("Overall satisfaction was very high among the people we interviewed in the department:\n"
            "59% of the respondents rated their satisfaction level as very good, and most of the others\n"
            "rated it as good.")
    assert [u[0] for u in _units(text)] == ["sentence"]


def test_an_html_table_row_reads_as_one_line_of_cells() -> None:
    doc = ingest_file(COMPANY / "pricing.html")
    assert "Standard delivery | $6.50 | within 4 hours" in doc.pages[0]
    assert doc.source["published"] == "2025-06-01"


def test_dates_archives_and_newer_versions() -> None:
    assert parse_date("Prices valid from June 1, 2025.").isoformat() == "2025-06-01"  # type: ignore[union-attr]
    assert ingest_file(COMPANY / "policies" / "returns.txt").source["published"] == "2025-02-01"
    docs = ingest_dirs([COMPANY]).documents
    found = vintages({d.id: d.source for d in docs})
    by_name = {str(d.source["local_path"]).rsplit("/", 1)[-1]: found[d.id] for d in docs}
    assert by_name["q2-2025-update.md"].archived and by_name["q2-2025-update.md"].superseded_by
    assert not by_name["q3-2025-update.md"].outdated and not by_name["annual-report-2024.md"].outdated
    assert asks_for_current("What is the latest quarterly revenue?") and not asks_for_current("Revenue in 2023?")


@pytest.mark.parametrize("qid", [f"N{n:02d}" for n in (1, 2, 3, 4, 5, 6, 11, 12)])
def test_company_questions_get_the_current_value_first_and_never_an_outdated_one(company: Retriever, qid: str) -> None:
    question = next(q for q in map(json.loads, COMPANY_QUESTIONS.read_text().splitlines()) if q["id"] == qid)
    found = company.search(question["question"], limit=3)
    if question["kind"] == "out-of-scope":
        assert found == []
        return
    top = found[0]
    assert question["answer"] in top.sentence.statement
    assert _name(company, top.sentence.source_id) == question["document"]
    assert not any(value in top.sentence.statement for value in question["outdated"])


def test_the_embedding_model_ships_with_the_package_and_loads_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = embedder()
    assert model is not None, "wordllama is a dependency: its weights are inside the wheel"
    vectors = model.embed(["Revenue was $12 million in the quarter.", "How much money did they make?",
                           "The cat sat on the mat."])
    assert vectors @ vectors[1] @ [1, 0, 0] > vectors @ vectors[1] @ [0, 0, 1]  # meaning, not shared words


def test_yes_no_decisions_follow_the_evidence() -> None:
    assert is_yes_no("Is X associated with Y?") and is_yes_no("Double reading of barium enemas: is it necessary?")
    assert not is_yes_no("What is the bed capacity?")
    assert decide("Is X associated with Y?", ["X was significantly associated with Y (p<0.01)."]) == YES
    assert decide("Does X reduce Y?", ["There was no significant difference in Y between the groups."]) == NO
    assert decide("Does X reduce Y?", ["Y was significantly reduced in men.",
                                       "Y was not significantly reduced in women."]) == MIXED


def _run(tmp: Path, question: str, folder: Path) -> str:
    env = {**os.environ, "CCONDUCTOR_SESSIONS_DIR": str(tmp / "sessions"), "HOME": str(tmp)}
    env.pop("ANTHROPIC_API_KEY", None)
    out = subprocess.run([sys.executable, "-m", "orchestrator", "run", question, "--input-dir", str(folder), "--json"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    session = Path(json.loads(out.stdout.splitlines()[-1])["session"])
    report = (session / "mission-report.md").read_text(encoding="utf-8")
    return report.split("## Answer", 1)[1].split("\n## ", 1)[0]


def test_the_report_gives_the_current_figure_first_and_labels_an_older_one(tmp_path: Path) -> None:
    answer = _run(tmp_path, "How many drones does the company operate?", COMPANY)
    assert "260 drones" in answer
    first, *rest = [p for p in answer.split("\n\n") if p.strip()]
    assert "260 drones" in first and not any(old in first for old in ("240 drones", "212 drones", "180 drones"))
    assert all(p.startswith("Outdated, not the current value") for p in rest)


def test_a_yes_no_question_is_answered_yes_or_no_with_its_evidence(tmp_path: Path) -> None:
    docs = tmp_path / "abstracts"
    docs.mkdir()
    (docs / "trial.txt").write_text(
        "OBJECTIVE: To determine whether early mobilisation shortens hospital stay after hip surgery.\n\n"
        "METHODS: 240 patients were randomised to mobilisation on day one or on day three.\n\n"
        "RESULTS: Hospital stay was significantly shorter with early mobilisation (6.1 vs 8.4 days, p<0.001). "
        "Early mobilisation was significantly associated with fewer pressure ulcers.\n", encoding="utf-8")
    (docs / "other.txt").write_text(
        "RESULTS: Coffee consumption did not differ between the night shift and the day shift. There was no "
        "significant difference in reported sleep quality between the two shifts.\n", encoding="utf-8")
    answer = _run(tmp_path, "Does early mobilisation shorten hospital stay after hip surgery?", docs)
    assert answer.strip().startswith("Yes.") and "6.1 vs 8.4 days" in answer


class _FakeSentenceModel:
    """What TransformerEmbedder uses of a sentence_transformers model (encode, dimension)."""

    def get_sentence_embedding_dimension(self) -> int:
        return 3

    def encode(self, texts: list[str], **options: object) -> list[list[float]]:
        assert options.get("normalize_embeddings") is True
        return [[1.0, 0.0, 0.0] if "revenue" in t else [0.0, 1.0, 0.0] for t in texts]


def test_the_optional_transformer_embeds_with_its_own_calibration(monkeypatch: pytest.MonkeyPatch) -> None:
    from agents.offline import semantic

    strong = semantic.TransformerEmbedder(_FakeSentenceModel())
    vectors = strong.embed(["revenue grew", "the fleet"])
    assert vectors.shape == (2, 3) and vectors.dtype == np.float32 and strong.embed([]).shape == (0, 3)
    assert strong.min_similarity > semantic.Embedder.min_similarity  # its cosines run higher
    monkeypatch.setenv("CCONDUCTOR_EMBEDDINGS", "static")  # the static model is kept on request
    assert semantic._transformer() is None

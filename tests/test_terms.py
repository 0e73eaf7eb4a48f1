"""One tokenizer, one stopword list, one stemmer (orchestrator/model/terms.py) for the whole code base."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from orchestrator.model.terms import (
    NEGATIONS,
    QUESTION_WORDS,
    SEARCH_STOPWORDS,
    STOPWORDS,
    content_terms,
    coverage,
    critical_tokens,
    search_terms,
    search_words,
    stem,
    words,
)
from orchestrator.model.textnorm import normalize

ROOT = Path(__file__).resolve().parents[1]
HOME = ROOT / "orchestrator" / "model" / "terms.py"


def test_reader_words_keep_negations_and_whole_numbers() -> None:
    assert words(normalize("It didn't rise by 4,000 or 1.5%")) == ["it", "didn't", "rise", "by", "4000", "or", "1.5"]
    assert critical_tokens(normalize("not 4,000 but 12 percent")) == (["12", "4000"], ["percent"], ["not"])
    assert critical_tokens(normalize("It didn't work without it")) == ([], [], ["not", "without"])


def test_search_words_keep_gene_names_and_sqlite_splits_as_unicode61() -> None:
    assert search_words("P53 and COVID19 rose 1.5-fold") == ["p53", "and", "covid19", "rose", "1.5", "fold"]
    assert search_words("P53 rose 1.5-fold", sqlite=True) == ["p53", "rose", "1", "5", "fold"]


def test_the_stop_lists_are_layered_not_copied() -> None:
    # a search drops everything the function-word list drops, and negations and words of order too
    assert STOPWORDS | NEGATIONS <= SEARCH_STOPWORDS
    # what tells two claims or two measurements apart is never a plain stopword
    assert STOPWORDS.isdisjoint(NEGATIONS | {"before", "after", "more", "less", "first", "during"})
    assert {"more", "after", "not", "without"} <= SEARCH_STOPWORDS


def test_one_stemmer_folds_british_spellings() -> None:
    assert stem("realised") == stem("realized") == stem("realizing")
    assert stem("analysed") == stem("analyzed")
    assert content_terms("circulating") == content_terms("circulates")


def test_question_words_are_not_content() -> None:
    assert content_terms("Explain what the session may know about circulating tumour cells") == \
        [stem("circulating"), "tumour", stem("cells")]
    assert "explain" in QUESTION_WORDS and "explain" not in STOPWORDS
    assert coverage("Tumour cells circulate", "circulating tumour cells were counted") == 1.0


def test_a_duplicate_check_keeps_what_a_search_drops() -> None:
    said, asked = "The drug did not reduce risk after 3 months", "the drug reduced risk"
    assert "not" not in search_terms(said) and "after" not in search_terms(said)
    assert {"not", "after"} <= set(search_terms(said, keep_qualifiers=True))
    assert set(search_terms(asked)) <= set(search_terms(said))
    # a short word is left out before stemming, so "IDs" (stem "id") stays a sentence term
    assert search_terms("IDs of 3 ox", numbers=False, shortest=3) == ["id"]


def _modules() -> list[Path]:
    return [p for top in ("orchestrator", "agents", "benchmarks") for p in sorted((ROOT / top).rglob("*.py"))]


def _assigned(tree: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        names += [t.id for t in targets if isinstance(t, ast.Name)]
    return names


@pytest.mark.parametrize("check", ["stopwords", "stemmer"])
def test_no_module_keeps_its_own(check: str) -> None:
    """A second stopword list or stemmer is how the three lists and six tokenisers came about."""
    found = []
    for path in _modules():
        if path == HOME:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if check == "stopwords":
            found += [f"{path.relative_to(ROOT)}: {name}" for name in _assigned(tree)
                      if ("STOP" in name.upper() and "WORD" in name.upper()) or name == "_STOP"]
        else:
            found += [f"{path.relative_to(ROOT)}: imports Stemmer" for node in ast.walk(tree)
                      if (isinstance(node, ast.Import) and any(a.name == "Stemmer" for a in node.names))
                      or (isinstance(node, ast.ImportFrom) and node.module == "Stemmer")]
    assert found == [], "use orchestrator.model.terms (STOPWORDS, SEARCH_STOPWORDS, stem_words)"


def test_sentences_differing_by_a_negation_or_an_order_word_are_not_duplicates() -> None:
    """The duplicate check once read the search's terms, which drop "not" and "before"."""
    from agents.offline.selection import same_statement

    said = "The drug reduced the risk of stroke in older adults"
    assert same_statement(said, said + ".")
    assert not same_statement(said, "The drug did not reduce the risk of stroke in older adults")
    assert not same_statement("Mortality rose before the policy in older adults",
                              "Mortality rose after the policy in older adults")

"""Content terms: the words that carry meaning, stemmed (Snowball, PyStemmer), in the normal form.

One tokenisation for whatever compares a question with a text (the `ask` BM25 index and its
relevance cut-off, the word coverage of a cited sentence, which sources bear on a question), so
"circulating" in an answer meets "circulates" in a passage.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from orchestrator.model.textnorm import normalize, words

STOPWORDS = frozenset(
    {"a", "an", "and", "are", "as", "at", "be", "been", "being", "but", "by", "can", "could", "did", "do", "does",
     "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "of", "on",
     "or", "our", "should", "so", "such", "than", "that", "the", "their", "them", "then", "there", "these", "they",
     "this", "those", "to", "was", "we", "were", "what", "when", "where", "which", "who", "whom", "whose", "why",
     "will", "with", "would", "you", "your", "about", "explain", "describe", "tell", "session", "also"}
)


@cache
def _stemmer() -> Any:
    import Stemmer

    return Stemmer.Stemmer("english")


def content_terms(text: str) -> list[str]:
    """Stemmed words and numbers of ``text`` without stopwords, in order (repeats kept)."""
    stem = _stemmer()
    return [stem.stemWord(w) for w in words(normalize(text)) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())]


def coverage(sentence: str, passage: str) -> float:
    """Share of the sentence's content terms that the passage uses (1.0 for a sentence with none)."""
    wanted = set(content_terms(sentence))
    return len(wanted & set(content_terms(passage))) / len(wanted) if wanted else 1.0

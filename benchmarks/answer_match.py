"""Whether a cited passage holds an expected answer: the one judgement bench_answers.py and bench_retrieval.py share.

Not a benchmark itself (imported by name, like harness.py).
"""

from __future__ import annotations

import re


def flat(text: str) -> str:
    """Case-folded, single-spaced, with typographic quotes made plain and Markdown emphasis dropped."""
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    return " ".join(text.replace("*", "").split()).casefold()


def same(unit: str, evidence: str, answer: str = "") -> bool:
    """The cited sentence is the evidence (cut differently), states a short answer verbatim, or states every
    figure of a numeric answer ("81.1 million papers" in "a corpus of 81.1M papers")."""
    a, b = flat(unit), flat(evidence)
    if answer and len(answer.split()) <= 4 and flat(answer) in a:
        return True
    figures = re.findall(r"\d+(?:[.,]\d+)?", answer)
    if figures and all(re.search(rf"(?<![\d.]){re.escape(f)}(?![\d])", a) for f in figures):
        return True
    return bool(b) and (a in b or b in a or len(set(a.split()) & set(b.split())) >= 0.6 * len(set(b.split())))

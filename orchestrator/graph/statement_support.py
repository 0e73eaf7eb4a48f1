"""Does a claim's statement say what its verified quotes say? Numbers and negations, checked mechanically (pure).

The report states a claim by its statement and counts it among the claims whose evidence was
verified, so a statement that changes its quote's numbers ("eliminated mortality in 100 percent of
cases" over a quote saying "reduced mortality by 20 percent") or drops its negation ("reduced
mortality" over "did not reduce mortality") would be reported as verified when it is not. Which
passage supports which claim stays the agent's judgement; this only checks what a paraphrase may
never change, as an approximate quote may not (:func:`orchestrator.model.terms.critical_tokens`).
A claim with no verified quote is left to SHACL (a high-priority one needs one).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from orchestrator.contradictions.statements import NUMBER_WORDS, analyse
from orchestrator.model.problems import Problem
from orchestrator.model.terms import critical_tokens
from orchestrator.model.textnorm import normalize


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Words that deny what follows them, besides the plain negations of ``critical_tokens``: a statement that
#: says "failed to reduce" or "no effect" keeps its quote's negation in other words.
_DENYING = _set("fail fails failed failing unable lack lacks lacked without neither nor none absent unchanged")


#: Digits as written ("4,000", "0.05"): what a statement and its quote share when they give a number alike.
_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")

def _values(text: str, years: bool = True) -> dict[float, str]:
    """The values a text states, read as the contradiction search reads them (units converted, numbers written in
    words read, "phase 3" and "COVID-19" names rather than values; a unit or a counted thing, "120 patients"),
    and its years unless ``years`` is false:
    value -> as written."""
    statement = analyse(text)
    # a bare number is as often a label ("Claim 0", "Table 2") as a value: only values with a unit count
    found = {round(q.value, 9): q.text for q in statement.quantities if q.unit}
    return found | {float(year): str(year) for year in statement.years} if years else found


def unsupported_statements(contribution: Mapping[str, Any]) -> list[Problem]:
    """A problem for each claim whose statement has a number none of its verified quotes has, or says as
    asserted what all of its verified quotes negate."""
    problems = []
    for claim in contribution["items"]["claims"]:
        quotes = [str((ev.get("verification") or {}).get("matched_text") or ev.get("snippet") or "")
                  for ev in claim.get("evidence") or () if isinstance(ev, Mapping)
                  and (ev.get("verification") or {}).get("verified") is True]
        if not quotes:
            continue
        problem = _statement_problem(claim, quotes)
        if problem is not None:
            problems.append(problem)
    return problems


def _missing_values(statement: str, quotes: list[str]) -> list[str]:
    """The values of ``statement`` no quote says, as written; most statements repeat their quotes' numbers digit
    for digit, which a plain comparison settles without reading units."""
    digits = set(_DIGITS.findall(statement))
    if not digits and NUMBER_WORDS.isdisjoint(statement.lower().split()):
        return []
    if digits <= {d for q in quotes for d in _DIGITS.findall(q)}:
        return []
    have = {value for q in quotes for value in _values(q)}
    # a statement's years are its context ("According to Smith (2020)", "In 2019, ..."), not what it measures
    return [shown for value, shown in _values(statement, years=False).items() if value not in have]


def _statement_problem(claim: Mapping[str, Any], quotes: list[str]) -> Problem | None:
    said = normalize(str(claim.get("statement") or ""))
    negations = critical_tokens(said)[2]
    quoted = [critical_tokens(normalize(q)) for q in quotes] if not negations else []
    missing = _missing_values(str(claim.get("statement") or ""), quotes)
    dropped = not negations and all(q[2] for q in quoted) and not _DENYING.intersection(said.split())
    if not missing and not dropped:
        return None
    provenance = claim.get("provenance") or {}
    name = claim.get("local_id") or claim.get("id")
    what = []
    if missing:
        what.append(f"{', '.join(repr(m) for m in missing)}, which no verified quote of the claim says")
    if dropped:
        negation = sorted({w for q in quoted for w in q[2]})
        what.append(f"as asserted what every verified quote negates ({', '.join(negation)})")
    return Problem(
        provenance.get("file"), provenance.get("pointer", ""), "claim.statement_unsupported",
        f"claim {name}'s statement says {' and '.join(what)}: the report states the claim by its statement and "
        f"counts it as verified, so its numbers and negations must be those of its quotes "
        f"(statement: {str(claim.get('statement') or '')[:200]!r}; quoted: {quotes[0][:200]!r})",
        "state in 'statement' what the quoted passage says, with its numbers and its negation, or quote (in "
        "'snippet') the passage that says what the statement says",
        details={"claim": claim.get("id")},
    )

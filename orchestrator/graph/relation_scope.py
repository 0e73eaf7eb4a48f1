"""Whether a sentence asserts a relation or only mentions it (pure).

A passage can name both ends of a relationship and carry its relation word without saying it holds:
"Madrid, not Lisbon, is the capital of Spain" says it of Madrid, naming Lisbon only to set it apart.
Read sentence by sentence, a mention of an end does not count when a contrast stands right before it
("not", "nor", "neither", "rather than", "instead of", "unlike", "except", "as opposed to", "in
contrast to", "no longer", "formerly"); a relation word does not count when its verb group negates it
("is not the capital", "did not significantly reduce", "has never been"), says it only of the past
("was formerly", "once", "the former capital", "used to be"), or only supposes it ("would be", "if",
"whether", "suppose", "were Lisbon ..."), when the sentence denies what follows ("it is false that",
"a misconception that", "wrongly believed"), or asks it ("Is Lisbon the capital of Spain?").

Hedges still assert: "may be", "probably", "suggest that" are how sources state findings, and a claim's
own confidence carries the doubt. The past tense alone asserts too ("Lisbon was the capital in 1900");
only words that say it no longer holds do not. "Not only", "not just" and "not surprisingly" do not negate.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from orchestrator.graph.relation_words import spans
from orchestrator.model.terms import stem_words, words
from orchestrator.model.textnorm import normalize

#: A reason a mention or a relation word is not asserted: (kind, the words that say so).
Reason = tuple[str, str]

_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
#: Punctuation that sets a phrase apart inside a sentence (a comma before a space, brackets, a dash).
_BREAK = re.compile(r",(?=\s|$)|[()\[\]]|:(?=\s)|\s-{1,2}\s")


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_NEGATION = _set("not never no nor neither cannot")
#: Words that deny the verb they stand before, like a negation ("failed to reduce", "hardly the capital").
_NEGATIVE = _NEGATION | _set("hardly scarcely barely fail fails failed failing unable unlikely")
#: After a negation: an idiom that affirms ("not only the capital but also ...", "no doubt that").
_AFFIRMING = _set("only just merely simply least surprisingly surprising unlike doubt")
_PAST = _set("formerly previously once former ex erstwhile")
#: Words of a verb group between its subject and the relation word ("was not found to reduce").
_VERB_GROUP = _set("""
is are was were be been being am has have had having do does did can could may might must shall should will
the a an to one of its their his her this that also still now currently officially really actually even
yet ever always longer already again become became becomes remain remains remained get got
found shown known thought believed considered regarded reported said seen observed proven proved expected
deemed held called named likely probably possibly perhaps generally often usually by means
""")
#: Words that deny the clause they introduce ("it is false that ...", "a misconception that ...") or the verb
#: they stand before ("wrongly believed to be").
_DISBELIEF = _set("false untrue myth misconception fallacy wrongly falsely erroneously mistakenly incorrectly")
#: Verbs that deny or doubt the "that" clause they introduce ("critics deny that ..."), unless negated
#: themselves ("nobody denies that", "no doubt that").
_DENYING = _set("deny denies denied denying dispute disputes disputed disputing refute refutes refuted reject rejects "
                "rejected doubt doubts doubted doubting question questions questioned contest contests contested")
#: Words that give the "that" clause after them only as someone's claim or a rumour ("critics claimed that ...",
#: "allegations that ..."): a source reporting it does not say it holds. ("Reported", "showed", "found" assert.)
_ATTRIBUTING = _set("claim claims claimed claiming allege alleges alleged alleging allegation allegations "
                    "rumour rumours rumoured rumor rumors rumored purport purports purported supposedly allegedly")
#: Verbs of belief: denied when few or none hold them ("few believe that", "nobody thinks that").
_BELIEVING = _set("believe believes believed think thinks thought accept accepts accepted agree agrees agreed")
#: After a clause: words that say it is not so ("rumours that ... were false", "the claim that ... is a myth").
_UNFOUNDED = _DISBELIEF | _set("unfounded baseless wrong incorrect mistaken groundless")
_COPULA = _set("is are was were be been proved proven turned out")
#: Verbs of wanting or trying: before "to", what follows is only intended ("wanted to become the capital").
_INTENDING = _set("want wants wanted wish wishes wished hope hopes hoped plan plans planned aim aims aimed seek seeks "
                  "sought try tries tried attempt attempts attempted intend intends intended aspire aspires aspired "
                  "propose proposes proposed bid bids expect expects expected strive strives strove")
#: Words that open a clause the sentence only supposes.
_SUPPOSING = _set("if whether suppose supposing assuming assume imagine unless hypothetically")
_INVERTED = _set("were had should")
#: Function words a contrast may stand before ("instead of the", "not of").
_SKIP = _set("the a an of to from with for in on at by")
#: Words that set the mention after them apart ("instead of", "as opposed to", "in contrast to", "apart from").
_CONTRASTS = _set("not nor neither unlike except excluding instead opposed contrast contrary apart")


@dataclass(frozen=True)
class Sentence:
    """One sentence as word tokens (normal form), their stems, and where punctuation sets phrases apart."""

    plain: list[str]
    stems: list[str]
    #: positions i with a comma, bracket or dash right before plain[i]
    breaks: frozenset[int]
    question: bool


def sentences(text: str) -> list[Sentence]:
    """The sentences of ``text`` (a ";" ends one too: it joins two statements)."""
    found = []
    for part in _SENTENCE_END.split(normalize(text)):
        plain: list[str] = []
        breaks: set[int] = set()
        for k, chunk in enumerate(_BREAK.split(part)):
            if k:
                breaks.add(len(plain))
            plain += words(chunk)
        if plain:
            found.append(Sentence(plain, stem_words(w.removesuffix("'s") for w in plain), frozenset(breaks),
                                  part.rstrip(" \"')").endswith("?")))
    return found


def _negation(word: str) -> bool:
    return word in _NEGATION or word.endswith("n't")


def _negative(word: str) -> bool:
    return word in _NEGATIVE or word.endswith("n't")


def mention_reason(sentence: Sentence, span: tuple[int, int]) -> Reason | None:
    """Why the mention at ``span`` does not name the entity as one the sentence speaks of, or None.

    A contrast right before it ("not Lisbon", "rather than Lisbon", "instead of Lisbon") sets it apart; "no
    longer Toledo" and "formerly Toledo" say it held only once.
    """
    plain, i = sentence.plain, span[0] - 1
    while i >= 0 and plain[i] in _SKIP and i + 1 not in sentence.breaks:
        i -= 1
    if i < 0 or i + 1 in sentence.breaks:
        return _elided(sentence, span)
    word, before = plain[i], (plain[i - 1] if i > 0 and i not in sentence.breaks else "")
    said = " ".join(plain[i:span[1] + 1])
    if word == "longer" and before == "no":
        return "negated", f"no {said}"
    if word in _PAST and word not in ("once", "former"):
        return "past", said
    if word == "than" and before in ("rather", "other"):
        return "apart", f"{before} {said}"
    if word in _CONTRASTS:
        return "apart", said
    return _elided(sentence, span)


def _elided(sentence: Sentence, span: tuple[int, int]) -> Reason | None:
    """A mention followed by a negation that ends its clause ("whereas Madrid is not."): the relation said of
    another entity before it is denied of this one."""
    plain, k = sentence.plain, span[1] + 1
    group = []
    while k < len(plain) and k not in sentence.breaks and (plain[k] in _VERB_GROUP or _negation(plain[k])):
        group.append(plain[k])
        k += 1
    clause_ends = k == len(plain) or k in sentence.breaks or plain[k] in ("either", "too")
    if group and clause_ends and any(_negation(w) for w in group):
        return "negated", " ".join(plain[span[0]:k])
    return None


def but_for(sentence: Sentence, r: int, mentions: Sequence[tuple[int, int]]) -> bool:
    """Whether a negated relation word is the first half of "not ... but ...": "Lisbon is not the capital of
    Spain but of Portugal" asserts it of the mention after "but"."""
    for start, _ in mentions:
        i = start - 1
        while i > r and sentence.plain[i] in _SKIP:
            i -= 1
        if i > r and sentence.plain[i] == "but":
            return True
    return False


def relation_reasons(sentence: Sentence, r: int) -> list[Reason]:
    """Why the relation word at ``r`` is not asserted (none when it is); a "negated" reason alone means it
    is said negated, which a predicate that denies ("does-not-require") asks for."""
    plain, found = sentence.plain, []
    if sentence.question:
        found.append(("asked", "?"))
    j = r - 1
    while j >= 0:  # the verb group before the relation word, commas and all ("is not, and never was, the")
        word = plain[j]
        after = plain[j + 1] if j + 1 < len(plain) else ""
        if word in _DISBELIEF:
            found.append(("disbelieved", word))
        elif _negative(word) and after not in _AFFIRMING:
            found.append(("negated", f"{word} {after}" if after in ("longer", "means") else word))
        elif word == "from" and j > 0 and plain[j - 1] == "far":
            found.append(("negated", "far from"))
        elif word in _PAST or (word == "used" and after == "to"):
            found.append(("past", "used to" if word == "used" else word))
        elif word == "would":
            found.append(("supposed", word))
        elif word not in _VERB_GROUP and not word.endswith("ly"):
            break
        j -= 1
    clause = max((b for b in sentence.breaks if b <= r), default=0)
    intending = [k for k in range(clause, r - 1) if plain[k] in _INTENDING and plain[k + 1] == "to"]
    if intending:
        found.append(("intended", f"{plain[intending[0]]} to"))
    supposing = [w for w in plain[clause:r] if w in _SUPPOSING]
    if supposing:
        found.append(("supposed", supposing[0]))
    elif clause == 0 and plain[0] in _INVERTED and not sentence.question and r > 1:
        found.append(("supposed", plain[0]))
    for t in (k for k in range(r) if plain[k] == "that"):  # "there is no evidence that", "a myth that"
        frame = [k for k in range(max(t - 4, 0), t) if not any(b in sentence.breaks for b in range(k + 1, t + 1))
                 and (plain[k] in _DISBELIEF or (plain[k] in _DENYING and not _denial_denied(plain, k))
                      or (plain[k] in _BELIEVING and _denial_denied(plain, k))  # "few believe that"
                      or (_negative(plain[k]) and plain[k + 1] not in _AFFIRMING and (k > t - 4 or plain[k] == "no")
                          and not _DENYING.intersection(plain[k + 1:t])))]  # "does not dispute that" asserts
        if frame:
            found.append(("disbelieved", " ".join(plain[frame[0]:t + 1])))
        attributed = [k for k in range(max(t - 3, 0), t) if plain[k] in _ATTRIBUTING
                      and not any(b in sentence.breaks for b in range(k + 1, t + 1))]
        if attributed and not frame:
            found.append(("attributed", " ".join(plain[attributed[0]:t + 1])))
        denial = _denied_after(sentence, r)
        if denial and not frame:  # "rumours that Braga is the capital were false"
            found.append(("disbelieved", f"that ... {denial}"))
    found += [("attributed", w) for w in plain[clause:r] if w in ("allegedly", "supposedly", "reportedly")][:1]
    return found


def _denied_after(sentence: Sentence, r: int) -> str | None:
    """The words after ``r`` that say the clause is not so ("... were false", "... proved unfounded"), or None."""
    plain = sentence.plain
    for k in range(r + 1, len(plain) - 1):
        if plain[k] in _COPULA:
            said = [w for w in plain[k + 1:k + 4] if w in _UNFOUNDED]
            if said and not any(_negation(w) for w in plain[k + 1:plain.index(said[0], k + 1)]):
                return " ".join(plain[k:plain.index(said[0], k + 1) + 1])
    return None


#: Words that change what the words after them claim, beyond those that deny it: a hedge, a supposition, a wish,
#: an attribution. A source may state a finding with them; an answer that drops them states more than it did.
QUALIFYING = (_NEGATIVE | _DISBELIEF | _SUPPOSING | _INTENDING | _ATTRIBUTING | _PAST
              | _set("would may might could possibly probably perhaps likely unlikely suggest suggests suggested "
                     "unclear uncertain reportedly"))


def quote_reasons(text: str, start: int, end: int) -> list[Reason]:
    """Why the sentence of ``text`` around the quote ``text[start:end]`` does not assert it (none when it does):
    a negation, a denial, a supposition, a question, an attribution or a time that the quote leaves out ("the
    drug never reduced mortality", quoted as "reduced mortality"). Words inside the quote are its own."""
    head = text.rfind(". ", 0, start)
    opening = max(head, text.rfind("? ", 0, start), text.rfind("! ", 0, start), text.rfind("; ", 0, start))
    before = text[opening + 2 if opening >= 0 else 0:start]
    closing = min((at for at in (text.find(mark, end) for mark in (".", "?", "!", ";")) if at >= 0), default=len(text))
    quote, tail = text[start:end], text[end:closing + 1]
    if not before.strip() and "?" not in tail and _UNFOUNDED.isdisjoint(words(tail)):
        return []  # a quote from the start of its sentence: only a question or a denial after it could govern it
    found = sentences(f"{before}{quote}{tail}")
    if not found or not words(normalize(quote)):
        return []
    sentence, r = found[0], len(words(normalize(before)))
    if r >= len(sentence.plain):
        return []
    reasons = relation_reasons(sentence, r)
    if "?" in quote:
        reasons = [reason for reason in reasons if reason[0] != "asked"]
    return reasons


def _denial_denied(plain: Sequence[str], k: int) -> bool:
    """Whether the denying verb at ``k`` is itself denied: "nobody denies that", "few doubt that", "does not
    dispute that" (then the clause is asserted)."""
    before = plain[max(k - 3, 0):k]
    return any(_negative(w) or w in _FEW for w in before) or " ".join(before[-2:]) == "no one"


_FEW = _set("nobody few none nothing hardly")


def asserted(reasons: Sequence[Reason], denied: bool) -> bool:
    """Whether a relation word with these reasons asserts the relation (``denied``: a predicate that denies)."""
    if denied:
        return bool(reasons) and all(kind == "negated" for kind, _ in reasons)
    return not reasons


def explain(reason: Reason, name: str | None = None) -> str:
    """A reason in words, after "it": "names 'Lisbon' only to set it apart ('not lisbon')"."""
    kind, said = reason
    if kind == "apart":
        return f"names {name!r} only to set it apart ({said!r})"
    return {"negated": f"says it only negated ({said!r})", "past": f"says it only of the past ({said!r})",
            "supposed": f"only supposes it ({said!r})", "asked": "only asks it",
            "disbelieved": f"says it only to deny it ({said!r})",
            "intended": f"says only that it was wanted or tried ({said!r})",
            "attributed": f"gives it only as someone's claim ({said!r})"}[kind]


def speaks_of(text: str, names: Sequence[str]) -> bool:
    """Whether ``text`` names the entity (by one of ``names``) other than to set it apart: "Madrid, not Lisbon,
    is the capital of Spain" speaks of Madrid and Spain, not of Lisbon."""
    return any(mention_reason(sentence, span) is None
               for sentence in sentences(text) for span in spans(sentence.stems, names))

"""What a research question may be: not empty, and short enough for every agent to work with.

A question is copied into plans, sub-questions, prompts and reports; past a few thousand
characters it no longer fits an artifact file (64 KiB) once the planner repeats it, and it is a
document rather than a question. Every command that takes a question checks it here, so the
limit and its message are the same everywhere.
"""

from __future__ import annotations

import re

from orchestrator.model.errors import UsageError
from orchestrator.model.terms import words
from orchestrator.model.textnorm import normalize

#: Characters a question may have (after trimming spaces at both ends).
MAX_QUESTION_CHARS = 4000


#: What Python makes of bytes that are not UTF-8 in a command line (PEP 383): they cannot be written back.
_UNDECODED = re.compile("[\udc80-\udcff]")


def checked_question(text: str, *, where: str = "the question",
                     fix: str = "Ask the question itself in a sentence or two, and put the material it is about "
                                "in a document of the input folder (--input-dir)") -> str:
    """``text`` trimmed, or a :class:`UsageError` naming what is wrong (empty, no word, not UTF-8, over the
    limit) and what to do instead (``fix``, for a question that is too long)."""
    question = text.strip()
    if not question:
        raise UsageError(f'{where} is empty; give it in quotes, e.g. cconductor run "How do ..."')
    bad = _UNDECODED.search(question)
    if bad:
        raise UsageError(f"{where} is not UTF-8 text (byte 0x{ord(bad.group()) - 0xDC00:02x} at character "
                         f"{bad.start() + 1}); set your terminal or file to UTF-8 (e.g. LANG=C.UTF-8), or type "
                         "the question again")
    if not words(normalize(question)):
        raise UsageError(f'{where} ({question!r}) has no word to search for; ask it in words, e.g. '
                         'cconductor run "How do ..."')
    if len(question) > MAX_QUESTION_CHARS:
        raise UsageError(f"{where} has {len(question):,} characters; the limit is {MAX_QUESTION_CHARS:,}. {fix}")
    return question

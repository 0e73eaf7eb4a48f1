"""What a research question may be: not empty, and short enough for every agent to work with.

A question is copied into plans, sub-questions, prompts and reports; past a few thousand
characters it no longer fits an artifact file (64 KiB) once the planner repeats it, and it is a
document rather than a question. Every command that takes a question checks it here, so the
limit and its message are the same everywhere.
"""

from __future__ import annotations

from orchestrator.model.errors import UsageError

#: Characters a question may have (after trimming spaces at both ends).
MAX_QUESTION_CHARS = 4000


def checked_question(text: str, *, where: str = "the question") -> str:
    """``text`` trimmed, or a :class:`UsageError` naming the limit and what to do instead."""
    question = text.strip()
    if not question:
        raise UsageError(f'{where} is empty; give it in quotes, e.g. cconductor run "How do ..."')
    if len(question) > MAX_QUESTION_CHARS:
        raise UsageError(
            f"{where} has {len(question):,} characters; the limit is {MAX_QUESTION_CHARS:,}. Ask the question "
            "itself in a sentence or two, and put the material it is about in a document of the input folder "
            "(--input-dir)"
        )
    return question

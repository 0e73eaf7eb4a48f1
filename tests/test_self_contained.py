"""The suite runs on a fresh clone: no test reads data from outside the repository."""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers.data import ARXIV_LIBRARY, DATA, PAPERS, SCHOLARLY_RESPONSES

TESTS = Path(__file__).resolve().parent
# a path built out of the repository: ../shared, parents[2] of a test file, REPO.parent
OUTSIDE = re.compile(r"""["']\.\.["']\s*/|\.\./shared|parents\[[2-9]\]|REPO\.parent|["']shared["']\s*/""")


def test_no_test_builds_a_path_outside_the_repository() -> None:
    offenders = [
        f"{path.relative_to(TESTS)}:{number}: {line.strip()}"
        for path in sorted(TESTS.rglob("*.py"))
        if path != Path(__file__).resolve()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert offenders == []


def test_the_copied_data_is_whole_and_attributed() -> None:
    assert len(list(PAPERS.glob("*.pdf"))) == 8 and ARXIV_LIBRARY.is_file()
    for folder in (PAPERS, ARXIV_LIBRARY.parent, SCHOLARLY_RESPONSES):
        assert (folder / "SOURCES.md").is_file(), folder
    assert DATA == TESTS / "data"

"""Where the third-party test data lives: inside the repository, so a fresh clone can run every test.

Copied from the shared data set with each folder's SOURCES.md (origin and licence); see tests/data/README.md.
"""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"
PAPERS = DATA / "scientific-pdfs"
ARXIV_LIBRARY = DATA / "arxiv-metadata" / "arxiv-oai-dc-2017-03-01.jsonl"
SCHOLARLY_RESPONSES = DATA / "scholarly-api-responses"
COMPANY = DATA / "company-folder"
COMPANY_QUESTIONS = DATA / "company-questions.jsonl"

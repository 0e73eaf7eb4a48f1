"""Usage errors of `cconductor run` and `missions` exit 2 with what to do, before any session is created."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agents.offline.ingest import ingest_dirs
from tests.conftest import cconductor


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cconductor(), *args], capture_output=True, text=True, timeout=60,
                          env={**__import__("os").environ, "CCONDUCTOR_SESSIONS_DIR": str(tmp_path / "sessions")})


@pytest.mark.parametrize("question", ["", "   ", "\t\n"])
def test_an_empty_question_is_a_usage_error(tmp_path: Path, question: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nSome text about caches.")
    result = _run(tmp_path, "run", question, "--input-dir", str(docs), "--quiet")
    assert result.returncode == 2 and "the research question is empty" in result.stderr
    assert not (tmp_path / "sessions").exists()


def test_an_unknown_mission_suggests_the_closest_name(tmp_path: Path) -> None:
    result = _run(tmp_path, "run", "q", "--mission", "academic-reserch", "--input-dir", str(tmp_path), "--quiet")
    assert result.returncode == 2
    assert "did you mean 'academic-research'?" in result.stderr and "Traceback" not in result.stderr
    shown = _run(tmp_path, "missions", "show", "nope")
    assert shown.returncode == 2 and "unknown mission 'nope'. Available missions:" in shown.stderr


def test_a_folder_without_a_usable_document_stops_the_run_with_exit_2(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = _run(tmp_path, "run", "q", "--input-dir", str(empty), "--quiet")
    assert result.returncode == 2 and "holds no files" in result.stderr
    notes = tmp_path / "notes"
    notes.mkdir()
    for name in ("README.md", "SOURCES.md", "LICENSE", "data.bin"):
        (notes / name).write_text("about this dataset")
    result = _run(tmp_path, "run", "q", "--input-dir", str(notes), "--quiet")
    assert result.returncode == 2 and "holds 4 file(s), none of them a document to research" in result.stderr
    assert "--include-notes" in result.stderr and not (tmp_path / "sessions").exists()


def test_dataset_notes_are_not_sources_unless_asked(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# The dataset\n\nEight papers about caches, collected for testing.")
    (tmp_path / "SOURCES.md").write_text("# Sources\n\nWhere each paper came from.")
    (tmp_path / "paper.md").write_text("# Cache study\n\nThe measured latency was 12 ms on average.")
    result = ingest_dirs([tmp_path])
    assert [d.source["title"] for d in result.documents] == ["Cache study"]
    reasons = {s.path.name: s.reason for s in result.skipped}
    assert reasons == {name: "dataset notes, not a research source (pass --include-notes to use them)"
                       for name in ("README.md", "SOURCES.md")}
    assert len(ingest_dirs([tmp_path], include_notes=True).documents) == 3

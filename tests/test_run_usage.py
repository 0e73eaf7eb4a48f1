"""Usage errors of `cconductor run` and `missions` exit 2 with what to do, before any session is created."""

from __future__ import annotations

import json
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


def _pdf(path: Path, text: str, **encrypt: str) -> None:
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    page = writer.add_blank_page(300, 300)
    font = DictionaryObject({NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
                             NameObject("/BaseFont"): NameObject("/Helvetica")})
    page[NameObject("/Resources")] = DictionaryObject(
        {NameObject("/Font"): DictionaryObject({NameObject("/F1"): writer._add_object(font)})})
    stream = DecodedStreamObject()
    stream.set_data(f"BT /F1 12 Tf 20 250 Td ({text}) Tj ET".encode())
    page[NameObject("/Contents")] = writer._add_object(stream)
    if encrypt:
        writer.encrypt(**encrypt)
    with open(path, "wb") as handle:
        writer.write(handle)


def test_aes_encrypted_pdfs_open_and_password_protected_ones_are_reported(tmp_path: Path) -> None:
    _pdf(tmp_path / "open-aes.pdf", "The cache latency was twelve milliseconds.", user_password="",
         owner_password="owner", algorithm="AES-256")
    _pdf(tmp_path / "locked.pdf", "A secret text.", user_password="secret", owner_password="owner",
         algorithm="AES-256")
    whole = tmp_path / "whole.pdf"
    _pdf(whole, "A complete document about caches.")
    (tmp_path / "truncated.pdf").write_bytes(whole.read_bytes()[: len(whole.read_bytes()) // 2])
    result = ingest_dirs([tmp_path])
    names = {Path(d.source["local_path"]).name for d in result.documents}
    assert names == {"open-aes.pdf", "whole.pdf"}
    reasons = {s.path.name: s.reason for s in result.skipped}
    assert reasons["locked.pdf"] == "encrypted PDF (password required)"
    assert "truncated.pdf" in reasons


@pytest.mark.slow  # a whole run: the slow group (CI runs it) keeps the everyday suite under 10 min
def test_skipped_input_files_are_listed_on_the_console_in_status_and_in_the_report(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "cache.md").write_text("# Cache study\n\nThe measured cache latency was 12 ms on average across runs.")
    (docs / "README.md").write_text("# About this folder\n\nNotes.")
    _pdf(docs / "locked.pdf", "A secret text.", user_password="secret", owner_password="o", algorithm="AES-256")
    result = _run(tmp_path, "run", "What was the cache latency?", "--input-dir", str(docs), "--json")
    assert result.returncode == 0, result.stderr
    [shown] = [json.loads(line) for line in result.stdout.splitlines() if '"ingest.skipped"' in line]
    assert shown["message"].startswith("skipped 2 file(s): README.md (dataset notes")
    assert "locked.pdf (encrypted PDF (password required))" in shown["message"]
    root = Path(json.loads(result.stdout.splitlines()[-1])["session"])
    status = _run(tmp_path, "status", str(root))
    assert "skipped   2 input file(s): README.md" in status.stdout and "locked.pdf" in status.stdout
    assert "Input files not used (2): README.md" in (root / "mission-report.md").read_text()

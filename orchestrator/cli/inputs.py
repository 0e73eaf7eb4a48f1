"""What a user gave to research (--input-dir / --input), checked before a session is created."""

from __future__ import annotations

from pathlib import Path

from orchestrator.model.errors import UsageError


def check_documents(input_dirs: tuple[Path, ...], include_notes: bool) -> None:
    """Stop before creating a session when no input folder holds a document that could be researched."""
    from orchestrator.run.plugins import is_document

    seen = 0
    for given in input_dirs:
        for path in [given] if given.is_file() else sorted(given.rglob("*")):
            if path.is_file():
                seen += 1
                if is_document(path, include_notes or path == given):
                    return
    if len(input_dirs) == 1 and input_dirs[0].is_file():
        raise UsageError(f"{input_dirs[0]} is not a document cconductor can read: give a PDF, Markdown, text or "
                         "HTML file, or a folder of them (--input-dir DIR)")
    what = f"{seen} file(s), none of them a document to research" if seen else "no files"
    links = [p for d in input_dirs if d.is_dir() for p in sorted(d.rglob("*")) if p.is_symlink() and p.is_dir()]
    if links:
        what += (f"; links to folders are not followed ({', '.join(f'{p} -> {p.resolve()}' for p in links[:3])}): "
                 "give the folder itself with --input-dir")
    raise UsageError(
        f"{', '.join(str(d) for d in input_dirs)} holds {what}: give a folder of PDF, Markdown, text or HTML "
        "documents, or one such file (dataset notes such as README or SOURCES.md count only with --include-notes)"
    )

"""A batch of questions: the questions file, the batch's state file, and its summary table.

The questions file holds one question per line, or a JSON object per line with per-question
options (``{"question": "...", "mission": "...", "max_minutes": 5}``); blank lines and lines
starting with ``#`` are ignored. The state file (``batch-state.json``, next to the summary)
records each finished question as soon as its session is in place, so an interrupted batch
continues with ``--resume`` where it stopped.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.model.errors import UsageError
from orchestrator.model.question import checked_question
from orchestrator.session.atomic import atomic_write_json, atomic_write_text

STATE_NAME = "batch-state.json"
SUMMARY_COLUMNS = ("question", "session", "status", "reason", "answer", "top_citation", "report", "score", "cost_usd",
                   "wall_seconds")
#: Per-question options a JSON line may set, and the ``cconductor run`` option each becomes.
QUESTION_OPTIONS = {
    "mission": None, "backend": "--backend", "max_minutes": "--max-minutes", "budget_usd": "--budget",
    "max_iterations": "--max-iterations", "max_invocations": "--max-invocations",
    "evidence_threshold": "--evidence-threshold", "max_parallel": "--max-parallel",
}
#: Statuses that count as finished: the session is kept and not run again by --resume.
FINISHED = frozenset({"completed", "partial", "failed", "budget_exhausted"})


@dataclass(frozen=True)
class Question:
    qid: str
    line: int
    text: str
    options: dict[str, Any] = field(default_factory=dict)

    def run_args(self) -> tuple[str, ...]:
        args: list[str] = []
        for key, flag in QUESTION_OPTIONS.items():
            if flag and key in self.options:
                args += [flag, str(self.options[key])]
        return tuple(args)


def _bad(path: Path, line: int, message: str) -> UsageError:
    return UsageError(f"{path}:{line}: {message}")


def _parse_line(path: Path, number: int, raw: str) -> tuple[str, dict[str, Any]]:
    if not raw.startswith("{"):
        return raw, {}
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise _bad(path, number, f"not valid JSON ({exc}); write a plain question, or one JSON object such as "
                                 '{"question": "How ...?", "max_minutes": 5}') from exc
    if not isinstance(data, dict) or not isinstance(data.get("question"), str) or not data["question"].strip():
        raise _bad(path, number, 'a JSON line needs "question": a non-empty string')
    unknown = sorted(set(data) - {"question", *QUESTION_OPTIONS})
    if unknown:
        raise _bad(path, number, f"unknown option(s) {', '.join(unknown)}; allowed: question, "
                                 + ", ".join(QUESTION_OPTIONS))
    for key, value in data.items():
        if key in ("question", "mission", "backend"):
            if not isinstance(value, str):
                raise _bad(path, number, f'"{key}" must be a string')
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise _bad(path, number, f'"{key}" must be a positive number, not {json.dumps(value)}')
    if data.get("backend") not in (None, "auto", "offline", "anthropic"):
        raise _bad(path, number, '"backend" must be auto, offline or anthropic')
    return data["question"].strip(), {k: v for k, v in data.items() if k != "question"}


def read_questions(path: Path) -> list[Question]:
    """The questions of ``path``, each with a stable id (its position and text); errors name file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text ({exc}); save the questions file as UTF-8") from exc
    questions: list[Question] = []
    for number, line in enumerate(text.splitlines(), start=1):
        raw = line.strip()
        if not raw or raw.startswith("#"):
            continue
        question, options = _parse_line(path, number, raw)
        checked_question(question, where=f"{path}:{number}: the question")
        digest = hashlib.sha256(json.dumps([question, options], sort_keys=True).encode()).hexdigest()[:8]
        questions.append(Question(f"q{len(questions) + 1:04d}-{digest}", number, question, options))
    if not questions:
        raise UsageError(f"{path} holds no question: write one question per line (# starts a comment)")
    return questions


def fingerprint(questions: list[Question]) -> str:
    return hashlib.sha256("\n".join(q.qid for q in questions).encode()).hexdigest()


class BatchState:
    """``batch-state.json``: which questions finished, with their summary rows; rewritten atomically."""

    def __init__(self, out_dir: Path, questions: list[Question], settings: dict[str, Any]):
        self.out_dir = out_dir
        self.path = out_dir / STATE_NAME
        self.questions = questions
        self.settings = settings
        self.rows: dict[str, dict[str, Any]] = {}

    @classmethod
    def open(cls, out_dir: Path, questions: list[Question], settings: dict[str, Any], *, resume: bool) -> BatchState:
        state = cls(out_dir, questions, settings)
        if not state.path.exists():
            if resume:
                raise UsageError(f"--resume: {state.path} does not exist; start the batch without --resume")
            return state
        if not resume:
            raise UsageError(f"{out_dir} already holds a batch ({STATE_NAME}); continue it with --resume, "
                             "or choose another folder with --out")
        try:
            data = json.loads(state.path.read_text(encoding="utf-8"))
            rows = data["rows"]
            same = data["fingerprint"] == fingerprint(questions)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"{state.path}: not a batch state file ({exc}); move it aside to start again") from exc
        if not same:
            raise UsageError(f"{state.path} belongs to a different questions file (questions were added, removed "
                             "or edited); restore that file, or start a new batch with --out")
        state.rows = {qid: row for qid, row in rows.items() if row.get("status") in FINISHED}
        return state

    def pending(self) -> list[Question]:
        return [q for q in self.questions if q.qid not in self.rows]

    def record(self, question: Question, row: dict[str, Any]) -> None:
        if row["status"] in FINISHED:
            self.rows[question.qid] = row
        self.save()

    def save(self) -> None:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_json(self.path, {"fingerprint": fingerprint(self.questions), "settings": self.settings,
                                      "rows": self.rows})

    def table(self, extra: dict[str, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        """One row per question, in file order; questions not run yet say so."""
        rows = []
        for q in self.questions:
            row = self.rows.get(q.qid) or (extra or {}).get(q.qid) or {"status": "not run"}
            rows.append({**{c: None for c in SUMMARY_COLUMNS}, **row, "question": q.text})
        return rows

    def write_summary(self, extra: dict[str, dict[str, Any]] | None = None) -> tuple[Path, Path]:
        rows = self.table(extra)
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=SUMMARY_COLUMNS, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        csv_path, json_path = self.out_dir / "summary.csv", self.out_dir / "summary.json"
        atomic_write_text(csv_path, buffer.getvalue(), shared=True)
        atomic_write_json(json_path, [{c: r.get(c) for c in SUMMARY_COLUMNS} for r in rows], shared=True)
        return csv_path, json_path

"""`cconductor batch`: the questions file, a real offline batch, Ctrl-C and --resume, usage errors."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from orchestrator.model.errors import UsageError
from orchestrator.run.batch import read_questions

QUESTIONS = """\
# sleep questions
How does sleep affect memory?

{"question": "What happens to recall after four hours of sleep?", "max_minutes": 5}
How large is the effect of sleep on working memory?
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "CCONDUCTOR_SESSIONS_DIR": str(tmp_path / "sessions")}


def batch(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "orchestrator.cli", "batch", *args], capture_output=True, text=True,
                          env=env, timeout=timeout)


def summary(out: Path) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    with open(out / "summary.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return rows, json.loads((out / "summary.json").read_text())


def sessions(env: dict[str, str]) -> list[Path]:
    root = Path(env["CCONDUCTOR_SESSIONS_DIR"])
    return sorted(p for p in root.iterdir() if (p / "session.json").exists())


def test_questions_are_lines_or_json_lines_and_comments_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_text(QUESTIONS)
    questions = read_questions(path)
    assert [q.text for q in questions] == ["How does sleep affect memory?",
                                           "What happens to recall after four hours of sleep?",
                                           "How large is the effect of sleep on working memory?"]
    assert [q.line for q in questions] == [2, 4, 5]
    assert questions[1].run_args() == ("--max-minutes", "5") and questions[0].run_args() == ()
    assert len({q.qid for q in questions}) == 3 and read_questions(path) == questions


@pytest.mark.parametrize(("text", "fragment"), [
    ('ok question\n{"question": "x", "colour": 1}\n', "q.txt:2: unknown option(s) colour"),
    ('{"question": "x", "max_minutes": "soon"}\n', "q.txt:1: \"max_minutes\" must be a positive number"),
    ("{not json\n", "q.txt:1: not valid JSON"),
    ('{"mission": "m"}\n', 'q.txt:1: a JSON line needs "question"'),
    ("# only a comment\n\n", "holds no question"),
])
def test_a_bad_questions_file_names_the_line_and_the_fix(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "q.txt"
    path.write_text(text)
    with pytest.raises(UsageError, match=None) as caught:
        read_questions(path)
    assert fragment in str(caught.value)


def test_usage_errors_exit_2_without_a_traceback(tmp_path: Path, env: dict[str, str], sleep_corpus: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text('{"question": "x", "colour": 1}\n')
    out = batch(env, str(bad), "--input-dir", str(sleep_corpus))
    assert out.returncode == 2 and "bad.txt:1" in out.stderr and "Traceback" not in out.stderr
    good = tmp_path / "q.txt"
    good.write_text("one question\n")
    out = batch(env, str(good), "--input-dir", str(sleep_corpus), "--resume")
    assert out.returncode == 2 and "does not exist" in out.stderr
    out = batch(env, str(good), "--input-dir", str(sleep_corpus), "--executor", "ray://x")
    assert out.returncode == 2 and "not understood" in out.stderr
    out = batch(env, str(good), "--backend", "offline")
    assert out.returncode == 2 and "--input-dir" in out.stderr


def test_a_batch_runs_one_session_per_question_and_writes_the_summary(tmp_path: Path, env: dict[str, str],
                                                                      sleep_corpus: Path) -> None:
    questions = tmp_path / "q.txt"
    questions.write_text(QUESTIONS)
    out = batch(env, str(questions), "--mission", "academic-research", "--input-dir", str(sleep_corpus),
                "--backend", "offline", "--out", str(tmp_path / "out"))
    assert out.returncode == 0, out.stderr[-3000:]
    assert "[3/3]" in out.stdout and "3/3 session(s) finished" in out.stdout
    rows, data = summary(tmp_path / "out")
    assert [r["question"] for r in rows] == [q["question"] for q in data] and len(rows) == 3
    assert list(rows[0]) == ["question", "session", "status", "reason", "answer", "top_citation", "report", "score",
                             "cost_usd", "wall_seconds"]
    found = sessions(env)
    assert sorted(r["session"] for r in rows) == [p.name for p in found]
    for row, entry in zip(rows, data, strict=True):
        folder = Path(env["CCONDUCTOR_SESSIONS_DIR"]) / row["session"]
        stored = json.loads((folder / "session.json").read_text())
        assert stored["query"] == row["question"] and stored["status"] == row["status"] == entry["status"]
        assert entry["score"] == json.loads((folder / "quality.json").read_text())["score"]
        assert stored["options"]["input_dirs"] == [str(sleep_corpus.resolve())]  # this machine's folder, not scratch
        assert (folder / "mission-report.md").exists() and entry["wall_seconds"] > 0
        # the answer where a batch user looks for it: its first sentence, its top citation, the report
        assert entry["report"] == str(folder / "mission-report.md") == row["report"]
        assert entry["answer"] == stored["answer"]["first_sentence"] and entry["answer"]
        assert entry["top_citation"] is None or entry["top_citation"] in entry["answer"]
    assert any(entry["top_citation"] for entry in data)  # the sleep questions are answered, with a citation
    assert json.loads((Path(env["CCONDUCTOR_SESSIONS_DIR"]) / rows[1]["session"] / "session.json").read_text())[
        "options"]["max_minutes"] == 5
    again = batch(env, str(questions), "--input-dir", str(sleep_corpus), "--out", str(tmp_path / "out"))
    assert again.returncode == 2 and "--resume" in again.stderr


@pytest.mark.slow
def test_ctrl_c_keeps_finished_sessions_and_resume_runs_the_rest(tmp_path: Path, env: dict[str, str],
                                                                sleep_corpus: Path) -> None:
    questions = tmp_path / "q.txt"
    questions.write_text(QUESTIONS)
    out_dir = tmp_path / "out"
    args = [str(questions), "--input-dir", str(sleep_corpus), "--backend", "offline", "--max-parallel", "1",
            "--out", str(out_dir)]
    process = subprocess.Popen([sys.executable, "-m", "orchestrator.cli", "batch", *args], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    state = out_dir / "batch-state.json"
    deadline = time.monotonic() + 240
    while not (state.exists() and json.loads(state.read_text())["rows"]):
        assert process.poll() is None and time.monotonic() < deadline, "no question finished"
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr[-2000:]
    assert "--resume" in stderr and "Traceback" not in stderr
    rows, _ = summary(out_dir)
    statuses = [r["status"] for r in rows]
    done_first = [r["session"] for r in rows if r["status"] == "partial" or r["status"] == "completed"]
    assert 1 <= len(done_first) < 3 and "not run" in statuses
    assert [p.name for p in sessions(env)] == sorted(done_first)  # nothing half-written was published
    resumed = batch(env, *args, "--resume")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    rows, _ = summary(out_dir)
    assert all(r["status"] in ("partial", "completed") for r in rows)
    assert [p.name for p in sessions(env)] == sorted(r["session"] for r in rows)  # each question ran once
    assert set(done_first) <= {r["session"] for r in rows}


@pytest.mark.slow  # a whole run: the slow group (CI runs it) keeps the everyday suite under 10 min
def test_a_batch_runs_on_an_in_process_dask_cluster(tmp_path: Path, env: dict[str, str], sleep_corpus: Path) -> None:
    questions = tmp_path / "q.txt"
    questions.write_text("How does sleep affect memory?\n")
    out = batch(env, str(questions), "--input-dir", str(sleep_corpus), "--backend", "offline",
                "--executor", "dask-local", "--json", "--out", str(tmp_path / "out"))
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout)
    [row] = result["summary"]
    assert row["status"] in ("partial", "completed") and [p.name for p in sessions(env)] == [row["session"]]


def test_batch_help_imports_neither_dask_nor_rich() -> None:
    code = ("import sys; from orchestrator.cli import main\ntry:\n    main(['batch', '--help'])\nexcept SystemExit:\n"
            "    pass\nprint(sorted(m for m in ('dask', 'distributed', 'rich') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "[]" and "--resume" in out.stdout


def test_a_stopped_session_job_ends_interrupted_and_is_not_published(tmp_path: Path, sleep_corpus: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    from orchestrator.run.session_jobs import SessionJob, run_session_job

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    started = time.monotonic()
    job = SessionJob("q0001-test", "How does sleep affect memory?", "academic-research", ("--backend", "offline"),
                     (str(sleep_corpus),))
    running = lambda: bool(list(scratch.glob("*/sessions/*/events.jsonl")))  # noqa: E731 - the run has begun
    result = run_session_job(job, None, should_stop=running)
    assert result.status == "interrupted", result.output_tail  # SIGTERM: the run stopped its agents and said so
    assert time.monotonic() - started < 60
    from orchestrator.run.batch import FINISHED

    assert result.status not in FINISHED  # so the batch does not publish it, and runs it again on --resume

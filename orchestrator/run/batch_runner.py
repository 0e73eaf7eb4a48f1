"""Running a batch: one session job per pending question, on local threads or a Dask cluster.

The driver keeps at most ``pool.workers`` sessions in flight, publishes each returned session
into the sessions folder (it is the only writer there), records it in the state file at once,
and advances one progress bar. Ctrl-C (or SIGTERM) stops the sessions still running; the
finished ones stay, and ``--resume`` runs the rest.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol, TextIO

from orchestrator.run.batch import FINISHED, BatchState, Question
from orchestrator.run.outputs import REPORT_MARKDOWN
from orchestrator.run.session_jobs import SessionJob, SessionResult, publish, run_session_job
from orchestrator.session.record import recorded_answer


class SessionPool(Protocol):
    workers: int

    def prepare(self, job: SessionJob) -> SessionJob: ...

    def submit(self, job: SessionJob) -> Any: ...  # a concurrent.futures or distributed Future

    def close(self, cancel: bool = False) -> None: ...


class LocalSessionPool:
    """Sessions as local processes (``cconductor run``), ``workers`` at a time; inputs are read in place."""

    def __init__(self, workers: int):
        self.workers = max(1, workers)
        self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="batch")
        self._stop = threading.Event()

    def prepare(self, job: SessionJob) -> SessionJob:
        return job

    def submit(self, job: SessionJob) -> Future[SessionResult]:
        return self._pool.submit(run_session_job, job, None, self._stop.is_set)

    def close(self, cancel: bool = False) -> None:
        if cancel:
            self._stop.set()
        self._pool.shutdown(wait=True, cancel_futures=cancel)


class BatchInterrupted(Exception):
    """Ctrl-C or SIGTERM: the state and summary are saved; ``--resume`` continues."""


class Progress:
    """One bar for the whole batch on a terminal; one line per finished question otherwise."""

    def __init__(self, total: int, already: int, live: bool, stream: TextIO | None = None):
        self.total, self.count = total, already
        self.stream = stream or sys.stdout
        self._bar: Any = None
        if live:
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as RichProgress

            self._bar = RichProgress(TextColumn("[bold]batch"), BarColumn(), MofNCompleteColumn(),
                                     TimeElapsedColumn(), TextColumn("{task.description}"))
            self._task = self._bar.add_task("", total=total, completed=already)
            self._bar.start()

    def advance(self, question: Question, row: dict[str, Any]) -> None:
        self.count += 1
        line = f"[{self.count}/{self.total}] {row['status']}: {question.text[:70]}"
        if self._bar is not None:
            self._bar.update(self._task, advance=1, description=line)
        else:
            print(line, file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


def _row(question: Question, result: SessionResult, sessions_dir: Path, input_dirs: tuple[str, ...]) -> dict[str, Any]:
    row: dict[str, Any] = {"qid": question.qid, "session": result.session_id, "status": result.status,
                           "reason": result.reason, "wall_seconds": result.wall_seconds, "score": None,
                           "cost_usd": None, "answer": None, "top_citation": None, "report": None}
    if result.status not in FINISHED or result.bundle is None:
        row["output_tail"] = result.output_tail[-1000:]
        return row
    folder = publish(result, sessions_dir, input_dirs)
    row["session"] = folder.name
    with contextlib.suppress(OSError, ValueError):
        row["score"] = json.loads((folder / "quality.json").read_text(encoding="utf-8")).get("score")
    with contextlib.suppress(OSError, ValueError):
        row["cost_usd"] = json.loads((folder / "session.json").read_text(encoding="utf-8")).get("cost_usd")
    answer = recorded_answer(folder)
    if answer:
        row["answer"], row["top_citation"] = answer.get("first_sentence"), answer.get("top_citation")
    if (folder / REPORT_MARKDOWN).is_file():
        row["report"] = str((folder / REPORT_MARKDOWN).resolve())  # a summary is read from anywhere
    return row


def run_batch(state: BatchState, pool: SessionPool, jobs: dict[str, SessionJob], sessions_dir: Path,
              input_dirs: tuple[str, ...], *, live: bool, stream: TextIO | None = None) -> list[dict[str, Any]]:
    """Run every pending question of ``state``; returns the summary rows (also written next to the state)."""
    queue = state.pending()
    progress = Progress(len(state.questions), len(state.questions) - len(queue), live, stream)
    unfinished: dict[str, dict[str, Any]] = {}
    in_flight: dict[Any, Question] = {}
    state.save()
    try:
        while queue or in_flight:
            while queue and len(in_flight) < pool.workers:
                question = queue.pop(0)
                in_flight[pool.submit(pool.prepare(jobs[question.qid]))] = question
            finished = [f for f in in_flight if f.done()]
            if not finished:
                time.sleep(0.1)
                continue
            for future in finished:
                question = in_flight.pop(future)
                try:
                    row = _row(question, future.result(), sessions_dir, input_dirs)
                except Exception as exc:  # the worker or the engine failed, not the run: report it, go on
                    row = {"qid": question.qid, "session": None, "status": "error",
                           "reason": f"{type(exc).__name__}: {exc}", "wall_seconds": None}
                state.record(question, row)
                if row["status"] not in FINISHED:
                    unfinished[question.qid] = row
                progress.advance(question, row)
    except KeyboardInterrupt:
        progress.close()
        print("batch: stopping the sessions still running ...", file=sys.stderr, flush=True)
        pool.close(cancel=True)
        state.save()
        state.write_summary(unfinished)
        raise BatchInterrupted from None
    progress.close()
    pool.close()
    state.write_summary(unfinished)
    return state.table(unfinished)

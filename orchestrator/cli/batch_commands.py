"""``cconductor batch``: one research session per question of a file, with one progress bar."""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path

import click

from orchestrator.cli.app import Context, emit_json, friendly, json_option, main, pass_ctx
from orchestrator.model.errors import UsageError

EXIT_INTERRUPTED = 130


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@main.command()
@click.argument("questions_file", metavar="QUESTIONS", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--mission", default=None,
              help="Mission for every question (a JSON line may name its own; default: local-documents with "
                   "--input-dir, else academic-research).")
@click.option("--input-dir", "--input", "input_dirs", multiple=True, type=click.Path(exists=True, path_type=Path),
              help="A folder of documents every session researches, or one document; repeatable.")
@click.option("--backend", type=click.Choice(["auto", "offline", "anthropic"]), default="auto", show_default=True,
              help="auto uses Claude when ANTHROPIC_API_KEY is set, else the offline backend (local documents).")
@click.option("--executor", "executor_spec", default=None, metavar="SPEC",
              help="Where sessions run: local (default), dask-local, or dask://HOST:PORT.")
@click.option("--max-parallel", type=click.IntRange(min=1), default=None,
              help="Sessions at once (default: 2 locally, every worker thread on Dask).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for summary.csv, summary.json and batch-state.json (default: batch-<QUESTIONS name> "
                   "in the sessions folder).")
@click.option("--resume", is_flag=True, help="Continue a stopped batch: questions already finished are skipped.")
@json_option
@pass_ctx
@friendly
def batch(ctx: Context, questions_file: Path, mission: str | None, input_dirs: tuple[Path, ...], backend: str,
          executor_spec: str | None, max_parallel: int | None, out_dir: Path | None, resume: bool,
          as_json: bool) -> None:
    """Research every question of QUESTIONS (one per line, or JSON lines with per-question options).

    Finished sessions stay in the sessions folder; after Ctrl-C, run the same command with
    --resume to continue. The summary table (question, session, status, score, cost, wall
    time) is written as summary.csv and summary.json.

    \b
    Examples:
      cconductor batch questions.txt --input-dir papers/
      cconductor batch questions.txt --input-dir papers/ --resume
    """
    from orchestrator.run.batch import BatchState, read_questions
    from orchestrator.run.batch_runner import BatchInterrupted, LocalSessionPool, SessionPool, run_batch
    from orchestrator.run.executor_choice import resolve
    from orchestrator.run.missions import default_mission, load_mission
    from orchestrator.run.session_jobs import SessionJob

    questions = read_questions(questions_file)
    mission = mission or default_mission(documents=bool(input_dirs), library=False)
    for name in {mission, *(str(q.options["mission"]) for q in questions if "mission" in q.options)}:
        load_mission(name)  # an unknown mission stops the batch before any session starts
    if backend in ("offline", "auto") and not input_dirs:
        raise UsageError("pass --input-dir DIR: the offline backend researches local documents")
    spec, _caps = resolve(executor_spec)
    out = out_dir or ctx.sessions_dir / f"batch-{questions_file.stem}"
    dirs = tuple(str(p.resolve()) for p in input_dirs)
    settings = {"questions_file": str(questions_file.resolve()), "mission": mission, "input_dirs": list(dirs),
                "backend": backend}
    state = BatchState.open(out, questions, settings, resume=resume)
    jobs = {q.qid: SessionJob(q.qid, q.text, str(q.options.get("mission", mission)),
                              ("--backend", backend, *q.run_args()), dirs) for q in questions}
    pool: SessionPool
    if spec == "local":
        pool = LocalSessionPool(max_parallel or 2)
    else:
        from orchestrator.run.dask_batch import open_pool

        pool = open_pool(spec, max_parallel)
    previous = {}
    if threading.current_thread() is threading.main_thread():  # Ctrl-C even when started with it ignored
        previous = {sig: signal.signal(sig, _raise_interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        rows = run_batch(state, pool, jobs, ctx.sessions_dir, dirs, live=not as_json and sys.stderr.isatty(),
                         stream=sys.stderr if as_json else None)
    except BatchInterrupted:
        click.echo(f"interrupted: finished sessions are kept; continue with `cconductor batch {questions_file} "
                   f"--resume{'' if out_dir is None else f' --out {out}'}`", err=True)
        sys.exit(EXIT_INTERRUPTED)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if as_json:
        emit_json({"summary": rows, "csv": str(out / "summary.csv"), "json": str(out / "summary.json")})
        return
    done = sum(1 for r in rows if r["status"] in ("completed", "partial"))
    click.echo(f"{done}/{len(rows)} session(s) finished with a report; summary: {out / 'summary.csv'}")

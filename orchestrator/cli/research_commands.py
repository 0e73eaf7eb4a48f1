"""Commands for research runs: run, resume, report (missions and agents are in catalog_commands)."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import click

from orchestrator.cli.app import Context, emit_json, friendly, json_option, main, pass_ctx
from orchestrator.cli.executor_options import bind_events, executor_options, opened_executor
from orchestrator.cli.inputs import check_documents
from orchestrator.cli.view_commands import run_with_viewer, view_option
from orchestrator.model.errors import UsageError
from orchestrator.model.question import checked_question

EXIT_BUDGET_EXHAUSTED = 3
#: Like a shell: 128 + SIGINT. The session is "interrupted" and `cconductor resume` continues it.
EXIT_INTERRUPTED = 130


def _choose_backend(requested: str) -> str:
    has_key = bool(os.environ.get("ANTHROPIC_API_KEY"))
    if requested == "anthropic" and not has_key:
        raise UsageError(
            "--backend anthropic needs an API key: set ANTHROPIC_API_KEY (https://console.anthropic.com/), "
            "or use --backend offline to research local documents without one"
        )
    if requested == "auto":
        return "anthropic" if has_key else "offline"
    return requested


def _execute(runner: Any, mode: str) -> dict[str, Any]:
    from orchestrator.run.progress import make_progress

    view = make_progress(mode, runner.paths.root)
    if view is not None:
        runner.events.subscribe(view)
    previous = {}
    if threading.current_thread() is threading.main_thread():
        # SIGTERM stops the run like Ctrl-C does; and Ctrl-C does so even when the program that started
        # cconductor ignored it (a background job of a script): Python then installs no handler of its own
        previous = {sig: signal.signal(sig, _raise_interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        return dict(runner.run())
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if view is not None:
            view.close()


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _finish(result: dict[str, Any], mode: str) -> None:
    from orchestrator.run.outputs import REPORT_HTML, REPORT_MARKDOWN
    from orchestrator.session.record import recorded_answer

    root = Path(result["session"])
    report = root / REPORT_MARKDOWN
    answer = recorded_answer(root)
    if mode == "json":  # one JSON object per line: the events, then the result
        click.echo(
            json.dumps(
                {"type": "run.result", **result, "report": str(report) if report.exists() else None,
                 "answer": answer.get("text") if answer else None},
                ensure_ascii=False,
            )
        )
    else:
        if result.get("research_stopped") and mode != "quiet":
            click.echo(f"research stopped: {result['research_stopped']}")
        if answer:  # the one thing the user asked for: printed even with --quiet
            click.echo(f"answer: {answer['text']}" if mode == "quiet" else f"\nanswer: {answer['text']}\n")
        click.echo(f"status: {result['status']}" + (f" ({result['reason']})" if result.get("reason") else ""))
        click.echo(f"session: {root}")
        written = [p for p in (report, root / REPORT_HTML) if p.exists()]  # the formats the mission asks for
        for n, path in enumerate(written):
            click.echo(f"{'report: ' if n == 0 else ' ' * 8}{path}")
    if result["status"] == "interrupted":
        if mode != "json":
            click.echo(f"interrupted: continue with `cconductor resume {root.name}`", err=True)
        sys.exit(EXIT_INTERRUPTED)
    if result["status"] == "failed":
        sys.exit(1)
    if result["status"] == "budget_exhausted":
        sys.exit(EXIT_BUDGET_EXHAUSTED)


def _mode(quiet: bool, as_json: bool) -> str:
    return "json" if as_json else "quiet" if quiet else "live"


@main.command()
@click.argument("query")
@click.option(
    "--mission",
    default=None,
    help="Mission name or path to a mission JSON (default: local-documents with --input-dir, else "
    "academic-research; see `cconductor missions`).",
)
@click.option(
    "--backend",
    type=click.Choice(["auto", "offline", "anthropic"]),
    default="auto",
    show_default=True,
    help="auto uses Claude when ANTHROPIC_API_KEY is set, else the offline backend.",
)
@click.option(
    "--input-dir",
    "--input",
    "input_dirs",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="A folder of local documents (PDF, Markdown, text, HTML), or one document; repeatable.",
)
@click.option(
    "--include-notes",
    is_flag=True,
    help="Also research the dataset's notes (README*, LICENSE*, SOURCES.md ...), skipped by default.",
)
@click.option(
    "--library",
    "libraries",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Paper-metadata dump (JSON lines: arXiv OAI-PMH or arXiv snapshot format); repeatable.",
)
@click.option("--max-parallel", default=2, show_default=True, help="Agent processes run at once.")
@click.option("--max-minutes", type=float, help="Override the mission's time limit.")
@click.option("--budget", "budget_usd", type=float, help="Override the mission's USD budget.")
@click.option("--max-iterations", type=int, help="Override the mission's iteration limit.")
@click.option("--max-invocations", type=int, help="Override the mission's agent-invocation limit.")
@click.option(
    "--agents-dir",
    "agent_dirs",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Extra folder of agent definitions (e.g. external agents); repeatable.",
)
@click.option(
    "--evidence-threshold",
    default=90.0,
    show_default=True,
    help="Fuzzy-match score (0-100) for a snippet to count as found.",
)
@click.option("--dry-run", is_flag=True, help="Print the plan and an estimated cost range, then stop.")
@click.option("--describe-figures", is_flag=True,
              help="With Claude: describe each figure of the PDFs with a vision model (priced, cached per image).")
@click.option("--quiet", is_flag=True, help="Print only the answer and the result.")
@view_option
@executor_options
@json_option
@pass_ctx
@friendly
def run(
    ctx: Context,
    query: str,
    mission: str | None,
    backend: str,
    input_dirs: tuple[Path, ...],
    include_notes: bool,
    libraries: tuple[Path, ...],
    max_parallel: int,
    max_minutes: float | None,
    budget_usd: float | None,
    max_iterations: int | None,
    max_invocations: int | None,
    agent_dirs: tuple[Path, ...],
    evidence_threshold: float,
    dry_run: bool,
    describe_figures: bool,
    quiet: bool,
    with_view: bool,
    executor_spec: str | None, caps: tuple[str, ...],
    as_json: bool,
) -> None:
    """Research QUERY with a mission and write a cited report.

    \b
    Examples:
      cconductor run "What limits the method?" --input-dir papers/
      cconductor run "What limits the method?" --input paper.pdf --quiet
      cconductor run "State of the art in X?" --mission academic-research --backend anthropic --dry-run
    """
    from orchestrator.run.missions import default_mission, load_mission
    from orchestrator.run.runner import MissionRunner, RunOptions
    from orchestrator.session.record import create_session

    query = checked_question(query, where="the research question")
    chosen = "anthropic" if dry_run and backend == "anthropic" else _choose_backend(backend)
    loaded = load_mission(mission or default_mission(documents=bool(input_dirs), library=bool(libraries)))
    if chosen == "offline" and backend == "auto" and not as_json and not quiet:
        click.echo("No ANTHROPIC_API_KEY set: using the offline backend (local documents, no network).")
    if describe_figures and chosen != "anthropic":
        raise UsageError("--describe-figures needs a vision model: set ANTHROPIC_API_KEY or pass --backend anthropic")
    if dry_run:
        from orchestrator.run.definitions import load_definitions
        from orchestrator.run.estimate import estimate_run, pdf_count

        estimate = estimate_run(loaded, load_definitions(agent_dirs), chosen,
                                figures_of=pdf_count(input_dirs) if describe_figures else None)
        if as_json:
            emit_json(estimate.to_dict())
        else:
            click.echo("\n".join(estimate.lines))
        return
    if chosen == "offline" and not input_dirs and not libraries:
        raise UsageError("the offline backend researches local documents: pass --input-dir DIR and/or --library FILE")
    if input_dirs and not libraries:
        check_documents(input_dirs, include_notes)
    options = RunOptions(
        backend=chosen,
        input_dirs=tuple(str(p.resolve()) for p in input_dirs),
        include_notes=include_notes,
        libraries=tuple(str(p.resolve()) for p in libraries),
        max_parallel=max_parallel,
        evidence_threshold=evidence_threshold,
        agent_dirs=tuple(str(p.resolve()) for p in agent_dirs),
        max_minutes=max_minutes,
        budget_usd=budget_usd,
        max_iterations=max_iterations,
        max_invocations=max_invocations,
        describe_figures=describe_figures,
    )
    paths = create_session(
        ctx.sessions_dir, query, loaded.name, {"mission_source": str(loaded.source), **options.to_dict()}
    )
    if not as_json and not quiet:
        click.echo(f"session: {paths.root}")

    def execute() -> dict[str, Any]:
        with opened_executor(executor_spec, caps, max_parallel) as executor:
            runner = bind_events(executor, MissionRunner(paths, loaded, options, executor=executor))
            return _execute(runner, _mode(quiet, as_json))

    run_with_viewer(paths.root, with_view, _mode(quiet, as_json), execute, _finish)


@main.command()
@click.argument("session", default="latest")
@click.option("--quiet", is_flag=True, help="Print only the answer and the result.")
@view_option
@executor_options
@json_option
@pass_ctx
@friendly
def resume(ctx: Context, session: str, quiet: bool, with_view: bool, executor_spec: str | None,
           caps: tuple[str, ...], as_json: bool) -> None:
    """Continue an interrupted run from session.json and the files (harmless to repeat).

    \b
    Examples:
      cconductor resume
      cconductor resume 20261127T110619345Z-85ece55f75 --quiet
    """
    from orchestrator.run.missions import load_mission
    from orchestrator.run.runner import MissionRunner, RunOptions
    from orchestrator.session.record import load_session

    paths = ctx.session(session)
    data = load_session(paths)
    if not data.get("mission"):
        raise UsageError(f"session {paths.root.name} was not started by `cconductor run`; nothing to resume")
    checked_question(str(data.get("query") or ""), where=f"the question of session {paths.root.name}",
                     fix="No agent could work with it: start a new run with a shorter question "
                         '(cconductor run "..." --input-dir DIR) and put the material in a document')
    stored = data.get("options", {})
    loaded = load_mission(stored.get("mission_source") or data["mission"])
    options = RunOptions.from_dict(stored)

    def execute() -> dict[str, Any]:
        with opened_executor(executor_spec, caps, options.max_parallel) as executor:
            runner = bind_events(executor, MissionRunner(paths, loaded, options, executor=executor))
            return _execute(runner, _mode(quiet, as_json))

    run_with_viewer(paths.root, with_view, _mode(quiet, as_json), execute, _finish)


@main.command()
@click.argument("session", default="latest")
@pass_ctx
@friendly
def report(ctx: Context, session: str) -> None:
    """Re-render the report files of SESSION from its knowledge graph.

    \b
    Examples:
      cconductor report
      cconductor report latest
    """
    from orchestrator.commit.committed import read_committed
    from orchestrator.run.missions import load_mission
    from orchestrator.run.outputs import evaluate_quality, write_report
    from orchestrator.session.record import load_session

    paths = ctx.session(session)
    data = load_session(paths)
    loaded = load_mission(data.get("options", {}).get("mission_source") or data.get("mission") or "general-research")
    view = read_committed(paths)  # the graph the ledger vouches for, rebuilt if the view was changed or is behind
    written = write_report(paths, view.graph, loaded, evaluate_quality(paths, view.graph, loaded, view.sha256))
    for name in written:
        click.echo(str(paths.root / name))

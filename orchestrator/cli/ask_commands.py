"""`cconductor ask`: question a session's validated graph, without a new research run."""

from __future__ import annotations

from typing import Any

import click

from orchestrator.cli.app import Context, emit_json, friendly, json_option, main, pass_ctx
from orchestrator.model.errors import SessionDamaged, UsageError
from orchestrator.model.question import checked_question


def _backend(requested: str) -> str:
    from orchestrator.cli.research_commands import _choose_backend

    return _choose_backend(requested)


@main.command()
@click.argument("session", required=False)
@click.argument("question", required=False)
@click.option("--all", "all_sessions", is_flag=True, help="Ask every session in the sessions folder.")
@click.option(
    "--backend", type=click.Choice(["auto", "offline", "anthropic"]), default="auto", show_default=True,
    help="auto uses Claude when ANTHROPIC_API_KEY is set, else the offline (extractive) backend.",
)
@click.option("--engine", type=click.Choice(["pyoxigraph", "rdflib"]), default="pyoxigraph", show_default=True,
              help="SPARQL engine over knowledge-graph.trig.")
@json_option
@pass_ctx
@friendly
def ask(ctx: Context, session: str | None, question: str | None, all_sessions: bool, backend: str, engine: str,
        as_json: bool) -> None:
    """Answer QUESTION from SESSION's graph, every sentence cited and each citation checked.

    \b
    Examples:
      cconductor ask latest "How are snippets verified?"
      cconductor ask --all "How are snippets verified?"

    Citations resolve to claims, entities and relationships of the graph; a sentence whose
    citations do not hold is flagged (confidence under 0.5) or dropped (under 0.3). When the graph
    holds nothing relevant the answer is "Not found in this session." (exit 0, --json found: false).
    Each answer is kept in the session's answers/ folder.
    """
    from orchestrator.answers.render import render
    from orchestrator.answers.service import ask as ask_session
    from orchestrator.run.plugins import answer_composer
    from orchestrator.session.record import list_sessions, other_sessions_hint

    if all_sessions:
        if question is not None:
            raise UsageError("with --all give only the question: cconductor ask --all \"question\"")
        question, targets = session, list_sessions(ctx.sessions_dir)
        if not targets:
            raise UsageError(f"there are no sessions in {ctx.sessions_dir.resolve()} "
                             f"({other_sessions_hint(ctx.sessions_dir)})")
    else:
        if session is None or question is None:
            raise UsageError('give a session and a question: cconductor ask SESSION "question" (or --all)')
        targets = [ctx.session(session)]
    question = checked_question(question or "")
    chosen = _backend(backend)
    documents: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    for paths in targets:
        try:
            composer = answer_composer(chosen, paths.root)
            documents.append(ask_session(paths, question, composer, engine=engine))  # type: ignore[arg-type]
        except (UsageError, SessionDamaged) as exc:  # with --all, a session without a usable graph is skipped
            if not all_sessions:
                raise
            skipped.append({"session": paths.root.name, "reason": str(exc)})
    if as_json:
        emit_json(documents[0] if not all_sessions else {
            "question": question, "found": any(d["found"] for d in documents), "answers": documents,
            "skipped": skipped})
        return
    if chosen != backend and backend == "auto":
        click.echo(f"backend: {chosen}", err=True)
    for item in skipped:
        click.echo(f"skipped {item['session']}: {item['reason']}", err=True)
    if not all_sessions:
        click.echo(render(documents[0]))
        return
    hits = [d for d in documents if d["found"]]
    if hits:
        click.echo("\n\n".join(render(d) for d in hits))
    others = len(documents) - len(hits)
    if not hits:
        click.echo(f"Q: {question}\nNot found in any of the {len(documents)} session(s) in {ctx.sessions_dir}.")
    elif others:
        click.echo(f"\n{others} other session(s) hold no answer to this question.")

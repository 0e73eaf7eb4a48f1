"""Commands of the artifact pipeline: new, process, watch, retry, validate, rollback."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from orchestrator.cli.app import Context, emit_json, friendly, json_option, main, pass_ctx
from orchestrator.model.errors import UsageError
from orchestrator.model.layout import SessionPaths

if TYPE_CHECKING:
    from orchestrator.commit.processor import Processor


def _outcome_line(outcome: object, paths: SessionPaths) -> str:
    from orchestrator.commit.outcomes import signal_notes
    from orchestrator.commit.processor import Outcome

    assert isinstance(outcome, Outcome)
    text = f"{outcome.agent}: {outcome.status}"
    if outcome.attempt:
        text += f" (attempt {outcome.attempt})"
    if outcome.status == "rejected":
        failing = [p for p in outcome.problems if p.is_error]
        text += f" - {len(failing)} problem(s); see {paths.retry_instructions(outcome.agent).name}"
        for note in signal_notes(paths, outcome.agent):
            text += f"\n    NOTE: {note}"
        for problem in failing[:5]:
            text += "\n    " + problem.render()
    return text


@main.command()
@click.argument("query")
@click.option("--mission", default=None, help="Mission name recorded in session.json.")
@pass_ctx
@friendly
def new(ctx: Context, query: str, mission: str | None) -> None:
    """Create an empty session for QUERY and print its folder.

    Use it to drive agents by hand or from other tools: any program that follows the
    artifact protocol (docs/agent-protocol.md) can add to it.

    \b
    Example:
      cconductor new "How do agents merge knowledge?"
    """
    from orchestrator.model.question import checked_question
    from orchestrator.session.events import EventLog
    from orchestrator.session.record import create_session

    query = checked_question(query, where="the research question")
    paths = create_session(ctx.sessions_dir, query, mission)
    EventLog(paths.events, paths.events_mutex).emit("session.created", f"session created for {query!r}", query=query)
    click.echo(str(paths.root))


def _processor(paths: SessionPaths) -> Processor:
    from orchestrator.commit.processor import Processor
    from orchestrator.run.definitions import required_files_for

    return Processor(paths, required_files=required_files_for)


@main.command()
@click.argument("session")
@click.option("--agent", "agents", multiple=True, help="Only process this agent's lock (repeatable).")
@json_option
@pass_ctx
@friendly
def process(ctx: Context, session: str, agents: tuple[str, ...], as_json: bool) -> None:
    """Process pending locks once, write the views, and exit (1 if anything was rejected).

    \b
    Examples:
      cconductor process latest
      cconductor process latest --agent my-agent --json
    """
    from orchestrator.commit.views import flush_views
    from orchestrator.model.layout import check_agent_name

    paths = ctx.session(session)
    for agent in agents:
        check_agent_name(agent)
    processor = _processor(paths)
    try:
        outcomes = []
        for _ in range(50):  # a folder still being written is deferred; give it a moment
            swept = processor.process_pending(agents or None)
            outcomes += [o for o in swept if o.status != "deferred"]
            if not any(o.status == "deferred" for o in swept):
                break
            import time

            time.sleep(0.1)
        flush_views(processor)
    finally:
        processor.close()
    if as_json:
        emit_json(
            [
                {
                    "agent": o.agent,
                    "status": o.status,
                    "attempt": o.attempt,
                    "seq": o.seq,
                    "problems": [p.to_dict() for p in o.problems],
                }
                for o in outcomes
            ]
        )
    else:
        for outcome in outcomes:
            click.echo(_outcome_line(outcome, paths))
        if not outcomes:
            click.echo("nothing pending")
    if any(o.status == "rejected" for o in outcomes):
        sys.exit(1)


@main.command()
@click.argument("session")
@click.option("--polling", is_flag=True, help="Poll instead of inotify (NFS, CIFS, sshfs).")
@click.option("--rescan-interval", default=2.0, show_default=True, help="Seconds between safety rescans.")
@json_option
@pass_ctx
@friendly
def watch(ctx: Context, session: str, polling: bool, rescan_interval: float, as_json: bool) -> None:
    """Merge locks as they appear, until interrupted (Ctrl-C).

    \b
    Examples:
      cconductor watch latest
      cconductor watch latest --polling
    """
    import json as _json

    from orchestrator.commit.watcher import Watcher

    paths = ctx.session(session)
    processor = _processor(paths)
    if as_json:
        processor.events.subscribe(lambda event: click.echo(_json.dumps(event, ensure_ascii=False)))
    watcher = Watcher(
        processor,
        polling=polling,
        rescan_interval=rescan_interval,
        on_outcome=None if as_json else lambda o: click.echo(_outcome_line(o, paths)),
    )
    if not as_json:
        click.echo(f"watching {paths.root} (Ctrl-C to stop)")
    import signal
    import threading

    previous = {}
    if threading.current_thread() is threading.main_thread():  # let Ctrl-C / SIGTERM finish the sweep
        previous = {sig: signal.signal(sig, watcher.interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        watcher.run()
    except KeyboardInterrupt:
        watcher.stop()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        processor.close()


@main.command()
@click.argument("session")
@click.argument("agent")
@json_option
@pass_ctx
@friendly
def retry(ctx: Context, session: str, agent: str, as_json: bool) -> None:
    """Re-submit AGENT's (fixed) artifacts: <agent>.kg.lock.error becomes <agent>.kg.lock.

    \b
    Example:
      cconductor retry latest my-agent
    """
    from orchestrator.commit import locks
    from orchestrator.model.layout import check_agent_name

    paths = ctx.session(session)
    check_agent_name(agent)
    refused = locks.refuse_resubmit(paths, agent)
    if refused is not None:
        raise UsageError(refused)
    if not paths.lock(agent).exists():
        if not paths.lock_error(agent).exists() and not paths.agent_artifacts(agent).is_dir():
            raise UsageError(f"agent {agent!r} has no artifacts/{agent}/ folder in {paths.root}")
        locks.resubmit(paths, agent)
    ctx_obj = click.get_current_context()
    ctx_obj.invoke(process, session=str(paths.root), agents=(agent,), as_json=as_json)


@main.command()
@click.argument("session", default="latest")
@json_option
@pass_ctx
@friendly
def validate(ctx: Context, session: str, as_json: bool) -> None:
    """Re-validate every merged artifact (schemas), the whole graph (SHACL), every stored text (sha256)
    and every relationship against the passages of its supporting claims.

    \b
    Examples:
      cconductor validate
      cconductor validate latest --json
    """
    from orchestrator.commit.inspection import validate_session

    problems = validate_session(ctx.session(session))
    failing = [p for p in problems if p.is_error]
    if as_json:
        emit_json({"conforms": not failing, "problems": [p.to_dict() for p in problems]})
    else:
        for problem in problems:
            click.echo(f"{problem.severity.upper()}: {problem.render()}")
        click.echo("conforms" if not failing else f"{len(failing)} violation(s): the graph does not conform")
    if failing:
        sys.exit(1)


@main.command()
@click.argument("session")
@click.option("--to", "target", type=int, help="Ledger entry to return to (0 = empty graph).")
@click.option("--list", "show", is_flag=True, help="Only list the ledger.")
@json_option
@pass_ctx
@friendly
def rollback(ctx: Context, session: str, target: int | None, show: bool, as_json: bool) -> None:
    """Restore every agent's namespace as it was right after ledger entry --to N (see them with --list).

    \b
    Examples:
      cconductor rollback latest --show
      cconductor rollback latest --to 3
    """
    from orchestrator.commit.rollback import rollback_session
    from orchestrator.run.outputs import recompute_quality
    from orchestrator.session.ledger import read_ledger

    paths = ctx.session(session)
    if show:
        entries = read_ledger(paths.store_db)
        if as_json:
            emit_json(entries)
        for entry in [] if as_json else entries:
            click.echo(f"{entry['seq']:>5}  {entry['committed_at']}  {entry['action']:<8} {entry['agent']}"
                       + (f"  attempt {entry['attempt']}" if entry["attempt"] else ""))
        return
    if target is None:
        raise UsageError("give --to N (a ledger entry; 0 empties the graph), or --list to see the entries")
    head = max((e["seq"] for e in read_ledger(paths.store_db)), default=0)
    if not 0 <= target <= head:
        raise UsageError(f"cannot roll back to {target}: the ledger has entries 0..{head} "
                         "(see them with `cconductor rollback SESSION --list`)")
    changed = rollback_session(paths, target, after=lambda validate: recompute_quality(paths, validate))
    if as_json:
        emit_json({"to": target, "changed": changed})
    else:
        click.echo(f"rolled back to ledger entry {target}: " + (", ".join(sorted(changed)) or "nothing changed"))

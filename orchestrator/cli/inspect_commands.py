"""Commands that read sessions: status, sessions, latest, export."""

from __future__ import annotations

from pathlib import Path

import click

from orchestrator.cli.app import Context, emit_json, friendly, json_option, main, pass_ctx


@main.command()
@click.argument("session", default="latest")
@json_option
@pass_ctx
@friendly
def status(ctx: Context, session: str, as_json: bool) -> None:
    """Show a session: status, agents, pending and errored locks, graph stats, quality.

    \b
    Examples:
      cconductor status
      cconductor status latest --json
    """
    from orchestrator.commit.inspection import session_status
    from orchestrator.contradictions.summary import status_lines

    info = session_status(ctx.session(session))
    if as_json:
        emit_json(info)
        return
    click.echo(
        f"session   {info['id']}  [{info['status']}]" + (f" {info['status_reason']}" if info["status_reason"] else "")
    )
    click.echo(f"query     {info['query']}")
    click.echo(f"mission   {info['mission'] or '-'}    iteration {info['iteration']}")
    for name, agent in sorted(info["agents"].items()):
        click.echo(f"  agent {name:<28} {agent.get('state', '?'):<9} attempts {agent.get('attempts', 0)}")
    pending, errored = ", ".join(info["locks_pending"]) or "-", ", ".join(info["locks_errored"]) or "-"
    click.echo(f"locks     pending: {pending}; errored: {errored}")
    if info.get("locks_unsettled"):
        click.echo(f"          judged, not yet signalled (a processor was stopped after its commit): "
                   f"{', '.join(info['locks_unsettled'])}; `cconductor process {info['id']}` writes their outcome")
    skipped = info.get("skipped_inputs") or []
    if skipped:
        click.echo(f"skipped   {len(skipped)} input file(s): " + ", ".join(
            f"{Path(str(s['path'])).name} ({s['reason']})" for s in skipped[:8]) + (" ..." if len(skipped) > 8 else ""))
    if info.get("graph_problem"):
        click.echo(f"graph     not shown: {info['graph_problem']}")
    stats = info["stats"]
    if stats:
        click.echo(
            "graph     " + ", ".join(f"{k.removesuffix('_count')} {stats[k]}" for k in stats if k.endswith("_count"))
        )
        click.echo(f"evidence  {stats.get('evidence_verified', 0)}/{stats.get('evidence_items', 0)} verified")
    click.echo("".join(f"{ln}\n" for ln in status_lines(info.get("contradictions") or [], info["quality"])), nl=False)
    if info["quality"]:
        q = info["quality"]
        click.echo(
            f"quality   {q.get('score')}/100 " + ", ".join(f"{k} {v}" for k, v in q.get("components", {}).items())
            + (f"\n          (scored from an earlier graph: `cconductor report {info['id']}` scores it again)"
               if q.get("current") is False else "")
        )
        gate = "passed" if q.get("passed") else "not passed"
        click.echo(f"gate      {gate}" + "".join(f"\n  - {r}" for r in q.get("recommendations", [])))
    if info.get("cost_usd") is not None:
        click.echo(f"cost      ${info['cost_usd']:.4f} (costs.jsonl)")


@main.command()
@json_option
@pass_ctx
@friendly
def sessions(ctx: Context, as_json: bool) -> None:
    """List sessions, oldest first.

    \b
    Examples:
      cconductor sessions
      cconductor --sessions-dir ~/research sessions --json
    """
    from orchestrator.session.record import list_sessions, load_session

    rows = []
    for paths in list_sessions(ctx.sessions_dir):
        data = load_session(paths)
        rows.append(
            {
                "id": data["id"],
                "status": data["status"],
                "mission": data.get("mission"),
                "query": data["query"],
                "path": str(paths.root),
            }
        )
    if as_json:
        emit_json(rows)
    else:
        for row in rows:
            click.echo(f"{row['id']}  {row['status']:<16} {row['mission'] or '-':<22} {row['query']}")
        if not rows:
            from orchestrator.session.record import other_sessions_hint

            click.echo(f"no sessions in {ctx.sessions_dir.resolve()} ({other_sessions_hint(ctx.sessions_dir)})")


@main.command()
@json_option
@pass_ctx
@friendly
def latest(ctx: Context, as_json: bool) -> None:
    """Print the newest session's folder.

    \b
    Examples:
      cconductor latest
      cd "$(cconductor latest)"
    """
    paths = ctx.session("latest")
    if as_json:
        emit_json({"path": str(paths.root), "id": paths.root.name})
    else:
        click.echo(str(paths.root))


@main.command()
@click.argument("session", default="latest")
@click.option(
    "--format", "fmt", type=click.Choice(["turtle", "trig", "jsonld", "nquads"]), default="trig", show_default=True,
    help="RDF syntax of the export (trig and nquads keep one named graph per agent).",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write to a file.")
@pass_ctx
@friendly
def export(ctx: Context, session: str, fmt: str, output: Path | None) -> None:
    """Export the knowledge graph as RDF.

    \b
    Examples:
      cconductor export
      cconductor export latest --format turtle -o graph.ttl
    """
    from orchestrator.commit.inspection import export_graph

    text = export_graph(ctx.session(session), "json-ld" if fmt == "jsonld" else fmt)
    if output:
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as exc:  # a write error (EIO, ENOSPC) carries no file name: say which path failed
            raise OSError(exc.errno, exc.strerror or str(exc), str(output)) from exc
        click.echo(str(output))
    else:
        click.echo(text)

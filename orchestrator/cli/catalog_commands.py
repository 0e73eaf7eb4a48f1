"""What can be run: ``cconductor missions`` (and ``missions show``) and ``cconductor agents``."""

from __future__ import annotations

from pathlib import Path

import click

from orchestrator.cli.app import emit_json, friendly, json_option, main


@main.group(invoke_without_command=True)
@json_option
@click.pass_context
@friendly
def missions(ctx: click.Context, as_json: bool) -> None:
    """List missions (shipped and from the user config folder).

    \b
    Examples:
      cconductor missions
      cconductor missions show local-documents
    """
    if ctx.invoked_subcommand:
        return
    from orchestrator.run.missions import list_missions

    found = list_missions()
    if as_json:
        emit_json([{"name": m.name, "description": m.description, "source": str(m.source)} for m in found])
        return
    for item in found:
        click.echo(f"{item.name:<24} {item.description}")


@missions.command("show")
@click.argument("name")
@json_option
@friendly
def missions_show(name: str, as_json: bool) -> None:
    """Describe one mission: agents per phase, success criteria, limits.

    \b
    Example:
      cconductor missions show academic-research --json
    """
    from orchestrator.run.missions import load_mission

    mission = load_mission(name)
    data = {**mission.to_dict(), "source": str(mission.source)}
    if as_json:
        emit_json(data)
        return
    click.echo(f"{mission.name}: {mission.description}\nobjective: {mission.objective}\nfile: {mission.source}")
    for section in ("phases", "success_criteria", "constraints", "output"):
        click.echo(f"{section}:")
        for key, value in data[section].items():
            shown = ", ".join(map(str, value)) if isinstance(value, list | tuple) else value
            click.echo(f"  {key:<28} {shown}")


@main.command()
@click.option(
    "--agents-dir", "agent_dirs", multiple=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Extra folder of agent definitions to list as well; repeatable.",
)
@json_option
@friendly
def agents(agent_dirs: tuple[Path, ...], as_json: bool) -> None:
    """List agent definitions (built-in, user config folder, --agents-dir).

    \b
    Examples:
      cconductor agents
      cconductor agents --agents-dir my-agents/ --json
    """
    from orchestrator.run.definitions import load_definitions

    found = load_definitions(agent_dirs)
    if as_json:
        emit_json(
            [
                {
                    "name": d.name,
                    "phase": d.phase,
                    "description": d.description,
                    "required_files": list(d.required_files),
                    "timeout_seconds": d.timeout_seconds,
                    "tools": list(d.tools),
                    "external": d.external,
                    "source": str(d.source),
                }
                for d in found.values()
            ]
        )
        return
    for definition in sorted(found.values(), key=lambda d: (d.phase, d.name)):
        kind = "external" if definition.external else "built-in"
        click.echo(f"{definition.name:<22} {definition.phase:<11} {kind:<9} {definition.description}")

"""What can be run: ``cconductor missions`` (and ``missions show``), ``cconductor agents`` and
``cconductor models``."""

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


def _money(value: float) -> str:
    return f"{value:g}"


@main.command()
@json_option
@friendly
def models(as_json: bool) -> None:
    """List the model prices and capabilities in use, and where each row comes from.

    \b
    Examples:
      cconductor models
      cconductor models --json
    """
    from orchestrator.run.plugins import model_catalog

    catalog = model_catalog()
    if as_json:
        emit_json(catalog)
        return
    present = "" if catalog.get("config_file_exists") else ", not present: the defaults apply"
    click.echo(f"Models in use (config: {catalog['config_file']}{present}):")
    for who, model in catalog["in_use"].items():
        click.echo(f"  {who:<28} {model}")
    click.echo("\nPrices in USD per million tokens; web search ${:g} per search.".format(
        catalog["web_search_per_request"]))
    click.echo(f"  {'model':<26} {'input':>6} {'output':>6} {'w 5m':>6} {'w 1h':>6} {'read':>6}  "
               f"{'forced':<6} {'sampl.':<6} {'json':<5} {'max out':>7}")
    sources: dict[str, list[str]] = {}
    for row in catalog["models"]:
        caps = row["capabilities"]
        flags = [("yes" if caps[k] else "no") for k in ("forced_tool_choice", "sampling_parameters",
                                                         "structured_outputs")]
        click.echo(f"  {row['model']:<26} {_money(row['input']):>6} {_money(row['output']):>6} "
                   f"{_money(row['cache_write_5m']):>6} {_money(row['cache_write_1h']):>6} "
                   f"{_money(row['cache_read']):>6}  {flags[0]:<6} {flags[1]:<6} {flags[2]:<5} "
                   f"{caps['max_output_tokens']:>7}")
        if row["long_context"]:
            click.echo(f"  {'':<26} every rate x{row['long_context']['factor']:g} for prompts over "
                       f"{row['long_context']['above_tokens']:,} tokens")
        for note in (row["price_note"], None if row["capabilities_source"].startswith("shipped table (claude")
                     and row["model"] in row["capabilities_source"] else
                     f"capabilities: {row['capabilities_source']}"):
            if note:
                click.echo(f"  {'':<26} {note}")
        if row["price_source"]:
            sources.setdefault(row["price_source"], []).append(row["model"])
    click.echo("\nWhere the prices come from:")
    for source, names in sources.items():
        click.echo(f"  {', '.join(names)}:\n      {source}")
    click.echo(f"\nCapabilities (forced tool use, sampling parameters, structured outputs, max output): "
               f"{catalog['capabilities_table_source']}; a release the table does not name takes the behaviour "
               "of the nearest older release of its family, an unknown family forces nothing and sends no "
               "sampling parameters. At run time the Models API refines structured outputs and max output.")

"""``cconductor memory``: list, show and forget the repair memory shared by all sessions."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from orchestrator.cli.app import emit_json, friendly, json_option, main
from orchestrator.model.errors import UsageError

if TYPE_CHECKING:
    from orchestrator.memory.store import MemoryStore, RepairItem


@main.group()
def memory() -> None:
    """The repair memory: how rejections of each kind were fixed before, in any session.

    It lives in the user data folder (or $CCONDUCTOR_MEMORY_DIR) and fills itself: when an
    agent's accepted attempt follows a rejection, the change is recorded, and later retry
    instructions quote it under 'known_repairs'.

    \b
    Examples:
      cconductor memory list
      cconductor memory forget --all
    """


def _store() -> MemoryStore:
    from orchestrator.memory.store import MemoryStore

    return MemoryStore()


def _find(store: MemoryStore, item_id: str) -> RepairItem:
    item = store.get(item_id)
    if item is None:
        raise UsageError(f"no single repair item has an id starting with {item_id!r} in {store.path}; "
                         "'cconductor memory list' shows the ids")
    return item


@memory.command("list")
@json_option
@friendly
def list_items(as_json: bool) -> None:
    """List the repair items, best first (successes of uses).

    \b
    Example:
      cconductor memory list --json
    """
    store = _store()
    items = store.items()
    if as_json:
        emit_json({"path": str(store.path), "items": [i.to_dict() for i in items]})
        return
    if not items:
        click.echo(f"the repair memory is empty ({store.path})")
        return
    for item in items:
        click.echo(f"{item.id}  {item.successes}/{item.uses}  {item.label}\n              -> {item.repair}")


@memory.command()
@click.argument("item_id")
@json_option
@friendly
def show(item_id: str, as_json: bool) -> None:
    """Show one repair item (ITEM_ID or a unique prefix of it).

    \b
    Example:
      cconductor memory show ITEM_ID
    """
    item = _find(_store(), item_id)
    if as_json:
        emit_json(item.to_dict())
        return
    for label, value in (("id", item.id), ("signature", item.label), ("key", item.signature_key),
                         ("file", item.file), ("rule", item.rule), ("repair", item.repair),
                         ("counts", f"{item.successes} of {item.uses} repairs of this signature made this change"),
                         ("first seen", item.created), ("last counted", item.modified),
                         ("sessions", ", ".join(item.sessions) or "(none)")):
        click.echo(f"{label:>12}: {value}")


@memory.command()
@click.argument("item_ids", nargs=-1)
@click.option("--all", "forget_all", is_flag=True, help="Forget every item (empties the memory).")
@json_option
@friendly
def forget(item_ids: tuple[str, ...], forget_all: bool, as_json: bool) -> None:
    """Forget repair items (ITEM_ID... or --all).

    \b
    Examples:
      cconductor memory forget ITEM_ID
      cconductor memory forget --all
    """
    if forget_all == bool(item_ids):
        raise UsageError("give the ids of the items to forget, or --all (not both); "
                         "'cconductor memory list' shows the ids")
    store = _store()
    if forget_all:
        import contextlib

        from orchestrator.memory.store import MemoryDamaged

        with contextlib.suppress(MemoryDamaged):  # --all is also the way out of a damaged file
            removed = store.forget(None)
            _report(removed, as_json)
            return
        store.path.unlink()
        _report(["(damaged file removed)"], as_json)
        return
    removed = store.forget([_find(store, i).id for i in item_ids])
    _report(removed, as_json)


def _report(removed: list[str], as_json: bool) -> None:
    if as_json:
        emit_json({"forgotten": removed})
    else:
        click.echo(f"forgot {len(removed)} item(s)" + (f": {', '.join(removed)}" if removed else ""))

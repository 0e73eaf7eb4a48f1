"""The import rules of docs/architecture.md, checked on the source (no import needed).

Layers of ``orchestrator/`` from top to bottom; a module may import its own layer's package
and any layer below, never one above, and packages that share a layer never import each
other. Nothing in ``orchestrator/`` imports ``agents/`` (agents register through entry
points), and no module imports itself back through a cycle, lazily or not.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Top to bottom. Packages in one tuple share a layer and are independent of each other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("cli",),
    ("viewer",),
    ("run",),
    ("answers",),
    ("report", "commit"),
    ("memory",),
    ("session",),
    ("rdf",),
    ("graph", "contract"),
    ("contradictions",),
    ("model",),
)
LEVEL = {package: depth for depth, layer in enumerate(LAYERS) for package in layer}
MAX_LINES = 330  # "about 300": a module past this is doing more than one job


def _module_name(path: Path) -> str:
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return name.removesuffix(".__init__")


def _sources(*packages: str) -> dict[str, Path]:
    return {_module_name(p): p for package in packages for p in sorted((ROOT / package).rglob("*.py"))}


def _imports(path: Path, module: str) -> set[str]:
    """Every module this file imports, at the top or inside a function."""
    found: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _graph(*packages: str) -> dict[str, set[str]]:
    sources = _sources(*packages)
    return {name: {m for m in _imports(path, name) if m in sources and m != name}
            for name, path in sources.items()}


def _layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in LEVEL) else None


def test_every_orchestrator_package_has_a_layer() -> None:
    packages = {p.name for p in (ROOT / "orchestrator").iterdir() if (p / "__init__.py").is_file()}
    assert packages - set(LEVEL) == set(), "add the new package to LAYERS here and to docs/architecture.md"


def test_nothing_in_orchestrator_imports_agents() -> None:
    offenders = [f"{name} imports {target}" for name, path in _sources("orchestrator").items()
                 for target in _imports(path, name) if target.split(".")[0] == "agents"]
    assert offenders == []


def test_layers_import_only_downward() -> None:
    offenders = []
    for name, targets in _graph("orchestrator").items():
        source_layer = _layer_of(name)
        for target in targets:
            target_layer = _layer_of(target)
            if source_layer is None or target_layer is None or source_layer == target_layer:
                continue
            if LEVEL[target_layer] <= LEVEL[source_layer]:
                offenders.append(f"{name} ({source_layer}) imports {target} ({target_layer})")
    assert offenders == [], "\n".join(offenders)


def test_pure_core_does_no_process_or_network_io() -> None:
    forbidden = {"subprocess", "socket", "httpx2", "anthropic", "watchdog", "sqlite3", "filelock"}
    offenders = [f"{name} imports {target}"
                 for name, path in _sources("orchestrator").items()
                 if _layer_of(name) in ("model", "contradictions", "graph", "rdf")
                 for target in _imports(path, name) if target.split(".")[0] in forbidden]
    assert offenders == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Modules folded into their package's ``__init__`` imports are ignored (a package may re-export)."""
    return {name: {t for t in targets if not name.startswith(t + ".")} for name, targets in graph.items()}


@pytest.mark.parametrize("package", ["orchestrator", "agents"])
def test_no_import_cycles(package: str) -> None:
    cycles = _cycles(_package_graph(_graph("orchestrator", "agents")))
    mine = [c for c in cycles if any(m.split(".")[0] == package for m in c)]
    assert mine == [], "\n".join(" <-> ".join(c) for c in mine)


def test_modules_stay_small() -> None:
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines())
             for name, path in _sources("orchestrator", "agents").items()}
    too_big = sorted(f"{name}: {lines} lines" for name, lines in sizes.items() if lines > MAX_LINES)
    assert too_big == [], "split these by job:\n" + "\n".join(too_big)


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    """The rules above could fail: a planted upward import and a cycle are found."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _layer_of("orchestrator.model.kinds") == "model"
    assert LEVEL["model"] > LEVEL["commit"]  # so model -> commit would be reported as upward
    edges: dict[str, set[str]] = defaultdict(set)
    edges["orchestrator.model.x"].add("orchestrator.commit.y")
    upward = [(s, t) for s, ts in edges.items() for t in ts
              if LEVEL[_layer_of(t) or ""] < LEVEL[_layer_of(s) or ""]]
    assert upward == [("orchestrator.model.x", "orchestrator.commit.y")]

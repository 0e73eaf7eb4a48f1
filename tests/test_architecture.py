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


#: Process-wide switches a library module must leave to the program that runs it (#24): the cyclic
#: garbage collector's settings, the interpreter's, and the import system's tables.
GC_SWITCHES = {"disable", "enable", "freeze", "unfreeze", "set_threshold", "set_debug"}
SYS_SWITCHES = {"setswitchinterval", "setrecursionlimit", "setprofile", "settrace"}
IMPORT_TABLES = {"modules", "meta_path", "path_hooks", "path", "path_importer_cache"}
MUTATORS = {"__setitem__", "__delitem__", "append", "clear", "extend", "insert", "pop", "popitem", "remove",
            "setdefault", "update"}


def _process_state_edits(source: str) -> list[str]:
    """Calls that switch the collector or the interpreter, and writes into the import system's tables."""
    tree = ast.parse(source)
    names: dict[str, str] = {}  # local name -> "gc", "sys", "gc.<f>", "sys.<attr>"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update({a.asname or a.name: a.name for a in node.names if a.name in ("gc", "sys")})
        elif isinstance(node, ast.ImportFrom) and node.module in ("gc", "sys") and not node.level:
            names.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})

    def dotted(node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return names.get(node.id)
        if isinstance(node, ast.Attribute):
            base = dotted(node.value)
            return f"{base}.{node.attr}" if base in ("gc", "sys") else None
        return None

    def table(node: ast.expr) -> str | None:
        name = dotted(node)
        return name if name in {f"sys.{t}" for t in IMPORT_TABLES} else None

    found: list[str] = []
    for node in ast.walk(tree):
        where = f"line {getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Call):
            called = dotted(node.func)
            if called in {f"gc.{f}" for f in GC_SWITCHES} | {f"sys.{f}" for f in SYS_SWITCHES}:
                found.append(f"{where}: {called}()")
            elif (isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS
                  and (edited := table(node.func.value))):
                found.append(f"{where}: {edited}.{node.func.attr}()")
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for target in targets:
                container = target.value if isinstance(target, ast.Subscript) else target
                if (edited := table(container)) is not None:
                    found.append(f"{where}: writes {edited}")
    return found


def test_no_library_module_switches_process_wide_state() -> None:
    """A program importing orchestrator or agents keeps its collector, interpreter and imports as it set them."""
    offenders = [f"{path.relative_to(ROOT)} {edit}" for path in _sources("orchestrator", "agents").values()
                 for edit in _process_state_edits(path.read_text(encoding="utf-8"))]
    assert offenders == [], "process-wide state belongs to the program, not the library:\n" + "\n".join(offenders)


@pytest.mark.parametrize("source", [
    "import gc\ngc.disable()", "import gc\ngc.freeze()", "import gc as g\ng.set_threshold(10_000)",
    "from gc import enable\nenable()", "import sys\nsys.modules['rfc3987_syntax'] = None",
    "import sys\ndel sys.modules['x']", "import sys\nsys.modules.pop('x', None)",
    "import sys\nsys.meta_path.insert(0, f)", "import sys\nsys.meta_path = [f]",
    "from sys import modules\nmodules.setdefault('x', m)",
    "import sys\nsys.path.insert(0, 'here')", "import sys\nsys.setswitchinterval(1)",
])
def test_the_process_state_checker_sees_each_kind_of_edit(source: str) -> None:
    assert _process_state_edits(source), source


def test_the_process_state_checker_lets_reading_through() -> None:
    reading = ("import gc, sys\nif 'numpy' in sys.modules: pass\nx = sys.modules.get('y')\n"
               "gc.collect()\ngc.get_threshold()\nfor f in sys.meta_path: pass\n")
    assert _process_state_edits(reading) == []

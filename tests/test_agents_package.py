"""The top-level ``agents`` package must be this repository's, not the OpenAI Agents SDK's.

The SDK (distribution ``openai-agents``) also installs a top-level package named ``agents``;
with both in one environment, one silently shadows the other.
"""

from __future__ import annotations

import importlib
import importlib.metadata as metadata
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DIST = "cconductor"
ADVICE = (
    "The OpenAI Agents SDK (pip package 'openai-agents') also installs a top-level package named "
    "'agents', which clashes with cconductor's. Uninstall it (`pip uninstall openai-agents`) or "
    "install cconductor into its own virtual environment (python -m venv .venv && "
    ". .venv/bin/activate && pip install -e .)."
)


def _norm(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _cconductor_dist() -> metadata.Distribution:
    try:
        return metadata.distribution(DIST)
    except metadata.PackageNotFoundError as exc:
        raise AssertionError(
            f"the '{DIST}' distribution is not installed; run `pip install -e .` in {REPO}"
        ) from exc


def _editable_project_dir(dist: metadata.Distribution) -> Path | None:
    """The source folder of an editable install (PEP 610 direct_url.json), else None."""
    text = dist.read_text("direct_url.json")
    if not text:
        return None
    info = json.loads(text)
    url = info.get("url", "")
    if not info.get("dir_info", {}).get("editable") or not url.startswith("file://"):
        return None
    from urllib.parse import unquote, urlsplit

    return Path(unquote(urlsplit(url).path)).resolve()


def _dist_files(dist: metadata.Distribution) -> set[Path]:
    return {Path(str(dist.locate_file(f))).resolve() for f in dist.files or ()}


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _provided_by_cconductor(agents_file: Path) -> bool:
    dist = _cconductor_dist()
    if agents_file in _dist_files(dist):
        return True  # a regular (wheel) install lists the file in its RECORD
    project = _editable_project_dir(dist)
    return project is not None and _inside(agents_file, project)


def test_no_other_distribution_installs_a_top_level_agents_package() -> None:
    owners = metadata.packages_distributions().get("agents", [])
    foreign = sorted({d for d in owners if _norm(d) != DIST})
    assert not foreign, f"distribution(s) {foreign} install a top-level 'agents' package. {ADVICE}"
    if DIST in {_norm(d) for d in owners}:
        return
    # An editable install records no agents/*.py files in its RECORD (it adds the project folder
    # to sys.path instead); then the metadata must name this repository as the project folder.
    project = _editable_project_dir(_cconductor_dist())
    assert project is not None and _inside(REPO / "agents" / "__init__.py", project), (
        f"importlib.metadata does not attribute the 'agents' package to the '{DIST}' distribution "
        f"(packages_distributions()['agents'] = {owners}, editable project folder = {project}); "
        f"reinstall with `pip install -e {REPO}`. {ADVICE}"
    )


def test_agents_resolves_to_this_repository_in_process() -> None:
    agents = importlib.import_module("agents")
    agents_file = Path(str(agents.__file__)).resolve()
    assert _inside(agents_file, REPO) or _provided_by_cconductor(agents_file), (
        f"'import agents' gives {agents_file}, which is not part of cconductor ({REPO}). {ADVICE}"
    )
    offline = importlib.util.find_spec("agents.offline")
    assert offline is not None, (
        f"'agents' at {agents_file} has no 'offline' subpackage: it is not ours. {ADVICE}"
    )


def test_agents_resolves_to_cconductor_outside_the_source_tree(tmp_path: Path) -> None:
    """As the ``cconductor`` command sees it: a fresh interpreter, started outside the repository.

    (pytest puts the repository first on sys.path, which would hide a shadowing SDK install.)
    """
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME")}
    result = subprocess.run(
        [sys.executable, "-c", "import agents, agents.offline; print(agents.__file__)"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, (
        f"'import agents.offline' failed outside the repository:\n{result.stderr}\n{ADVICE}"
    )
    agents_file = Path(result.stdout.strip().splitlines()[-1]).resolve()
    assert _inside(agents_file, REPO) or _provided_by_cconductor(agents_file), (
        f"outside the repository, 'import agents' gives {agents_file}, not cconductor's package. {ADVICE}"
    )

"""schemas/ and ontology/ ship inside the built wheel and are found from an installed package.

The wheel is built from this checkout, installed into a fresh virtual environment (its
dependencies come from this interpreter's site-packages, so no network is needed), and the
venv's own ``cconductor`` command creates a session, processes artifacts (JSON Schema and
SHACL checks, which need both resource folders) and validates the session, from a working
folder outside the repository.
"""

from __future__ import annotations

import configparser
import hashlib
import json
import os
import site
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow  # a stress or long end-to-end case: `pytest -m slow` (CI runs it)

REPO = Path(__file__).resolve().parents[1]
RESOURCES = {"schemas": "orchestrator/_resources/schemas", "ontology": "orchestrator/_resources/ontology"}


def run(cmd: list[str | Path], *, cwd: Path, env: dict[str, str], timeout: float = 300,
        check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True,
                            timeout=timeout)
    if check and result.returncode != 0:
        shown = " ".join(map(str, cmd))
        pytest.fail(f"`{shown}` exited with {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def clean_env(home: Path) -> dict[str, str]:
    """No PYTHONPATH (the repository must not leak in), a private HOME, no sessions-dir override."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "PIP_REQUIRE_VIRTUALENV",
                        "CCONDUCTOR_SESSIONS_DIR")}
    env.update(HOME=str(home), PYTHONNOUSERSITE="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1",
               PIP_NO_INDEX="1")
    return env


def venv_site_packages(venv: Path) -> Path:
    return Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))


def make_venv(venv: Path, env: dict[str, str], cwd: Path) -> Path:
    """A fresh venv seeing this interpreter's packages; returns its python."""
    run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv], cwd=cwd, env=env)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if sys.prefix != sys.base_prefix:
        # Running inside a venv: --system-site-packages would only expose the *base* interpreter's
        # packages, so list this environment's site-packages too (after the new venv's own).
        paths = [p for p in site.getsitepackages() if Path(p).is_dir()]
        (venv_site_packages(venv) / "_outer_env.pth").write_text("\n".join(paths) + "\n")
    return python


def artifact(folder: Path, name: str, data: Any) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(data, indent=1), encoding="utf-8")


def source(sid: str, sha: str) -> dict[str, Any]:
    return {"id": sid, "type": "journal-article", "title": "Merging knowledge graphs",
            "authors": ["Ada Lovelace"], "year": 2020, "peer_reviewed": True, "content_sha256": sha}


def claim(cid: str, snippet: str, priority: str = "high") -> dict[str, Any]:
    return {"id": cid, "statement": f"Claim {cid}: merging is hard.", "confidence": 0.8, "priority": priority,
            "evidence": [{"source_id": "S1", "snippet": snippet, "locator": {"page": 2}}]}


def test_wheel_ships_resources_and_installed_cconductor_uses_them(tmp_path: Path) -> None:
    home, work, wheels = tmp_path / "home", tmp_path / "work", tmp_path / "wheels"
    for folder in (home, work, wheels):
        folder.mkdir()
    env = clean_env(home)

    # 1. Build the wheel from this checkout (hatchling, no build isolation: no network).
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", wheels, REPO],
        cwd=work, env=env, timeout=600)
    built = sorted(wheels.glob("cconductor-*.whl"))
    found = [p.name for p in wheels.iterdir()]
    assert len(built) == 1, f"expected one cconductor wheel in {wheels}, found {found}"
    wheel = built[0]
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(
            (archive.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt")), ""
        )
    for required in (f"{RESOURCES['schemas']}/claims.schema.json", f"{RESOURCES['ontology']}/shapes.ttl",
                     "orchestrator/__init__.py", "agents/__init__.py"):
        assert required in names, (
            f"{required} is missing from {wheel.name}; check [tool.hatch.build] in pyproject.toml"
        )
    static = {f"orchestrator/viewer/static/{p.name}" for p in (REPO / "orchestrator/viewer/static").iterdir()}
    assert static and static <= names, f"the viewer's page files are missing: {sorted(static - names)}"
    for resource_folder, target in RESOURCES.items():
        expected = {f"{target}/{p.name}" for p in (REPO / resource_folder).iterdir() if p.is_file()}
        missing = sorted(expected - names)
        assert not missing, f"{wheel.name} lacks these files of {resource_folder}/: {missing}"
    scripts = configparser.ConfigParser()
    scripts.read_string(entry_points)
    script = scripts.get("console_scripts", "cconductor", fallback=None)
    assert script == "orchestrator.cli:main", entry_points

    # 2. Install it into a fresh venv; dependencies come from this interpreter's site-packages.
    venv = tmp_path / "venv"
    python = make_venv(venv, env, work)
    run([python, "-m", "pip", "install", "--no-deps", "--force-reinstall", wheel],
        cwd=work, env=env, timeout=600)
    cconductor = venv / ("Scripts/cconductor.exe" if os.name == "nt" else "bin/cconductor")
    assert cconductor.exists(), f"the wheel installed no console script at {cconductor}"

    probe = run([python, "-c", "import json, orchestrator, agents\n"
                 "from orchestrator.model.layout import resource_dir\n"
                 "print(json.dumps([orchestrator.__file__, agents.__file__,\n"
                 "                  str(resource_dir('schemas')), str(resource_dir('ontology'))]))"],
                cwd=work, env=env)
    venv_root = venv.resolve()
    labels = ("orchestrator", "agents", "schemas", "ontology")
    for label, where in zip(labels, json.loads(probe.stdout), strict=True):
        resolved = Path(where).resolve()
        assert venv_root in resolved.parents, (
            f"in the venv, {label} comes from {resolved}, not from the installed package under {venv_root}"
        )
        assert REPO not in resolved.parents, f"in the venv, {label} comes from the source tree ({resolved})"

    # 3. Use the installed command from a folder outside the repository.
    sessions = work / "sessions"
    created = run([cconductor, "--sessions-dir", sessions, "new", "How do agents merge knowledge?"],
                  cwd=work, env=env)
    root = Path(created.stdout.strip().splitlines()[-1])
    assert (root / "session.json").is_file(), created.stdout
    text = "Introduction.\fWe show that merging is hard in practice, and measure it."
    sha = hashlib.sha256(text.encode()).hexdigest()
    (root / "sources").mkdir(exist_ok=True)
    (root / "sources" / f"{sha}.txt").write_text(text, encoding="utf-8")

    good = root / "artifacts" / "researcher"
    artifact(good, "sources.json", {"sources": [source("S1", sha)]})
    artifact(good, "claims.json", {"claims": [claim("C1", "merging is hard in practice")]})
    (root / "researcher.kg.lock").touch()
    result = run([cconductor, "--sessions-dir", sessions, "process", root.name, "--json"], cwd=work, env=env)
    outcomes = {o["agent"]: o for o in json.loads(result.stdout)}
    assert outcomes["researcher"]["status"] == "merged", result.stdout
    graph = json.loads((root / "knowledge-graph.json").read_text())
    assert graph["claims"][0]["id"] == "researcher:C1"
    assert graph["claims"][0]["evidence"][0]["verification"]["verified"] is True
    assert "urn:cconductor:agent:researcher" in (root / "knowledge-graph.trig").read_text()

    # A schema violation (needs schemas/) and a SHACL violation (needs ontology/shapes.ttl).
    artifact(root / "artifacts" / "schema-breaker", "claims.json",
             {"claims": [{"id": "C1", "statement": 42, "confidence": "very"}]})
    breaker = root / "artifacts" / "shacl-breaker"
    artifact(breaker, "sources.json", {"sources": [source("S1", sha)]})
    artifact(breaker, "claims.json", {"claims": [claim("C1", "latency was 40 ms at the median")]})
    for agent in ("schema-breaker", "shacl-breaker"):
        (root / f"{agent}.kg.lock").touch()
    result = run([cconductor, "--sessions-dir", sessions, "process", root.name, "--json"], cwd=work, env=env,
                 check=False)
    assert result.returncode == 1, f"rejections must exit 1:\n{result.stdout}\n{result.stderr}"
    outcomes = {o["agent"]: o for o in json.loads(result.stdout)}
    assert outcomes["schema-breaker"]["status"] == "rejected", result.stdout
    assert any(p["rule"].startswith("schema.") for p in outcomes["schema-breaker"]["problems"]), result.stdout
    assert outcomes["shacl-breaker"]["status"] == "rejected", result.stdout
    assert any(p["rule"].startswith("shacl.") for p in outcomes["shacl-breaker"]["problems"]), result.stdout
    retry = json.loads((root / "shacl-breaker.retry-instructions.json").read_text())
    assert retry["error_class"] == "shacl", retry

    # 4. Full re-validation: every merged file against its schema, the whole graph against the shapes.
    result = run([cconductor, "--sessions-dir", sessions, "validate", root.name, "--json"], cwd=work, env=env,
                 check=False)
    assert result.returncode == 0, f"validate failed:\n{result.stdout}\n{result.stderr}"
    report = json.loads(result.stdout)
    assert report["conforms"] is True, report
    assert {p["rule"] for p in report["problems"]} <= {"lock.errored", "lock.pending"}, report

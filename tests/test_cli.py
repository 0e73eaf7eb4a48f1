"""The `cconductor` command line: exit codes, messages, --json output, session specs (CliRunner + subprocess)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from rdflib import Dataset, Graph

from orchestrator.cli import main
from orchestrator.contract.schemas import SchemaRegistry
from orchestrator.model.layout import SessionPaths
from orchestrator.session.record import create_session
from tests.conftest import cconductor, sample_claim, sample_source, store_text, write_artifacts

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:rdflib.*")

SKY = "Cover page.\fThe sky is blue on clear days because air scatters blue light."


@pytest.fixture
def sessions_dir(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


@pytest.fixture
def cli(sessions_dir: Path) -> Any:
    runner = CliRunner()

    def invoke(*args: str) -> Result:
        return runner.invoke(main, ["--sessions-dir", str(sessions_dir), *args], catch_exceptions=False)

    return invoke


@pytest.fixture
def paths(sessions_dir: Path) -> SessionPaths:
    return create_session(sessions_dir, "Why is the sky blue?", "test-mission")


def good_set(paths: SessionPaths, agent: str = "researcher", claim_id: str = "C1", lock: bool = True) -> None:
    sha = store_text(paths, SKY)
    write_artifacts(paths, agent, {
        "sources.json": {"sources": [sample_source("S1", content_sha256=sha, url="https://example.org/sky")]},
        "claims.json": {"claims": [sample_claim(claim_id, priority="high", evidence=[
            {"source_id": "S1", "snippet": "air scatters blue light", "locator": {"page": 2}}])]},
    }, lock=lock)


def bad_set(paths: SessionPaths, agent: str = "sloppy") -> None:
    write_artifacts(paths, agent, {"claims.json": {"claims": [
        sample_claim(confidence=1.5, evidence=[{"source_id": "researcher:S1", "snippet": "blue"}])]}})


def kg(paths: SessionPaths) -> dict[str, Any]:
    return json.loads(paths.kg_json.read_text(encoding="utf-8"))


def as_json(result: Result) -> Any:
    return json.loads(result.stdout)


# -- basics ------------------------------------------------------------------------------------------------
def test_help_works_as_an_installed_command() -> None:
    done = subprocess.run([*cconductor(), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    for command in ("new", "watch", "process", "retry", "validate", "status", "sessions", "latest", "rollback",
                    "export"):
        assert command in done.stdout
    assert "Exit codes" in done.stdout


def test_new_prints_the_folder_of_a_fresh_session(cli: Any, sessions_dir: Path) -> None:
    result = cli("new", "How do agents merge knowledge?", "--mission", "academic-research")
    assert result.exit_code == 0, result.output
    folder = Path(result.stdout.strip())
    assert folder.parent == sessions_dir.resolve()
    session = json.loads((folder / "session.json").read_text())
    assert session["query"] == "How do agents merge knowledge?" and session["status"] == "created"
    assert session["mission"] == "academic-research" and session["id"] == folder.name
    assert (folder / "artifacts").is_dir() and (folder / "sources").is_dir()


# -- process and retry ---------------------------------------------------------------------------------------
def test_process_exits_0_on_success_and_1_on_rejection_naming_the_rule(cli: Any, paths: SessionPaths) -> None:
    good_set(paths)
    result = cli("process", str(paths.root))
    assert result.exit_code == 0, result.output
    assert "researcher: merged (attempt 1)" in result.stdout
    assert kg(paths)["researcher"]["claims"][0]["id"] == "C1"

    bad_set(paths)
    result = cli("process", str(paths.root))
    assert result.exit_code == 1
    assert "sloppy: rejected (attempt 1)" in result.stdout
    assert "artifacts/sloppy/claims.json at /claims/0/confidence" in result.stdout
    assert "[schema.maximum]" in result.stdout and "sloppy.retry-instructions.json" in result.stdout
    assert paths.lock_error("sloppy").exists() and "sloppy" not in kg(paths)

    result = cli("process", str(paths.root))
    assert result.exit_code == 0 and "nothing pending" in result.stdout


def test_process_json_output(cli: Any, paths: SessionPaths) -> None:
    good_set(paths)
    bad_set(paths)
    result = cli("process", str(paths.root), "--json")
    assert result.exit_code == 1
    outcomes = {o["agent"]: o for o in as_json(result)}
    assert outcomes["researcher"]["status"] == "merged" and outcomes["researcher"]["seq"] >= 1
    assert outcomes["sloppy"]["status"] == "rejected"
    assert [p["rule"] for p in outcomes["sloppy"]["problems"]] == ["schema.maximum"]


def test_retry_after_fixing_the_files_merges_and_clears_the_error_files(cli: Any, paths: SessionPaths) -> None:
    good_set(paths)
    bad_set(paths)
    assert cli("process", str(paths.root)).exit_code == 1
    doc = json.loads(paths.retry_instructions("sloppy").read_text())
    assert doc["files"][0]["problems"][0]["pointer"] == "/claims/0/confidence"

    result = cli("retry", str(paths.root), "sloppy")  # unchanged files: rejected again, not a new attempt
    assert result.exit_code == 1 and "sloppy: rejected (attempt 1)" in result.stdout
    assert paths.lock_error("sloppy").exists()

    write_artifacts(paths, "sloppy", {"claims.json": {"claims": [
        sample_claim(confidence=0.5, evidence=[{"source_id": "researcher:S1", "snippet": "blue"}])]}}, lock=False)
    result = cli("retry", str(paths.root), "sloppy")
    assert result.exit_code == 0, result.output
    assert "sloppy: merged (attempt 2)" in result.stdout
    assert not paths.lock_error("sloppy").exists() and not paths.retry_instructions("sloppy").exists()
    assert not paths.lock("sloppy").exists()
    assert kg(paths)["sloppy"]["claims"][0]["confidence"] == 0.5


def test_retry_of_an_agent_without_artifacts_is_a_usage_error(cli: Any, paths: SessionPaths) -> None:
    result = cli("retry", str(paths.root), "nobody")
    assert result.exit_code == 2
    assert "has no artifacts/nobody/ folder" in result.stderr


# -- validate -------------------------------------------------------------------------------------------------
def test_validate_a_conforming_graph_and_warn_about_an_errored_lock(cli: Any, paths: SessionPaths) -> None:
    good_set(paths)
    cli("process", str(paths.root))
    result = cli("validate", str(paths.root))
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().endswith("conforms") and "WARNING" not in result.stdout

    bad_set(paths)
    write_artifacts(paths, "waiting", {"notes.json": {"x": 1}})  # a lock nobody processed yet
    paths.lock("waiting").unlink()
    assert cli("process", str(paths.root)).exit_code == 1
    paths.lock("waiting").touch()
    result = cli("validate", str(paths.root))
    assert result.exit_code == 0, result.output
    assert "WARNING: sloppy.kg.lock.error" in result.stdout
    assert "cconductor retry SESSION sloppy" in result.stdout
    assert "WARNING: waiting.kg.lock" in result.stdout
    data = as_json(cli("validate", str(paths.root), "--json"))
    assert data["conforms"] is True
    assert sorted(p["rule"] for p in data["problems"]) == ["lock.errored", "lock.pending"]


def test_validate_reports_a_non_conforming_graph_with_an_actionable_list(cli: Any, paths: SessionPaths) -> None:
    good_set(paths)
    assert cli("process", str(paths.root)).exit_code == 0
    # Damage the committed record behind the orchestrator's back (as a bad restore or a bug would):
    # the merged file and its graph item now carry a confidence of 7.
    with sqlite3.connect(paths.store_db) as db:
        seq, text = db.execute("SELECT seq, record FROM records WHERE agent = 'researcher'").fetchone()
        record = json.loads(text)
        record["raw"]["claims.json"]["claims"][0]["confidence"] = 7
        record["contribution"]["items"]["claims"][0]["confidence"] = 7
        db.execute("UPDATE records SET record = ? WHERE seq = ?", (json.dumps(record), seq))
    result = cli("validate", str(paths.root))
    assert result.exit_code == 1
    assert "ERROR: artifacts/researcher/claims.json at /claims/0/confidence: 7 at /claims/0/confidence is above " \
           "the maximum 1 [schema.maximum] Fix:" in result.stdout
    assert "needs one confidence between 0 and 1, found 7" in result.stdout  # SHACL, on the whole graph
    assert "violation(s): the graph does not conform" in result.stdout
    data = as_json(cli("validate", str(paths.root), "--json"))
    assert data["conforms"] is False
    rules = {p["rule"] for p in data["problems"] if p["severity"] == "error"}
    assert "schema.maximum" in rules and any(r.startswith("shacl.") for r in rules)


# -- reading commands -------------------------------------------------------------------------------------------
def test_status_json_reports_the_session_agents_locks_and_stats(cli: Any, paths: SessionPaths) -> None:
    good_set(paths)
    bad_set(paths)
    cli("process", str(paths.root))
    good_set(paths, "late")
    info = as_json(cli("status", str(paths.root), "--json"))
    assert info["id"] == paths.root.name and info["session"] == str(paths.root)
    assert info["query"] == "Why is the sky blue?" and info["mission"] == "test-mission"
    assert info["status"] == "created"
    assert info["agents"]["researcher"]["state"] == "merged" and info["agents"]["sloppy"]["state"] == "rejected"
    assert info["locks_pending"] == ["late"] and info["locks_errored"] == ["sloppy"]
    assert info["graph_commit_seq"] == 2
    assert info["stats"]["claims_count"] == 1 and info["stats"]["evidence_verified"] == 1
    text = cli("status", str(paths.root)).stdout
    assert "pending: late; errored: sloppy" in text and "evidence  1/1 verified" in text


def test_sessions_and_latest(cli: Any, sessions_dir: Path) -> None:
    assert "no sessions in" in cli("sessions").stdout
    first = create_session(sessions_dir, "first question")
    second = create_session(sessions_dir, "second question")
    rows = as_json(cli("sessions", "--json"))
    assert [r["id"] for r in rows] == [first.root.name, second.root.name]
    assert rows[1]["query"] == "second question" and rows[1]["path"] == str(second.root)
    assert cli("latest").stdout.strip() == str(second.root)
    assert as_json(cli("latest", "--json")) == {"path": str(second.root), "id": second.root.name}
    text = cli("sessions").stdout
    assert text.index(first.root.name) < text.index(second.root.name)


def test_session_can_be_given_as_path_id_or_latest(cli: Any, paths: SessionPaths) -> None:
    for spec in (str(paths.root), paths.root.name, "latest"):
        result = cli("status", spec, "--json")
        assert result.exit_code == 0, result.output
        assert as_json(result)["id"] == paths.root.name


def test_an_unknown_session_is_a_usage_error_that_says_what_to_do(cli: Any, sessions_dir: Path) -> None:
    result = cli("status", "no-such-session")
    assert result.exit_code == 2
    assert "session 'no-such-session' not found" in result.stderr
    assert "cconductor sessions" in result.stderr
    result = cli("latest")
    assert result.exit_code == 2
    assert 'cconductor run "question"' in result.stderr and "$CCONDUCTOR_SESSIONS_DIR" in result.stderr
    for command in (["process"], ["validate"], ["export"], ["rollback", "--to", "0"], ["retry", "--", "x"]):
        result = cli(*command[:1], "20990101T000000000Z-0000000000", *command[1:])
        assert result.exit_code == 2, (command, result.output)
        assert "not found" in result.stderr and "$CCONDUCTOR_SESSIONS_DIR" in result.stderr
    # where a session may be left out it is the latest one, and no session says where else to look
    for command in (["status"], ["report"], ["export"], ["validate"], ["resume"], ["ask", "--all", "q"]):
        result = cli(*command)
        assert result.exit_code == 2, (command, result.output)
        assert "no sessions in" in result.stderr and "$CCONDUCTOR_SESSIONS_DIR" in result.stderr, command


def test_json_on_every_reading_command_is_valid_json(cli: Any, paths: SessionPaths) -> None:
    good_set(paths)
    bad_set(paths)
    for command in (["process", str(paths.root)], ["status", str(paths.root)], ["validate", str(paths.root)],
                    ["sessions"], ["latest"], ["rollback", str(paths.root), "--list"],
                    ["retry", str(paths.root), "sloppy"], ["rollback", str(paths.root), "--to", "1"]):
        result = cli(*command, "--json")
        assert result.exit_code in (0, 1), (command, result.output)
        json.loads(result.stdout)


# -- rollback ---------------------------------------------------------------------------------------------------
def test_rollback_restores_an_earlier_namespace_and_is_itself_recorded(cli: Any, paths: SessionPaths) -> None:
    good_set(paths, "alpha", "A1")
    assert cli("process", str(paths.root)).exit_code == 0  # ledger 1: alpha v1
    good_set(paths, "beta", "B1")
    assert cli("process", str(paths.root)).exit_code == 0  # ledger 2: beta
    good_set(paths, "alpha", "A2")
    (paths.agent_artifacts("alpha") / "notes.json").write_text(json.dumps({"version": 2}))
    assert cli("process", str(paths.root)).exit_code == 0  # ledger 3: alpha v2
    assert [c["id"] for c in kg(paths)["alpha"]["claims"]] == ["A2"]

    result = cli("rollback", str(paths.root), "--to", "2")
    assert result.exit_code == 0 and "rolled back to ledger entry 2: alpha" in result.stdout
    graph = kg(paths)
    assert [c["id"] for c in graph["alpha"]["claims"]] == ["A1"] and "version" not in graph["alpha"]
    assert [c["id"] for c in graph["beta"]["claims"]] == ["B1"]
    ledger = as_json(cli("rollback", str(paths.root), "--list", "--json"))
    listing = cli("rollback", str(paths.root), "--list").stdout.splitlines()
    assert len(listing) == len(ledger) and "rollback" in listing[-1] and "alpha" in listing[-1]
    missing = cli("rollback", str(paths.root))
    assert missing.exit_code == 2 and "--list" in missing.output
    assert [(e["seq"], e["agent"], e["action"]) for e in ledger][-1] == (4, "alpha", "rollback")

    result = cli("rollback", str(paths.root), "--to", "0", "--json")
    assert as_json(result) == {"to": 0, "changed": {"alpha": None, "beta": None}}
    assert "alpha" not in kg(paths) and kg(paths)["claims"] == []

    result = cli("rollback", str(paths.root), "--to", "3")  # nothing was lost: roll forward again
    assert result.exit_code == 0, result.output
    graph = kg(paths)
    assert [c["id"] for c in graph["alpha"]["claims"]] == ["A2"] and graph["alpha"]["version"] == 2
    assert sorted(c["id"] for c in graph["claims"]) == ["alpha:A2", "beta:B1"]

    good_set(paths, "gamma", "G1")  # and the pipeline still works on top of the restored state
    assert cli("process", str(paths.root)).exit_code == 0
    assert sorted(c["id"] for c in kg(paths)["claims"]) == ["alpha:A2", "beta:B1", "gamma:G1"]

    result = cli("rollback", str(paths.root), "--to", "99")
    assert result.exit_code == 2 and "cannot roll back to 99" in result.stderr  # a usage error (README)


def test_export_formats_parse_as_rdf(cli: Any, paths: SessionPaths, tmp_path: Path) -> None:
    good_set(paths)
    cli("process", str(paths.root))
    claim = "urn:cconductor:agent:researcher"
    for fmt, parse in (("trig", "trig"), ("jsonld", "json-ld"), ("nquads", "nquads")):
        result = cli("export", str(paths.root), "--format", fmt)
        assert result.exit_code == 0, result.output
        dataset = Dataset()
        dataset.parse(data=result.stdout, format=parse)
        assert len(dataset) > 10 or sum(len(g) for g in dataset.graphs()) > 10, fmt
        assert claim in {str(g.identifier) for g in dataset.graphs()}, fmt
    result = cli("export", str(paths.root), "--format", "turtle", "-o", str(tmp_path / "kg.ttl"))
    assert result.exit_code == 0 and result.stdout.strip() == str(tmp_path / "kg.ttl")
    turtle = Graph().parse(tmp_path / "kg.ttl", format="turtle")
    assert len(turtle) > 10
    assert any("researcher" in str(s) for s in turtle.subjects())

    if Path("/proc/version").is_file():  # a write the kernel refuses: the error names the path, no traceback
        result = cli("export", str(paths.root), "-o", "/proc/version")
        assert result.exit_code == 1 and "/proc/version" in result.stderr and "Traceback" not in result.stderr


def test_knowledge_graph_json_conforms_to_its_schema(cli: Any, paths: SessionPaths) -> None:
    good_set(paths)
    cli("process", str(paths.root))
    problems = SchemaRegistry.default().validate_document("knowledge-graph", kg(paths), "knowledge-graph.json")
    assert not problems, [p.render() for p in problems]


def test_the_cli_imports_no_heavy_library_until_a_command_needs_it() -> None:
    code = ("import sys; from orchestrator.cli import main; "
            "print(sorted(m for m in ('anthropic', 'rdflib', 'pyshacl', 'jsonschema', 'watchdog', 'httpx2', "
            "'dask', 'distributed', 'rich') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("argv", [["--help"], ["process", "--help"], ["status", "--help"]])
def test_help_imports_no_heavy_library(argv: list[str]) -> None:
    code = ("import sys; from orchestrator.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('anthropic', 'rdflib', 'pyshacl', 'jsonschema', 'rfc3987_syntax', 'watchdog') "
            "if sys.modules.get(m) is not None))")
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "Usage:" in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "[]"


_PLAIN = """import gc, sys
from importlib.metadata import entry_points
before = (gc.isenabled(), gc.get_threshold())
main = next(iter(entry_points(group="console_scripts", name="cconductor"))).load()
sys.argv = ["cconductor", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    code = exc.code
ours = [f for f in sys.meta_path if type(f).__module__.split(".")[0] in ("orchestrator", "agents")]
print(code, (gc.isenabled(), gc.get_threshold()) == before, gc.get_freeze_count(), len(ours))
"""


@pytest.mark.parametrize("command", ["process", "status"])
def test_the_executable_leaves_the_collector_and_the_import_system_as_python_set_them(
        paths: SessionPaths, command: str) -> None:
    """#24: the console script (the installed entry point) runs the command and nothing else: no
    collector thresholds, no frozen objects, no finder of its own on ``sys.meta_path`` (a library
    it imports may add one: importlib_metadata does)."""
    good_set(paths)
    out = subprocess.run([sys.executable, "-c", _PLAIN, command, str(paths.root)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    if command == "process":
        assert "researcher: merged" in out.stdout
        assert not paths.lock("researcher").exists()
    assert out.stdout.strip().splitlines()[-1] == "0 True 0 0", out.stderr


def test_cli_used_as_a_library_keeps_the_callers_collector(cli: Any, paths: SessionPaths) -> None:
    import gc

    good_set(paths)
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    assert cli("process", str(paths.root)).exit_code == 0
    assert (gc.get_threshold(), gc.get_freeze_count()) == (before, frozen)


def test_python_m_runs_the_same_command(paths: SessionPaths) -> None:
    good_set(paths)
    out = subprocess.run([sys.executable, "-m", "orchestrator.cli", "process", str(paths.root)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "researcher: merged" in out.stdout


def test_a_one_shot_process_merges_and_the_repair_memory_answers_its_sparql_later(paths: SessionPaths) -> None:
    """A rejected then repaired agent, each by a new ``process``; the memory (rdflib SPARQL) lists the repair."""
    write_artifacts(paths, "web", {"sources.json": {"sources": [sample_source("S1", doi="https://doi.org/10.1234/x")]}})
    out = subprocess.run([sys.executable, "-m", "orchestrator.cli", "process", str(paths.root)], capture_output=True,
                         text=True, timeout=120)
    assert "web: rejected" in out.stdout, out.stderr
    paths.lock_error("web").unlink()
    write_artifacts(paths, "web", {"sources.json": {"sources": [sample_source("S1", doi="10.1234/x")]}})
    out = subprocess.run([sys.executable, "-m", "orchestrator.cli", "process", str(paths.root)], capture_output=True,
                         text=True, timeout=120)
    assert "web: merged" in out.stdout, out.stderr
    listed = subprocess.run([sys.executable, "-m", "orchestrator.cli", "memory", "list", "--json"],
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert [item["repair"] for item in json.loads(listed.stdout)["items"]] == ["sources[].doi: prefix removed"]


def test_status_of_a_session_imports_no_heavy_library(paths: SessionPaths) -> None:
    code = ("import sys; from orchestrator.cli import main\n"
            "try:\n    main(['status', sys.argv[1]])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('anthropic', 'rdflib', 'pyshacl', 'jsonschema', 'rfc3987_syntax') "
            "if sys.modules.get(m) is not None))")
    out = subprocess.run([sys.executable, "-c", code, str(paths.root)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"

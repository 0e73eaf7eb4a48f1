"""`validate` (and `status`) never trust a view the ledger does not vouch for; values in messages are quoted
with their escapes visible.

A hand edit of knowledge-graph.json or knowledge-graph.trig ("Lisbon is the capital of Spain") is rebuilt
from the ledger by `validate`, as `ask`, `report` and `status` do, and reported as a warning naming the
file; where it cannot be rebuilt `validate` reports an error that says what to run. A reader of the JSON
view alone (`status`) does not leave an edited TriG file in place either.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from orchestrator.cli import main
from orchestrator.commit import committed
from orchestrator.commit.inspection import session_status, validate_session
from orchestrator.commit.processor import Processor
from orchestrator.commit.views import flush_views
from orchestrator.model.layout import SessionPaths
from orchestrator.model.problems import quoted
from tests.helpers.agent_writer import write_agent

LIE = "Lisbon is the capital of Spain."


@pytest.fixture
def merged(session: SessionPaths) -> SessionPaths:
    write_agent(session.root, "ga", claims=2)
    processor = Processor(session)
    try:
        assert [o.status for o in processor.process_pending()] == ["merged"]
        flush_views(processor)
    finally:
        processor.close()
    return session


def tamper(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert "Fact 1 about ga is true." in text
    path.write_text(text.replace("Fact 1 about ga is true.", LIE), encoding="utf-8")


@pytest.mark.parametrize("view", ["kg_json", "kg_trig"])
def test_validate_rebuilds_an_edited_view_and_says_so(merged: SessionPaths, view: str) -> None:
    path: Path = getattr(merged, view)
    tamper(path)
    problems = validate_session(merged)
    rebuilt = [p for p in problems if p.rule == "view.rebuilt"]
    assert len(rebuilt) == 1 and rebuilt[0].file == path.name and not rebuilt[0].is_error
    assert "changed outside cconductor" in rebuilt[0].message
    assert LIE not in path.read_text(encoding="utf-8"), "the edit was left in place"
    assert not [p for p in validate_session(merged) if p.rule.startswith("view.")], "rebuilt once, then trusted"


def test_validate_on_the_command_line_names_the_edited_view(merged: SessionPaths) -> None:
    tamper(merged.kg_trig)
    result = CliRunner().invoke(main, ["validate", str(merged.root)])
    assert result.exit_code == 0, result.output
    assert "WARNING: knowledge-graph.trig" in result.output and "rebuilt from the ledger" in result.output
    assert LIE not in merged.kg_trig.read_text(encoding="utf-8")


def test_validate_refuses_a_view_it_cannot_rebuild(merged: SessionPaths, monkeypatch: pytest.MonkeyPatch) -> None:
    def read_only(*args: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(committed, "_rebuild", read_only)
    tamper(merged.kg_json)
    problems = validate_session(merged)
    untrusted = [p for p in problems if p.rule == "view.untrusted"]
    assert untrusted and untrusted[0].is_error and "cconductor process" in untrusted[0].hint
    result = CliRunner().invoke(main, ["validate", str(merged.root)])
    assert result.exit_code == 1 and "conforms" not in result.output.splitlines()[-1]


def test_status_does_not_leave_an_edited_trig_view(merged: SessionPaths) -> None:
    tamper(merged.kg_trig)
    session_status(merged)
    assert LIE not in merged.kg_trig.read_text(encoding="utf-8")
    before = merged.kg_trig.stat().st_mtime_ns
    session_status(merged)  # an intact view is trusted by its file key: not rewritten
    assert merged.kg_trig.stat().st_mtime_ns == before


@pytest.mark.parametrize(("value", "shown"), [("10.1000/xyz\n", r"'10.1000/xyz\n'"), ("a\tb", r"'a\tb'"),
                                              ("zero\u200bwidth", r"'zero\u200bwidth'")])
def test_quoted_values_show_their_escapes(value: str, shown: str) -> None:
    assert quoted(value) == shown


def test_a_doi_with_a_trailing_newline_is_rejected_with_the_newline_shown(session: SessionPaths) -> None:
    write_agent(session.root, "dd", claims=1)
    sources_file = session.agent_artifacts("dd") / "sources.json"
    data = json.loads(sources_file.read_text())
    data["sources"][0]["doi"] = "10.1000/xyz\n"
    sources_file.write_text(json.dumps(data))
    processor = Processor(session)
    try:
        [outcome] = processor.process_pending()
    finally:
        processor.close()
    assert outcome.status == "rejected"
    messages = [p.message for p in outcome.problems if "DOI" in p.message]
    assert messages and all(r"'10.1000/xyz\n'" in m for m in messages), messages


def test_a_field_name_with_a_newline_is_shown_escaped(session: SessionPaths) -> None:
    write_agent(session.root, "kk", claims=1)
    claims_file = session.agent_artifacts("kk") / "claims.json"
    data = json.loads(claims_file.read_text())
    data["claims"][0]["bad\nkey"] = 1
    claims_file.write_text(json.dumps(data))
    processor = Processor(session)
    try:
        [outcome] = processor.process_pending()
    finally:
        processor.close()
    assert outcome.status == "rejected"
    assert any(r"'bad\nkey'" in p.message for p in outcome.problems), [p.message for p in outcome.problems]

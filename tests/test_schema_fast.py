"""The compiled fast check (jsonschema-rs) never lets through what jsonschema rejects.

A document the fast check calls valid skips jsonschema, so for every document the registry must
give exactly jsonschema's problems. Documents: valid instances of each artifact schema (generated
from the schema itself), then mutated at one place (a value replaced by any JSON value, including
strings that stretch our formats and patterns, a key dropped or added).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from orchestrator.contract.schema_messages import problems_for
from orchestrator.contract.schemas import ARTIFACT_SCHEMAS, SchemaRegistry
from orchestrator.model.layout import resource_dir

pytestmark = pytest.mark.slow  # a stress or long end-to-end case: `pytest -m slow` (CI runs it)

#: Documents per schema; CCONDUCTOR_SCHEMA_EXAMPLES=300 makes a longer soak.
EXAMPLES = int(os.environ.get("CCONDUCTOR_SCHEMA_EXAMPLES", "20"))
REGISTRY = SchemaRegistry.default()
SCHEMAS = {p.name.removesuffix(".schema.json"): json.loads(p.read_text(encoding="utf-8"))
           for p in resource_dir("schemas").glob("*.schema.json")}
_RS_REGISTRY = jsonschema_rs.Registry([(s["$id"], s) for s in SCHEMAS.values()])

#: Strings near the edges of our formats (uri, date, date-time) and id patterns.
TRICKY = st.sampled_from([
    "", " ", "a", "A1", "a-b", "a:b", "x:S1", "-a", "a\n", "S1\n", "é", "1" * 129, "a" * 64, "a" * 65,
    "https://example.org/x", "https://exa mple.org", "http://[::1]/", "urn:x", "/relative", "mailto:a@b",
    "https://x.org/a%2", "https://x.org/#a#b", "2024-02-29", "2023-02-29", "2024-13-01", "2024-1-01",
    "2024-01-31T10:00:00Z", "2024-01-31T24:00:00Z", "2024-01-31t10:00:60+01:00", "2024-01-31T10:00:00",
    "2024-01-31T10:00:00.5+23:59", "2024-01-31T10:00:00+24:00", "0" * 64, "f" * 63, "F" * 64,
    "high", "medium", "low", "journal-article", "supports", "open", "resolved",
])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=-(2**70), max_value=2**70),
                    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([0, 1, -1, 0.0, 1.0, 1.5]),
                    st.text(max_size=20), TRICKY)
JSON = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                     st.dictionaries(st.one_of(TRICKY, st.text(max_size=8)),
                                                                     inner, max_size=3)), max_leaves=8)


def _dereferenced(name: str) -> dict[str, Any]:
    schema = jsonschema_rs.dereference(SCHEMAS[name], registry=_RS_REGISTRY, offline=True)
    return {k: v for k, v in schema.items() if k not in ("$id", "$schema")}


def _slow_problems(name: str, data: Any) -> list[Any]:
    """What jsonschema alone says, as the registry words it."""
    return problems_for(REGISTRY._slow_validator(name).iter_errors(data), "f", REGISTRY._resolve)


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, child in value.items():
            found += _places(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _places(child, (*path, index))
    return found


def _mutate(document: Any, data: st.DataObject) -> Any:
    document = json.loads(json.dumps(document))
    path = data.draw(st.sampled_from(_places(document)))
    action = data.draw(st.sampled_from(["replace", "drop", "add"]))
    if not path:
        return data.draw(JSON) if action == "replace" else document
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if action == "replace":
        parent[last] = data.draw(JSON)
    elif action == "drop":
        del parent[last]
    elif isinstance(parent[last], dict):
        parent[last][data.draw(st.one_of(TRICKY, st.text(max_size=8)))] = data.draw(JSON)
    elif isinstance(parent[last], list):
        parent[last].append(data.draw(JSON))
    return document


@pytest.mark.parametrize("name", sorted(ARTIFACT_SCHEMAS))
def test_the_registry_gives_jsonschemas_verdict_on_mutated_documents(name: str) -> None:
    strategy = from_schema(_dereferenced(name))

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
    @given(strategy, st.data())
    def check(valid: Any, data: st.DataObject) -> None:
        assert REGISTRY.validate_artifact(f"{name}.json", valid, "f") == []
        document = _mutate(valid, data)
        assert REGISTRY.validate_artifact(f"{name}.json", document, "f") == _slow_problems(name, document)

    check()


@pytest.mark.parametrize("value", ["S1\n", "\ud800", 2**64 + 1, 1.0, True])
def test_values_the_fast_check_treats_differently_still_get_jsonschemas_verdict(value: Any) -> None:
    document = {"sources": [{"id": value, "type": "web-page", "title": "t", "url": "https://x.org/a"}]}
    assert REGISTRY.validate_artifact("sources.json", document, "f") == _slow_problems("sources", document)


def test_a_valid_document_is_checked_without_importing_jsonschema() -> None:
    script = (
        "import sys\n"
        "from orchestrator.contract.schemas import SchemaRegistry\n"
        "r = SchemaRegistry.default()\n"
        "assert r.validate_artifact('claims.json', {'claims': []}, 'f') == []\n"
        "assert 'jsonschema' not in sys.modules, 'imported for a valid document'\n"
        "assert r.validate_artifact('claims.json', {'claims': 1}, 'f')[0].rule == 'schema.type'\n"
        "assert 'jsonschema' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)

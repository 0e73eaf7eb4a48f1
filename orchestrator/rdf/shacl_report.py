"""A SHACL validation report turned into Problems that name the artifact file and JSON pointer.

Every violation is mapped back through the node's origin (file, pointer, preview) so the retry
instructions say what to change in which file, in the agent's own terms.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF
from rdflib.term import Node

from orchestrator.model.problems import Problem, pointer_join, quoted
from orchestrator.rdf.convert import Origin
from orchestrator.rdf.shacl import EVIDENCE_BINDING_SHAPE, SEVERITY, SH, shapes
from orchestrator.rdf.vocabulary import field_path, parse_node_iri


def _clip(text: Any, limit: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _show(value: Node | None) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, Literal):
        if value.datatype is None and value.language is None:
            return quoted(value)  # escapes shown: "'10.1000/xyz\\n'", not a DOI that looks fine
        return _clip(value, 80) if str(value).isprintable() else quoted(value)
    parsed = parse_node_iri(str(value))
    return f"'{parsed[1]}'" if parsed else f"<{value}>"


def _local(iri: Node | None) -> str:
    text = str(iri or "")
    return text.rsplit("#", 1)[-1].rsplit("/", 1)[-1]


def _pointer(origin: Origin, path: Node | None, value: Node | None) -> str:
    """The origin's pointer, narrowed to the field (and list element) the result is about."""
    fpath = field_path(origin.kind, path) if isinstance(path, URIRef) else None
    if fpath is None:
        return origin.pointer
    current: Any = origin.item
    for key in fpath:
        current = current.get(key) if isinstance(current, Mapping) else None
    if current is None:
        return origin.pointer
    pointer = origin.pointer + pointer_join(*fpath)
    if isinstance(current, list) and value is not None:
        parsed = parse_node_iri(str(value)) if isinstance(value, URIRef) else None
        for i, element in enumerate(current):
            if (parsed and element in (parsed[1], parsed[1].partition(":")[2])) or (
                    not parsed and str(element) == str(value)):
                return pointer + pointer_join(i)
    return pointer


def _evidence_binding(origin: Origin) -> tuple[str, str]:
    """Say why a high-priority claim is unbound, quoting its snippets and the closest passages."""
    evidence = origin.item.get("evidence")
    parts = []
    cut = governed = False
    for n, ev in enumerate(evidence if isinstance(evidence, list) else []):
        if not isinstance(ev, Mapping):
            continue
        head = f"evidence {n} quotes \"{_clip(ev.get('snippet', ''))}\" from source '{ev.get('source_id')}'"
        ver = ev.get("verification")
        if not isinstance(ver, Mapping):
            parts.append(head + ", which could not be checked because that source has no stored text")
        elif ver.get("verified") is True:
            parts.append(head + ", which was verified")
        else:
            page = f", page {ver['page']}" if ver.get("page") is not None else ""
            closest = ver.get("matched_text")
            if ver.get("cut_short"):
                cut = True
                parts.append(head + ", but its search was cut short before it was found (this submission's evidence "
                             "checks reached their work limit, so not every page or similar passage was searched)"
                             + (f"; the closest passage searched is \"{_clip(closest)}\" (match score "
                                f"{ver.get('score')}{page})" if closest else ""))
                continue
            if ver.get("match") and str(ver.get("reason", "")).startswith("found on the cited page"):
                governed = True  # found, but in a sentence that negates, asks or only reports it
                parts.append(f"{head}: {ver.get('reason')}")
                continue
            parts.append(head + (f", but the closest passage in that source is \"{_clip(closest)}\" "
                                 f"(match score {ver.get('score')}{page})" if closest else
                                 ", but no similar passage was found in that source"))
    found = "; ".join(parts) if parts else "it has no evidence at all"
    message = (f"High-priority claim '{origin.id}' has no evidence verified against a stored source text: "
               f"{found}")
    hint = ("quote the source verbatim: copy the exact passage from the source text into 'snippet' of at "
            "least one evidence item of this claim in claims.json, citing in 'source_id' a source whose "
            "text is stored (it has 'content_sha256'); or lower the claim's 'priority' to medium")
    if governed:
        hint = ("quote the clause with the words that govern it (the negation, question, condition or attribution "
                "the message names) and state the claim as the source does, in claims.json; or drop the claim")
    if cut:
        hint += ("; and cite fewer or shorter passages per submission, each with its page (locator.page), so that "
                 "every one can be searched")
    return message, hint


def problems_from_report(report: Graph, origins: Mapping[URIRef, Origin]) -> list[Problem]:
    """Turn a pyshacl report graph into Problems located in the agents' artifact files."""
    templates = shapes().templates
    merged: dict[tuple[str, str, str, str], tuple[list[str], dict[str, Any]]] = {}
    for result in report.subjects(RDF.type, SH.ValidationResult):
        focus = report.value(result, SH.focusNode)
        path = report.value(result, SH.resultPath)
        value = report.value(result, SH.value)
        shape = report.value(result, SH.sourceShape) or SH.Shape
        component = _local(report.value(result, SH.sourceConstraintComponent))
        severity = SEVERITY.get(report.value(result, SH.resultSeverity) or SH.Violation, "error")
        origin = origins.get(focus) if isinstance(focus, URIRef) else None
        parsed = parse_node_iri(str(focus))
        this = origin.id if origin else (parsed[1] if parsed else str(focus))
        if shape == EVIDENCE_BINDING_SHAPE and origin is not None:
            message, hint = _evidence_binding(origin)
        else:
            what, how = templates.get(shape, ("{$this} violates " + _local(shape), ""))
            fpath = field_path(origin.kind, path) if origin and isinstance(path, URIRef) else None
            fill = {"{$this}": f"'{this}'", "{?value}": _show(value),
                    "{$path}": ".".join(fpath) if fpath else _local(path)}
            for key, text in fill.items():
                what, how = what.replace(key, text), how.replace(key, text)
            message, hint = what, how or "see the rule " + _local(shape)
        dedup = (str(focus), str(shape), str(value), severity)
        if dedup in merged:
            merged[dedup][0].append(component)
            continue
        merged[dedup] = ([component], {
            "file": origin.file if origin else None,
            "pointer": _pointer(origin, path, value) if origin else "",
            "message": message, "hint": hint, "severity": severity,
            "details": {"focus_node": str(focus), "path": str(path) if path is not None else None,
                        "value": str(value) if value is not None else None, "shape": str(shape),
                        "preview": origin.preview if origin else "",
                        "agent": origin.agent if origin else None},
        })
    problems = []
    for components, fields in merged.values():
        components.sort()
        details = dict(fields.pop("details"))
        details["components"] = components
        problems.append(Problem(rule=f"shacl.{components[0]}", details=details, **fields))
    problems.sort(key=lambda p: (p.file or "", p.pointer, p.rule, p.message))
    return problems

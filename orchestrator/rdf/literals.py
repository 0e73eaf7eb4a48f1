"""JSON values as RDF literals, one rule per field conversion of the field table (rdf/vocabulary.py).

Conversion never raises on bad values: a wrongly typed value becomes a literal that keeps its JSON
type, so it fails the shape's sh:datatype and the agent hears about it in its own terms.
"""

from __future__ import annotations

import json
import math
import re
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from rdflib import Literal
from rdflib.namespace import RDF, XSD

from orchestrator.rdf.vocabulary import BOOL, DEC, INT, STR

__all__ = ["literal"]


def _bad(value: Any) -> Literal:
    """A literal for a wrongly typed value: keeps its JSON type so sh:datatype reports it."""
    if isinstance(value, bool | int | str) or (isinstance(value, float) and math.isfinite(value)):
        return Literal(value)
    return Literal(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str))


_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATETIME_RE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?")


#: Literals of short, often repeated values (priorities, years, pages, flags, scores), by conversion
#: and value: building a Literal is ~3 us, about half of converting an agent. Literals are immutable.
_LITERALS: dict[tuple[str, type, Any], Literal] = {}
_LITERALS_MAX = 20_000


def literal(conv: str, value: Any) -> Literal:
    """The literal of ``value`` under conversion ``conv`` (str int dec bool uri date datetime json)."""
    if value.__class__ not in (str, int, float, bool) or (value.__class__ is str and len(value) > 40):
        return _make_literal(conv, value)
    key = (conv, value.__class__, repr(value) if value.__class__ is float else value)  # -0.0 == 0.0, nan != nan
    found = _LITERALS.get(key)
    if found is None:
        if len(_LITERALS) >= _LITERALS_MAX:
            _LITERALS.clear()
        found = _LITERALS[key] = _make_literal(conv, value)
    return found


def _make_literal(conv: str, value: Any) -> Literal:
    if conv == STR:
        return Literal(value) if isinstance(value, str) else _bad(value)
    if conv == INT:
        return Literal(value) if isinstance(value, int) and not isinstance(value, bool) else _bad(value)
    if conv == DEC:
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            return Literal(format(Decimal(repr(value)), "f"), datatype=XSD.decimal)
        return _bad(value)
    if conv == BOOL:
        return Literal(value) if isinstance(value, bool) else _bad(value)
    if conv == "uri" and isinstance(value, str):
        return Literal(value, datatype=XSD.anyURI)
    if conv in ("date", "datetime") and isinstance(value, str):
        # An ill-formed date stays a plain string, which fails sh:datatype (and rdflib stays quiet).
        is_date = conv == "date"
        try:
            if not (_DATE_RE if is_date else _DATETIME_RE).fullmatch(value):
                return Literal(value)
            (date.fromisoformat if is_date else datetime.fromisoformat)(value)
        except ValueError:
            return Literal(value)
        return Literal(value, datatype=XSD.date if conv == "date" else XSD.dateTime)
    if conv == "json":
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        return Literal(text, datatype=RDF.JSON)
    return _bad(value)

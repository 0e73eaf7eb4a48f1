"""The answer as JSON text, for models that refuse a forced tool call.

Current models answer a forced ``tool_choice`` with HTTP 400; they are asked instead for the output
tool's input as JSON text under structured outputs (``output_config.format``). This module holds
that path's three pieces: the schema in the subset structured outputs accept, the answer read back
in the shape of an output tool call (so it is validated the same way), and the re-ask text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from agents.claude.output_spec import OutputSpec

__all__ = ["json_answer", "json_problems_text", "json_schema"]


def json_schema(spec: OutputSpec) -> dict[str, Any]:
    """The output tool's schema in the subset structured outputs accept (constraints become descriptions;
    our own validation still checks them all)."""
    from anthropic import transform_schema

    return transform_schema(spec.input_schema())


def json_answer(blocks: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """A structured-output answer: the JSON text of the message, shaped like an output tool call."""
    text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text").strip()
    if not text:
        return None
    try:
        data: Any = json.loads(text)
    except ValueError:
        data = text  # not JSON: validation reports it and the answer is asked for again
    return {"id": None, "input": data}


def json_problems_text(problems: Sequence[str]) -> str:
    """The re-ask after a JSON answer failed validation: every problem, numbered."""
    listed = "\n".join(f"{n}. {p}" for n, p in enumerate(problems, 1))
    return (f"Your JSON answer was not accepted. {len(problems)} problem(s):\n{listed}\nAnswer again with "
            "the complete, corrected JSON. Fix exactly these problems and keep everything else as it was.")

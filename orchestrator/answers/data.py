"""The records passed between retrieval, the answering backends and the validator."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from orchestrator.model.errors import CconductorError

NodeKind = Literal["claim", "entity", "relationship"]


@dataclass(frozen=True)
class VerifiedPassage:
    """A verified evidence passage: the source's own words, where they are."""

    source_id: str
    title: str
    page: int | None
    text: str
    section: str | None = None  # the heading cited instead of a page, in a document without pages


@dataclass(frozen=True)
class ContextItem:
    """One retrieved graph node, as a backend may cite it (``[@id]``)."""

    id: str
    kind: NodeKind
    text: str  # claim statement, entity name, or "subject predicate object"
    score: float
    passages: tuple[VerifiedPassage, ...] = ()


@dataclass(frozen=True)
class Retrieved:
    """What the graph holds about a question; empty ``items`` means "not found in this session"."""

    question: str
    items: tuple[ContextItem, ...]
    timings_ms: dict[str, float] = field(default_factory=dict)
    store: str = ""

    @property
    def found(self) -> bool:
        return bool(self.items)


@dataclass(frozen=True)
class Draft:
    """A backend's answer before validation: prose with ``[@node-id]`` markers."""

    text: str
    backend: str
    model: str | None = None
    cost_usd: float = 0.0


class Composer(Protocol):
    """An answering backend: writes a draft from the retrieved context only."""

    name: str

    def compose(self, retrieved: Retrieved) -> Draft: ...


@dataclass(frozen=True)
class Step:
    """One hop of an inferred relation and the graph node it rests on."""

    source: str
    relation: str
    target: str
    rests_on: str

    def to_dict(self) -> dict[str, Any]:
        return {"from": self.source, "relation": self.relation, "to": self.target, "rests_on": self.rests_on}


@dataclass(frozen=True)
class Part:
    """One checked aspect of a citation (evidence, support, mention, relation) and its confidence."""

    check: str
    confidence: float
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "confidence": round(self.confidence, 3), "detail": self.detail}


class AnswerError(CconductorError):
    """The answering backend could not write an answer (the message says why and what to do)."""

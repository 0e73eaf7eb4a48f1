"""What the judging-equivalence tests record of a run: the ledger, and the agents adopted as helpers judged them."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from orchestrator.commit import evaluation
from orchestrator.model.layout import SessionPaths
from orchestrator.session.ledger import Store


def ledger_bytes(paths: SessionPaths) -> bytes:
    store = Store(paths.store_db)
    try:
        return orjson.dumps(store.ledger(), default=str)
    finally:
        store.close()


def count_adoptions(patch: pytest.MonkeyPatch) -> list[str]:
    """The agents whose helper judging the processor adopts from now on (evaluation.Evaluation.adopt)."""
    adopted: list[str] = []
    adopt = evaluation.Evaluation.adopt

    def counting(self: evaluation.Evaluation, name: str, *args: Any) -> Any:
        found = adopt(self, name, *args)
        if found is not None:
            adopted.append(name)
        return found

    patch.setattr(evaluation.Evaluation, "adopt", counting)
    return adopted

"""One parsed artifact file, as the contract hands it to the merge."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class InputFile:
    """One parsed artifact file: name in the folder, path relative to the session, sha256."""

    name: str
    rel: str
    sha256: str
    data: dict[str, Any]

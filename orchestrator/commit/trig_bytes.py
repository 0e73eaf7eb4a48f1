"""``knowledge-graph.trig`` as bytes joined from blocks encoded once (the text join and encode of a
50 MB document cost ~45 ms per flush). Exactly ``trig_document(...).encode()``."""

from __future__ import annotations

from collections.abc import Sequence

from orchestrator.rdf.write import trig_document

__all__ = ["EncodedBlocks"]


class EncodedBlocks:
    """One per processor: each block's UTF-8 bytes, kept while the block is the same string object."""

    def __init__(self) -> None:
        self._memory: dict[str, tuple[str, bytes]] = {}

    def document(self, session_id: str, blocks: Sequence[tuple[str, str]]) -> bytes:
        """``trig_document(session_id, [block for _, block in sorted(blocks)]).encode()``."""
        return b"".join(self.pieces(session_id, blocks))

    def pieces(self, session_id: str, blocks: Sequence[tuple[str, str]]) -> list[bytes]:
        """The same bytes in pieces, to be written one after the other."""
        ordered = sorted(blocks)
        lead = trig_document(session_id, [])  # prefixes and the session's default graph, then "\n"
        if not lead.endswith("\n") or trig_document(session_id, ["x"]) != lead[:-1] + "\n\nx\n":
            return [trig_document(session_id, [b for _, b in ordered]).encode()]  # another layout: whole
        pieces = [lead[:-1].encode()]
        memory: dict[str, tuple[str, bytes]] = {}
        for name, block in ordered:
            if not block:
                continue
            cached = self._memory.get(name)
            encoded = cached[1] if cached is not None and cached[0] is block else block.encode()
            memory[name] = (block, encoded)
            pieces += (b"\n\n", encoded)
        self._memory = memory
        pieces.append(b"\n")
        return pieces

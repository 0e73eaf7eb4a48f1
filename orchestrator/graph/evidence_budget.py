"""How much work the evidence checks of one submission may do: counted, never timed.

A wall-clock budget made a verdict depend on the machine's load (the same submission merged on an
idle core and was rejected on a busy one). Counting the characters compared instead makes it depend
on the submission and its texts only, in whatever process judges it.
"""

from __future__ import annotations

__all__ = ["CUT_SHORT", "DEFAULT_BUDGET", "NORMALIZE_COST", "Budget", "alignment_cost"]

#: The work the evidence checks of one submission may do, in units of :class:`Budget` (~3 s of one core).
DEFAULT_BUDGET = 3_000_000_000
#: Units of :class:`Budget` per character put in normal form (measured: ~150-280 ns a character).
NORMALIZE_COST = 200
#: What a verification says when the budget stopped part of its search.
CUT_SHORT = ("the search was cut short: this submission's evidence checks reached their work limit, so not every "
             "page or similar passage was searched; cite fewer or shorter passages per submission, and give each "
             "one's page")


class Budget:
    """The work the evidence checks of one submission may do: counted, never timed.

    Each step is charged before it runs, by what it compares, in units of about a nanosecond of one
    core (calibrated on the project machine; the count decides, not the machine):

    - putting a page in normal form: :data:`NORMALIZE_COST` a character, once per page per submission
      (charged even when an earlier submission left the page normalised in memory: what one submission
      is charged never depends on another);
    - an exact search of a page: one a character;
    - an approximate search and the closest-passage search: :func:`alignment_cost` (rapidfuzz aligns
      64 characters of the snippet at a time, plus a part that grows with the snippet's square).

    An approximate or closest-passage search that would take the total past :attr:`limit` is not made,
    nor an exact search past twice the limit: the verification then says its search was cut short
    (``cut_short``), never that nothing similar exists.
    """

    def __init__(self, limit: int | None = None) -> None:
        self.limit = DEFAULT_BUDGET if limit is None else limit
        self.spent = 0
        self._normal: set[tuple[int, int, int]] = set()

    def take(self, cost: int, *, exact: bool = False) -> bool:
        """Charge ``cost`` if it fits (an exact search: within twice the limit); False when it does not."""
        if self.spent + cost > (2 if exact else 1) * self.limit:
            return False
        self.spent += cost
        return True

    def take_page(self, text_key: tuple[int, int], number: int, chars: int) -> bool:
        """Charge reading page ``number`` of a text in normal form and searching it exactly."""
        page = (*text_key, number)
        normal = 0 if page in self._normal else NORMALIZE_COST * chars
        if not self.take(normal + chars, exact=True):
            return False
        self._normal.add(page)
        return True

    def exhausted(self) -> bool:
        return self.spent >= 2 * self.limit


def alignment_cost(page_chars: int, needle_chars: int, *, per_block: int = 4) -> int:
    """Units of :class:`Budget` an alignment of a needle over a page costs (the closest passage: ``per_block=16``,
    it computes every window's score)."""
    return per_block * page_chars * (1 + needle_chars // 64) + 16 * needle_chars * needle_chars

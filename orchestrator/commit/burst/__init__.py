"""Judging a burst of locks faster, with the verdicts of judging them one by one.

The one seam between the processor and the speed machinery: :func:`judge_burst` takes the locks of
a sweep (in order) and returns what :func:`orchestrator.commit.judging.judge` returns for each, one
after the other. The processor calls it only for a sweep of :data:`BURST_MIN` locks or more; a real
run launches a few agents at a time, so its sweeps take the plain path.
"""

from orchestrator.commit.burst.windows import judge_burst

__all__ = ["BURST_MIN", "judge_burst"]

#: Sweeps of at least this many locks are judged as a burst (one SHACL pass per window of agents).
BURST_MIN = 16

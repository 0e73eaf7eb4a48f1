"""Judging a burst of locks faster, with the verdicts of judging them one by one.

The one seam between the processor and the speed machinery: :func:`judge_burst` takes the locks of
a sweep (in order) and returns what :func:`orchestrator.commit.judging.judge` returns for each, one
after the other. The processor calls it for a sweep of :data:`BURST_MIN` locks or more: one SHACL
pass for several agents costs less CPU per agent from two agents on (measured: a sweep of 2 or 4
locks, 11-13 ms per agent against 14-20 one by one, on the loaded 2-core machine). A run launches a
few agents at a time and judges each as it finishes, so its sweeps are of one lock and take the
plain path; ``watch`` under a stream of locks and a burst take this one.
"""

from orchestrator.commit.burst.windows import judge_burst

__all__ = ["BURST_MIN", "judge_burst"]

#: Sweeps of at least this many locks are judged as a burst (one SHACL pass per window of agents).
BURST_MIN = 2

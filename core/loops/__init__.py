"""Readers and rules of the other iteration loops (loop-spec, ARIS/Mechanist, bkit PDCA, DAG).

``discover_loops(path)`` finds every loop state under a path (samsara features included) and
returns one :class:`LoopState` each, waiting ones first. One module per loop:
``loopspec``, ``review`` (ARIS + Mechanist), ``bkit``, ``dag``, ``samsara``; shared pieces in
``base``.
"""

from scars.core.loops.base import Budget, LoopState, StopRule, TrendPoint
from scars.core.loops.discover import discover_loops

__all__ = ["Budget", "LoopState", "StopRule", "TrendPoint", "discover_loops"]

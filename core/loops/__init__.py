"""Readers and rules of the iteration loops (loop-spec, ARIS/Mechanist, bkit PDCA, DAG, samsara).

``discover_loops(path)`` finds every loop state under a path (samsara features included) and
returns one :class:`LoopState` each, waiting ones first. One module per loop:
``loopspec``, ``review`` (ARIS + Mechanist), ``bkit``, ``dag``, ``samsara``; shared pieces in
``base``. The public face is ``__all__`` below, imported on first use (PEP 562).
"""

from __future__ import annotations

from scars.core.lazy import public_face

# public name -> module that defines it
_PUBLIC: dict[str, str | tuple[str, str]] = {
    "Budget": "scars.core.loops.base",
    "LoopState": "scars.core.loops.base",
    "StopRule": "scars.core.loops.base",
    "TrendPoint": "scars.core.loops.base",
    "discover_loops": "scars.core.loops.discover",
    # one samsara feature's state (what `scars triage` without a directory picks from)
    "samsara_feature_state": ("scars.core.loops.samsara.reader", "read_samsara_feature"),
}

__all__ = sorted(_PUBLIC)


__getattr__, __dir__ = public_face(__name__, globals(), _PUBLIC)

"""Readers and rules of the iteration loops (loop-spec, ARIS/Mechanist, bkit PDCA, DAG, samsara).

``discover_loops(path)`` finds every loop state under a path (samsara features included) and
returns one :class:`LoopState` each, waiting ones first. One module per loop:
``loopspec``, ``review`` (ARIS + Mechanist), ``bkit``, ``dag``, ``samsara``; shared pieces in
``base``. The public face is ``__all__`` below, imported on first use (PEP 562).
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> module that defines it
_PUBLIC = {
    "Budget": "scars.core.loops.base",
    "LoopState": "scars.core.loops.base",
    "StopRule": "scars.core.loops.base",
    "TrendPoint": "scars.core.loops.base",
    "discover_loops": "scars.core.loops.discover",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

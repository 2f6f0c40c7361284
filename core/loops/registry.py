"""THE list of loop systems: a new loop is one folder (``core/loops/<name>/``, its reader, rules
and gates, and a ``system.py`` whose ``SYSTEM`` is a :class:`~scars.core.loops.system.LoopSystem`)
and one line in :data:`REGISTRY`.

A system is imported when it is first asked for: answering a samsara gate loads samsara's folder
and no other loop's (``loop_system``); listing loops (``systems``) loads them all, in this order
(the order ``scars loops`` lists kinds in when no one is waiting).
"""

from __future__ import annotations

import importlib
from typing import Any

from scars.core.loops.system import LoopKind, LoopSystem

# gate loop (a catalog Gate's ``loop``) -> the module whose ``SYSTEM`` it is. Listing order.
REGISTRY: dict[str, str] = {
    "samsara": "scars.core.loops.samsara.system",
    "loop-spec": "scars.core.loops.loopspec.system",
    "aris": "scars.core.loops.review.system",
    "bkit": "scars.core.loops.bkit.system",
    "dag": "scars.core.loops.dag.system",
}


def loop_system(loop: str) -> LoopSystem:
    """The system whose gates name ``loop`` (only its own folder is imported)."""
    module = REGISTRY.get(loop)
    if module is None:
        raise KeyError(f"no loop system {loop!r} is registered (scars.core.loops.registry.REGISTRY)")
    system: LoopSystem = importlib.import_module(module).SYSTEM
    return system


def systems() -> list[LoopSystem]:
    """Every registered system, in the registry's order."""
    return [loop_system(loop) for loop in REGISTRY]


def kinds() -> list[LoopKind]:
    """Every kind of loop state, in listing order."""
    return [k for s in systems() for k in s.kinds]


def kind_order() -> tuple[str, ...]:
    return tuple(k.kind for k in kinds())


def kind_label(kind: str) -> str:
    """The label ``scars loops`` shows for ``kind`` (the kind itself when none is registered)."""
    return next((k.label for k in kinds() if k.kind == kind), kind)


def system_of_kind(kind: Any) -> LoopSystem | None:
    """The system that reads states of ``kind``; None for a kind no system reads."""
    return next((s for s in systems() if any(k.kind == kind for k in s.kinds)), None)


def root_markers() -> tuple[str, ...]:
    """The directories that mark a loop's root (where its gate requests go), every system's."""
    out: list[str] = []
    for s in systems():
        out.extend(m for m in s.root_markers if m not in out)
    return tuple(out)


def lineage(loop: str) -> tuple[str, ...]:
    """The loops a gate of ``loop`` may name in its evidence besides its own (a review gate serves
    ARIS and Mechanist); none for a loop no system is registered for."""
    return loop_system(loop).lineage if loop in REGISTRY else ()

"""THE list of loop systems: a new loop is one folder (``core/loops/<name>/``, its reader, rules
and gates, a ``catalog.py`` whose ``POINTS`` are its gates as data, and a ``system.py`` whose
``SYSTEM`` is a :class:`~scars.core.loops.system.LoopSystem`) and one line in :data:`REGISTRY`.

A system is imported when it is first asked for: answering a samsara gate loads samsara's folder
and no other loop's (``loop_system``); listing loops (``systems``) loads them all, in this order
(the order ``scars loops`` lists kinds in when no one is waiting). The gates (:data:`GATES`,
:data:`DECISION_POINTS`) are every folder's ``catalog`` (the module beside its system), gathered
when first asked for: ``scars gate --help`` loads the catalogs and no reader, no system.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from scars.core.errors import UsageError
from scars.core.gatekit.catalog import Gate, index

if TYPE_CHECKING:  # the systems are imported when asked for; a catalog needs none of them
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


def catalog_module(loop: str) -> str:
    """The module holding ``loop``'s gates as data: ``catalog`` beside its system."""
    return REGISTRY[loop].rsplit(".", 1)[0] + ".catalog"


_INDEXED: tuple[tuple[tuple[str, str], ...], tuple[dict[str, Gate], dict[str, Gate]]] | None = None


def _indexed() -> tuple[dict[str, Gate], dict[str, Gate]]:
    """Every registered loop's decision points, by gate id and by entry id (gatekit's ``index``),
    gathered again when the registry changed."""
    global _INDEXED
    key = tuple(REGISTRY.items())
    if _INDEXED is None or _INDEXED[0] != key:
        points = [g for loop in REGISTRY for g in importlib.import_module(catalog_module(loop)).POINTS]
        _INDEXED = (key, index(points))
    return _INDEXED[1]


class _Gates(Mapping[str, Gate]):
    """A read-only view of the registered loops' gates, gathered on first use."""

    def __init__(self, which: int, what: str) -> None:
        self._which = which
        self._what = what

    def __getitem__(self, key: str) -> Gate:
        return _indexed()[self._which][key]

    def __iter__(self) -> Iterator[str]:
        return iter(_indexed()[self._which])

    def __len__(self) -> int:
        return len(_indexed()[self._which])

    def __repr__(self) -> str:
        return f"<{self._what}: {', '.join(self)}>"


GATES: Mapping[str, Gate] = _Gates(0, "the gates scars gate answers, by id")
DECISION_POINTS: Mapping[str, Gate] = _Gates(1, "every decision point scars writes, by entry id")


def gate_paths() -> list[str]:
    """What PATH names for each registered loop's gates (its catalog's ``WHERE``), in order."""
    return [w for loop in REGISTRY if (w := getattr(importlib.import_module(catalog_module(loop)), "WHERE", ""))]


def get_gate(gate_id: str) -> Gate:
    try:
        return GATES[gate_id]
    except KeyError:
        raise UsageError(f"unknown gate {gate_id!r}; gates: {', '.join(GATES)}") from None


def point_of(entry_id: str) -> Gate | None:
    """The decision point an auto-decisions.md gate-id names (None: not one scars writes)."""
    return DECISION_POINTS.get(entry_id)

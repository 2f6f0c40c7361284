"""Which gate answers a loop the inbox lists: :func:`gate_call` (one place for `scars loops`,
bare `scars` and the app's Loops inbox).

A loop state (``scars.core.loops``) names its own human gate: loop-spec its SPEC gate or its
escalate route, a review loop `review-continue`, a bkit feature `pdca-max-iterations` once the
limit is spent below the threshold (else `pdca-continue`), a bkit sprint `sprint-pause`, a DAG
report `dag-escalate`, a samsara feature its `triage`. The call carries the path and options
`scars gate` takes, so every front end gathers the same Evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scars.core.gatekit.catalog import GATES
from scars.core.sanitize import shell_join


@dataclass(frozen=True, slots=True)
class GateCall:
    """A gate and what ``gather`` needs: the path (absolute) and options (e.g. the bkit feature)."""

    gate: str
    path: Path
    options: dict[str, Any] = field(default_factory=dict)

    def command(self) -> str:
        """The `scars gate` command line that answers it (paste-able and inert: ``shell_join``)."""
        words = ["scars", "gate", self.gate, str(self.path)]
        if self.options.get("feature"):
            words += ["--bkit-feature", str(self.options["feature"])]
        return shell_join(words)


def gate_call(state: Any, root: Path) -> GateCall | None:
    """The gate of ``state`` (a LoopState found under ``root``), or None when it has none."""
    kind = getattr(state, "kind", None)
    path = Path(root) / str(getattr(state, "path", ""))
    d = getattr(state, "details", None) or {}
    gate: str | None
    options: dict[str, Any] = {}
    if kind == "samsara":
        gate = "triage"
    elif kind == "loop-spec":
        gate = "escalate" if getattr(state, "route", None) == "escalate" else "spec"
    elif kind in ("mechanist", "aris"):
        gate = "review-continue"
    elif kind == "bkit":
        options["feature"] = getattr(state, "name", None)
        spent = getattr(getattr(state, "budget", None), "spent", False)
        gate = "pdca-max-iterations" if spent and not d.get("match_rate_met") else "pdca-continue"
    elif kind == "bkit-sprint":
        gate = "sprint-pause"
    elif kind in ("dag-iteration", "dag-convergence"):
        gate = "dag-escalate"
    else:
        gate = None
    if gate is None or gate not in GATES:
        return None
    return GateCall(gate, path, options)

"""Which gate answers a loop the inbox lists: :func:`gate_call` (one place for `scars loops`,
bare `scars` and the app's Loops inbox).

A loop state (``scars.core.loops``) names its own human gate through its loop system's
``gate_call`` (``loops.registry``): loop-spec its SPEC gate or its escalate route, a review loop
`review-continue`, a bkit feature `pdca-max-iterations` once the limit is spent below the
threshold (else `pdca-continue`), a bkit sprint `sprint-pause`, a DAG report `dag-escalate`, a
samsara feature its `triage`. The call carries the path and options
`scars gate` takes, so every front end gathers the same Evidence.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scars.core.loops.registry import GATES, system_of_kind
from scars.core.records import field, record
from scars.core.sanitize import shell_join


@record(slots=True)
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
    system = system_of_kind(getattr(state, "kind", None))
    call = None if system is None else system.gate_call(state)
    if call is None or call[0] not in GATES:
        return None
    gate, options = call
    where = options.pop("path", None)  # a system may name another path than the state's (loop-spec 7.x)
    return GateCall(gate, Path(where) if where else Path(root) / str(getattr(state, "path", "")), options)

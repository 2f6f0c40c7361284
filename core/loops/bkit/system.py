"""bkit PDCA as a loop system: ``.bkit/state/pdca-status.json`` (else the legacy
``docs/.pdca-status.json``) and ``.bkit/state/sprints/*.json``, the feature and sprint gates,
match rates /100 against bkit's threshold (a sprint's target and minimum)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from scars.core.advice.advisor import number
from scars.core.gatekit.catalog import Answer, Gate
from scars.core.gatekit.evidence import Evidence, GateResult
from scars.core.loops.base import LoopState
from scars.core.loops.bkit.gates import apply_pdca, gather_pdca
from scars.core.loops.bkit.reader import CURRENT_STATUS, read_sprint, read_status
from scars.core.loops.system import LoopKind, LoopSystem, StateFileSystem, WalkedDir

SCALE = 100.0


class Bkit(StateFileSystem):
    loop = "bkit"
    kinds: tuple[LoopKind, ...] = (LoopKind("bkit", "bkit PDCA", SCALE), LoopKind("bkit-sprint", "bkit sprint", SCALE))
    root_markers: tuple[str, ...] = (".bkit",)
    file_names = "pdca-status.json, a sprint .json"

    def find(self, root: Path, walk: Sequence[WalkedDir], now: datetime | None) -> list[LoopState]:
        states: list[LoopState] = []
        for d in walk:
            here, files = d.path, d.files
            if here.name == "state" and here.parent.name == ".bkit" and "pdca-status.json" in files:
                states.extend(read_status(here / "pdca-status.json", root))
            if here.name == "docs" and ".pdca-status.json" in files and not (here.parent / CURRENT_STATUS).is_file():
                states.extend(read_status(here / ".pdca-status.json", root))
            if here.name == "sprints" and here.parent.name == "state" and here.parent.parent.name == ".bkit":
                states.extend(read_sprint(here / f, root) for f in sorted(files) if f.endswith(".json"))
        return states

    def read_path(self, path: Path, root: Path, now: datetime | None) -> list[LoopState] | None:
        if path.name in ("pdca-status.json", ".pdca-status.json"):
            return read_status(path, root)
        if path.suffix == ".json" and path.parent.name == "sprints":
            return [read_sprint(path, root)]
        return None

    def record_dir(self, state: LoopState, root: Path) -> Path | None:
        p = root / state.path
        if p.is_dir():
            return p
        return p.parent.parent if state.kind == "bkit-sprint" and p.parent.name == "sprints" else p.parent

    def gate_call(self, state: LoopState) -> tuple[str, dict[str, Any]] | None:
        if state.kind == "bkit-sprint":
            return "sprint-pause", {}
        if (state.details or {}).get("format"):  # bkit's v1.5–2.0 file: shown, never written (no gate)
            return None
        spent = getattr(state.budget, "spent", False)
        gate = "pdca-max-iterations" if spent and not (state.details or {}).get("match_rate_met") else "pdca-continue"
        return gate, {"feature": state.name}

    def goal(self, kind: str, details: Mapping[str, Any]) -> tuple[float, float] | None:
        if kind == "bkit-sprint":
            t, m = number(details.get("target")), number(details.get("min_acceptable"))
            return None if t is None or m is None else (t / SCALE, m / SCALE)
        t = number(details.get("threshold"))
        return None if t is None else (t / SCALE, t / SCALE)

    def _gather(self, gate: Gate, where: Path, **options: Any) -> Evidence:
        return gather_pdca(gate, where, **options)

    def _apply(
        self, evidence: Evidence, ans: Answer, reason: str | None, *, user: str, source: str, now: str
    ) -> GateResult:
        return apply_pdca(evidence, ans, reason, user=user, source=source, now=now)


SYSTEM: LoopSystem = Bkit()

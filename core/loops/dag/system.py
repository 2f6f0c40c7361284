"""DAG iteration reports as a loop system: ``*.yaml`` / ``*.yml`` with an ``iterationDecision:``
or ``convergenceReport:`` root key under a path with ``dag`` in a name, the dag-escalate gate,
a convergence report's qualities (0..1) against its goal, an iteration decision's triggers and
budget."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from scars.core.advice.advisor import advise_decision, advise_scored, number, scored_history
from scars.core.advice.model import Advice, QualityPoint
from scars.core.gatekit.catalog import Answer, Gate
from scars.core.gatekit.evidence import Evidence, GateResult
from scars.core.loops.base import LoopState
from scars.core.loops.dag.gates import apply_dag, gather_dag
from scars.core.loops.dag.reader import is_dag_path, read_report, root_key
from scars.core.loops.system import LoopKind, LoopSystem, StateFileSystem, WalkedDir

YAML_SUFFIXES = (".yaml", ".yml")
SCALE = 1.0


def convergence_points(history: Sequence[Mapping[str, Any]]) -> list[QualityPoint]:
    """The monitor's QualityPoints as a convergence report has them: the open improvements are
    the history's trigger counts (a cascade shows as 3 → 4 → 6 → 9), with their strategies."""
    points = []
    for h in history:
        left = h.get("improvements_remaining")
        points.append(
            QualityPoint(
                int(h["iteration"]),
                max(0.0, min(1.0, float(h["quality"]) / SCALE)),
                None,
                left,
                h.get("strategy"),
                left,
                h.get("improvements_resolved"),
                label=f"iteration {h['iteration']}",
            )
        )
    return points


class Dag(StateFileSystem):
    loop = "dag"
    kinds: tuple[LoopKind, ...] = (
        LoopKind("dag-iteration", "DAG iteration"),
        LoopKind("dag-convergence", "DAG convergence", SCALE),
    )
    file_names = "a DAG report .yaml"

    def find(self, root: Path, walk: Sequence[WalkedDir], now: datetime | None) -> list[LoopState]:
        states = []
        for d in walk:
            for f in sorted(d.files):
                if f.endswith(YAML_SUFFIXES) and is_dag_path(d.relative / f):
                    candidate = d.path / f
                    if candidate.is_file() and not candidate.is_symlink() and root_key(candidate):
                        states.append(read_report(candidate, root))
        return states

    def read_path(self, path: Path, root: Path, now: datetime | None) -> list[LoopState] | None:
        return [read_report(path, root)] if path.suffix in YAML_SUFFIXES else None

    def gate_call(self, state: LoopState) -> tuple[str, dict[str, Any]] | None:
        return "dag-escalate", {}

    def goal(self, kind: str, details: Mapping[str, Any]) -> tuple[float, float] | None:
        goal = details.get("goal")
        if kind != "dag-convergence" or not isinstance(goal, Mapping):
            return None
        t, a = number(goal.get("targetQuality")), number(goal.get("acceptableQuality"))
        return None if t is None or a is None else (t / SCALE, a / SCALE)

    def advise(self, state: LoopState, *, token_budget: float | None, tokens_used: float | None) -> Advice | None:
        if state.kind == "dag-iteration":
            return advise_decision(state, token_budget=token_budget, tokens_used=tokens_used)
        details = state.details or {}
        goal = self.goal(state.kind, details)
        if goal is None:
            return None
        history = details.get("history")
        points = convergence_points(history) if isinstance(history, list) and history else scored_history(state, SCALE)
        if not points:
            return None
        return advise_scored(state, points, *goal, token_budget=token_budget, tokens_used=tokens_used)

    def _gather(self, gate: Gate, where: Path, **options: Any) -> Evidence:
        return gather_dag(gate, where, **options)

    def _apply(
        self, evidence: Evidence, ans: Answer, reason: str | None, *, user: str, source: str, now: str
    ) -> GateResult:
        return apply_dag(evidence, ans, reason, user=user, source=source, now=now)


SYSTEM: LoopSystem = Dag()

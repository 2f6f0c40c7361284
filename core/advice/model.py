"""The advisor's vocabulary: an open reason to iterate (:class:`Trigger`), one iteration of any
loop (:class:`QualityPoint`), what a rule recommends (:class:`Recommendation`), a failure mode as
evaluated (:class:`FailureMode`) and the advice as a whole (:class:`Advice`); and the gain under
which iterating is not worth it (the ImprovementAssessment and the budget-burn mode both read it)."""

from __future__ import annotations

from typing import Any

from scars.core.records import field, record

MIN_GAIN = 0.1


@record(slots=True)
class Trigger:
    """An open reason to iterate (dag IterationTrigger): ``key`` identifies it across points."""

    type: str
    key: str
    severity: float = 1.0
    fixable: bool = True
    source: str = ""
    # What the seed's decision tree branches on: low_confidence "missing_evidence" (EXPAND) or
    # "factual_uncertainty" (RETRY); hallucination_detected "specific_claims" (RETRY) or
    # "systemic" (REFINE). Empty: the tree's first branch.
    cause: str = ""


@record(slots=True)
class QualityPoint:
    """One iteration of any loop. ``triggers`` None = not known for this point (only a count)."""

    iteration: int
    quality: float
    triggers: tuple[Trigger, ...] | None = None
    trigger_count: int | None = None
    strategy: str | None = None
    improvements_remaining: int | None = None
    improvements_resolved: int | None = None
    label: str = ""

    @property
    def count(self) -> int | None:
        if self.trigger_count is not None:
            return self.trigger_count
        return len(self.triggers) if self.triggers is not None else None


@record(slots=True)
class Recommendation:
    rule: str  # e.g. "budget_matrix", "fixability", "failure_mode.trigger_cascade"
    action: str  # one of ACTIONS, or a strategy (RETRY, REFINE, EXPAND, FINAL_RETRY, ESCALATE, ROTATE)
    message: str
    figures: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "action": self.action, "message": self.message, "figures": dict(self.figures)}


@record(slots=True)
class FailureMode:
    id: str  # infinite_loop | budget_burn | false_improvement | trigger_cascade | strategy_mismatch
    name: str
    active: bool
    evaluated: bool  # False when the history cannot show it (e.g. no token budget given)
    message: str
    figures: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "active": self.active,
            "evaluated": self.evaluated,
            "message": self.message,
            "figures": dict(self.figures),
        }


@record(slots=True)
class Advice:
    source: str  # "samsara", "loop-spec", "aris", "bkit", "generic"
    subject: str  # feature / loop name
    action: str  # headline, one of ACTIONS
    gate_choice: str  # continue | stop
    strategy: str | None
    recommendations: tuple[Recommendation, ...]
    failure_modes: tuple[FailureMode, ...]
    trend: dict[str, Any]
    budget: dict[str, Any]
    fixability: float | None
    history: tuple[QualityPoint, ...]
    notes: tuple[str, ...] = ()  # what the advice rests on that a reader must know (e.g. which count)

    @property
    def headline_rules(self) -> list[Recommendation]:
        return [r for r in self.recommendations if r.action == self.action]

    def summary(self, width: int = 78) -> str:
        """A short plain-text summary (a few lines) for a panel or a report."""
        lines = [f"Advice ({self.source}): {self.action} — gate: {self.gate_choice}"]
        why = [r.rule for r in self.headline_rules]
        if why:
            lines.append("because: " + ", ".join(why))
        t = self.trend
        if t.get("points", 0) >= 2:
            lines.append(
                f"trend: {t['direction']} (slope {t['slope']:+.3f})"
                + (", plateau" if t.get("is_plateauing") else "")
                + (
                    ", target reached"
                    if t["latest_quality"] >= t["target"]
                    else f", converges ~ iteration {t['predicted_convergence_iteration']}"
                    if t.get("predicted_convergence_iteration") is not None
                    else ""
                )
            )
        if self.strategy:
            lines.append(f"strategy: {self.strategy}")
        active = [f.name for f in self.failure_modes if f.active]
        if active:
            lines.append("failure modes: " + ", ".join(active))
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(line if len(line) <= width else line[: width - 1] + "…" for line in lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "subject": self.subject,
            "action": self.action,
            "gate_choice": self.gate_choice,
            "strategy": self.strategy,
            "fixability": self.fixability,
            "budget": dict(self.budget),
            "trend": dict(self.trend),
            "recommendations": [r.to_dict() for r in self.recommendations],
            "failure_modes": [f.to_dict() for f in self.failure_modes],
            "history": [
                {
                    "iteration": p.iteration,
                    "quality": round(p.quality, 4),
                    "trigger_count": p.count,
                    "strategy": p.strategy,
                    "label": p.label,
                }
                for p in self.history
            ],
            "notes": list(self.notes),
        }

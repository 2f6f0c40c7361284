"""The iteration advisor: dag-iteration-detector and dag-convergence-monitor over a history.

The rules are those of seed 000 (dag-iteration-detector) and formats.md §5, applied to a
*generic history*: a list of :class:`QualityPoint` (one per iteration: a quality in 0..1, the
triggers still open after it, the strategy it used). Any loop can be advised by building that
list — :func:`advise_feature` does it for samsara rounds, :func:`advise_loop_history` for
loop-spec judge scores, ARIS/Mechanist review scores and bkit match rates. Every
recommendation carries the rule that produced it and the figures it used; the advice is shown
beside the human's choice, never instead of it.

Rules (docs/advice.md repeats them):

* **Budget matrix** (R = remaining iterations, T = share of the token budget left, optional;
  G = quality gap = max(0, target − latest quality); target 0.85):
  T < 0.25 → ESCALATE (budget); R ≤ 0 → ESCALATE; R ≥ 3 and (T unknown or T > 0.5): G > 0.3 →
  ITERATE, 0.1 ≤ G ≤ 0.3 → REFINE, G < 0.1 → ACCEPT; otherwise (R 1–2, or R ≥ 3 with
  0.25 ≤ T ≤ 0.5, which the seed table leaves open): G > 0.3 → FINAL_ATTEMPT, else ACCEPT.
* **Fixability** = fixable triggers / triggers; < 0.3 → ESCALATE (exactly 0.3 does not).
* **Strategy tree**: when the iteration count ≥ max − 1: improving trend → FINAL_RETRY, else
  ESCALATE. Otherwise by the most severe open trigger type (ties: the larger count, then the
  tree's order): validation_failure → RETRY on the
  first attempt, REFINE after a failed RETRY; low_confidence → EXPAND (missing evidence);
  hallucination_detected → RETRY; user_rejection → REFINE when fixable (clear direction), else
  ESCALATE; requirement_unmet / other → REFINE. For samsara the categories map (our mapping) to
  silent_failure_conditions → validation_failure, unverified_assumptions → low_confidence
  (verify with evidence), known_shortcuts → requirement_unmet.
* **Failure modes**: (1) infinite loop — the same trigger set in the last 3 (or more)
  consecutive points; (2) budget burn — tokens used > 75 % of the budget with mean quality gain
  per iteration < 0.1 (needs a token budget); (3) false improvement — population variance of
  the last three qualities < 0.02 with ≥ 3 iterations; (4) trigger cascade — trigger count >
  1.2 × the previous point's (exactly 1.2 × does not fire); (5) strategy mismatch — the same
  strategy failed (quality did not rise) in the two latest iterations.
* **Convergence monitor**: slope = least-squares slope of quality over iteration; direction
  improving / declining when slope > 0.02 / < −0.02, else stable; plateau when the variance of
  the last three qualities < 0.01; predicted convergence iteration = latest + ceil((target −
  latest) / slope) when the slope is positive, none when that is more than 20 iterations away.
  Monitor action: accept when converged (quality ≥ target and nothing remaining); accept when
  acceptable (≥ 0.70) with ≤ 1 iteration left; no iteration left → accept if acceptable else
  escalate; plateau below acceptable → escalate; declining over ≥ 3 points → escalate; target
  not reachable in the remaining iterations (judged from two or more points) → escalate; else
  continue.
* **Headline**: the most cautious action among the budget matrix, fixability, the active
  failure modes (budget burn, false improvement and trigger cascade escalate) and the monitor,
  in the order ESCALATE > ACCEPT > FINAL_ATTEMPT > REFINE > ITERATE — except that a converged
  history (quality ≥ target, nothing remaining) is always ACCEPT. For samsara's round gate,
  ESCALATE and ACCEPT mean "stop", the others "continue".

Where each rule is: ``budget`` (the matrix), ``fixable`` (fixability, the ImprovementAssessment),
``failures`` (the failure modes), ``strategy`` (the tree), ``trend`` (the monitor); the advice's
shapes in ``model``; a samsara feature's history in ``feature``. This module combines them: a
generic history (:func:`advise_history`), another loop's scores (:func:`advise_scored`) and a DAG
decision report (:func:`advise_decision`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scars.core.advice.budget import budget_matrix
from scars.core.advice.failures import failure_modes
from scars.core.advice.fixable import fixability, fixability_recommendation
from scars.core.advice.model import Advice, QualityPoint, Recommendation, Trigger
from scars.core.advice.strategy import strategy_tree
from scars.core.advice.trend import (
    ACCEPTABLE_QUALITY,
    TARGET_QUALITY,
    monitor_recommendation,
    trend_analysis,
)

ACTIONS = ("ITERATE", "REFINE", "FINAL_ATTEMPT", "ACCEPT", "ESCALATE")


_CAUTION = {a: i for i, a in enumerate(ACTIONS)}  # higher = more cautious


# the monitor's action (formats.md §5.2) -> the advisor's
MONITOR_ACTION = {"continue": "ITERATE", "accept": "ACCEPT", "escalate": "ESCALATE"}


GATE_CHOICE = {
    "ITERATE": "continue",
    "REFINE": "continue",
    "FINAL_ATTEMPT": "continue",
    "ACCEPT": "stop",
    "ESCALATE": "stop",
}


def advise_history(
    points: Sequence[QualityPoint],
    *,
    max_iterations: int,
    current_iteration: int | None = None,
    triggers: Sequence[Trigger] | None = None,
    token_budget: float | None = None,
    tokens_used: float | None = None,
    target: float = TARGET_QUALITY,
    acceptable: float = ACCEPTABLE_QUALITY,
    source: str = "generic",
    subject: str = "",
) -> Advice:
    """Advise on a generic iteration history.

    ``points`` in iteration order (an entry point 0 may precede the first iteration);
    ``current_iteration`` defaults to the last point's iteration; ``triggers`` (open now)
    default to the last point's. Token figures are optional; both or neither.
    """
    pts = sorted(points, key=lambda p: p.iteration)
    cur = current_iteration if current_iteration is not None else (pts[-1].iteration if pts else 0)
    remaining = max(0, max_iterations - cur)
    trig = list(triggers) if triggers is not None else list(pts[-1].triggers or ()) if pts else []
    latest = pts[-1] if pts else None
    q = latest.quality if latest else 0.0
    gap = max(0.0, target - q)
    token_share = None
    if token_budget is not None and tokens_used is not None and token_budget > 0:
        token_share = max(0.0, (token_budget - tokens_used) / token_budget)
    recs: list[Recommendation] = []

    action, row = budget_matrix(remaining, gap, token_share, latest.improvements_remaining if latest else None)
    recs.append(
        Recommendation(
            "budget_matrix",
            action,
            f"Budget matrix: {row}.",
            {
                "remaining_iterations": remaining,
                "quality_gap": round(gap, 4),
                "token_share_left": None if token_share is None else round(token_share, 4),
            },
        )
    )
    recs.extend(fixability_recommendation(trig))
    trend = trend_analysis(pts, remaining, target)
    monitor = monitor_recommendation(
        trend,
        latest.quality if latest else None,
        latest.improvements_remaining if latest else None,
        remaining,
        acceptable,
    )
    recs.append(
        Recommendation(
            "convergence_monitor",
            MONITOR_ACTION[monitor.action],
            f"Convergence monitor: {monitor.reason}.",
            {
                k: trend[k]
                for k in (
                    "direction",
                    "slope",
                    "is_plateauing",
                    "predicted_convergence_iteration",
                    "latest_quality",
                    "achievable",
                )
            }
            | {"remaining_iterations": remaining, "acceptable": acceptable},
        )
    )
    modes = failure_modes(pts, token_budget=token_budget, tokens_used=tokens_used)
    for f in modes:
        if not f.active:
            continue
        act = "ESCALATE" if f.id in ("budget_burn", "false_improvement", "trigger_cascade") else "ROTATE"
        recs.append(Recommendation(f"failure_mode.{f.id}", act, f.message, dict(f.figures)))
    tree = strategy_tree(pts, trig, max_iterations, cur, trend["direction"])
    strategy = None
    if tree is not None:
        recs.append(tree)
        strategy = tree.action
        ladder = ["RETRY", "REFINE", "EXPAND", "ESCALATE"]
        active_ids = {f.id: f for f in modes if f.active}
        failed = active_ids.get("strategy_mismatch")
        step_up = "infinite_loop" in active_ids or (
            failed is not None and str(failed.figures.get("failed_strategy", "")).upper() == strategy
        )
        if step_up and strategy in ladder:
            strategy = ladder[min(len(ladder) - 1, ladder.index(strategy) + 1)]
    headline = max((r.action for r in recs if r.action in _CAUTION), key=lambda a: _CAUTION[a], default="ITERATE")
    if monitor.converged:
        headline = "ACCEPT"  # the goal is reached: budget and variance rules no longer apply
        strategy = None
    if token_share is not None:
        budget = {
            "max_iterations": max_iterations,
            "current_iteration": cur,
            "remaining_iterations": remaining,
            "token_budget": token_budget,
            "tokens_used": tokens_used,
            "token_share_left": round(token_share, 4),
        }
    else:
        budget = {"max_iterations": max_iterations, "current_iteration": cur, "remaining_iterations": remaining}
    return Advice(
        source=source,
        subject=subject,
        action=headline,
        gate_choice=GATE_CHOICE[headline],
        strategy=strategy,
        recommendations=tuple(recs),
        failure_modes=tuple(modes),
        trend=trend,
        budget=budget,
        fixability=fixability(trig),
        history=tuple(pts),
    )


def number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def scored_history(
    state: Any,
    scale: float,
    facts: Sequence[tuple[tuple[Trigger, ...] | None, str | None]] | None = None,
) -> list[QualityPoint]:
    """A loop state's measured trend points (``LoopState.points`` with a value) as the advisor's
    QualityPoints, each score divided by the loop's ``scale``; ``facts``: per point, the triggers
    and the strategy its loop recorded (used when there is one per measured point)."""
    measured = [p for p in getattr(state, "points", ()) if getattr(p, "value", None) is not None]
    points: list[QualityPoint] = []
    for i, p in enumerate(measured, 1):
        trig, strategy = facts[i - 1] if facts is not None and len(facts) == len(measured) else (None, None)
        q = max(0.0, min(1.0, float(p.value) / scale))
        points.append(QualityPoint(i, q, trig, None if trig is None else len(trig), strategy, label=p.label))
    return points


def report_triggers_as(items: Sequence[Mapping[str, Any]]) -> list[Trigger]:
    """A DAG report's triggers (as scars.core.loops.dag.reader reads them: type, index, severity, the
    seed's fixable, cause) as the advisor's :class:`Trigger`; a missing severity counts as 1."""
    return [
        Trigger(
            str(t["type"]),
            f"trigger {t['index']}",
            t["severity"] if t.get("severity") is not None else 1.0,
            bool(t["fixable"]),
            cause=str(t.get("cause") or ""),
        )
        for t in items
    ]


# An ImprovementAssessment recommendation (and a report's) as the advisor's action.
ASSESSMENT_ACTION = {"iterate": "ITERATE", "accept": "ACCEPT", "escalate": "ESCALATE", "abort": "ESCALATE"}


def advise_decision(state: Any, *, token_budget: float | None = None, tokens_used: float | None = None) -> Advice:
    """Advice for a DAG iteration-decision report: it holds triggers and a budget, not a quality
    history, so the budget matrix's ESCALATE rows, the fixability rule (error codes decide a
    validation failure), the ImprovementAssessment, the budget-insufficient case and the strategy
    tree apply; the failure modes need a history and say so."""
    d = getattr(state, "details", None) or {}
    triggers = report_triggers_as(d.get("triggers", []))
    budget = getattr(state, "budget", None)
    limit = getattr(budget, "limit", None)
    current = getattr(budget, "used", None) or 0
    remaining = d.get("remaining_iterations")
    token_share = d.get("token_share_left")
    if token_budget is not None and tokens_used is not None and token_budget > 0:
        token_share = max(0.0, (token_budget - tokens_used) / token_budget)
    recs: list[Recommendation] = []
    if remaining is not None or token_share is not None:
        action, row = budget_matrix(remaining if remaining is not None else 3, None, token_share)
        recs.append(
            Recommendation(
                "budget_matrix",
                action,
                f"Budget matrix: {row}.",
                {"remaining_iterations": remaining, "token_share_left": token_share, "quality_gap": None},
            )
        )
    recs.extend(fixability_recommendation(triggers))
    if d.get("budget_insufficient"):
        recs.append(
            Recommendation(
                "budget_insufficient",
                "ESCALATE",
                f"BUDGET_INSUFFICIENT: {d.get('tokens_left'):g} tokens left, the next iteration needs "
                f"{d.get('estimated_tokens'):g}: escalate with partial acceptance.",
                {"tokens_left": d.get("tokens_left"), "estimated_tokens": d.get("estimated_tokens")},
            )
        )
    ours = d.get("improvement_assessment")
    if ours:
        recs.append(
            Recommendation(
                "improvement_assessment",
                ASSESSMENT_ACTION[ours["recommendation"]],
                f"Improvement assessment: {ours['recommendation']} — {ours['why']} (likelihood "
                f"{ours['likelihood']:.2f}, expected gain {ours['expectedGain']:.2f}).",
                dict(ours["figures"]) | {"diminishing_returns": ours["diminishingReturns"]},
            )
        )
    tree = strategy_tree([], triggers, limit if isinstance(limit, int) else 0, current, "stable")
    strategy = None
    if tree is not None:
        recs.append(tree)
        strategy = tree.action
    headline = max((r.action for r in recs if r.action in _CAUTION), key=lambda a: _CAUTION[a], default="ITERATE")
    return Advice(
        source=state.kind,
        subject=state.name,
        action=headline,
        gate_choice=GATE_CHOICE[headline],
        strategy=strategy,
        recommendations=tuple(recs),
        failure_modes=tuple(failure_modes([], token_budget=None, tokens_used=None)),
        trend=trend_analysis([], remaining),
        budget={"max_iterations": limit, "current_iteration": current, "remaining_iterations": remaining}
        | ({"token_share_left": round(token_share, 4)} if token_share is not None else {}),
        fixability=fixability(triggers),
        history=(),
    )


def advise_scored(
    state: Any,
    points: list[QualityPoint],
    target: float,
    acceptable: float,
    *,
    token_budget: float | None = None,
    tokens_used: float | None = None,
) -> Advice:
    """Advice for another loop's quality history (loop-spec judge scores, ARIS/Mechanist review
    scores, bkit match rates, DAG convergence reports): its points, the goal its reader
    evaluated, its budget."""
    budget = getattr(state, "budget", None)
    limit = getattr(budget, "limit", None)
    used = getattr(budget, "used", None)
    max_it = limit if isinstance(limit, int) else max(len(points), 1)  # a limit of 0 is a limit
    current = used if isinstance(used, int) else points[-1].iteration
    triggers = list(points[-1].triggers or ())
    return advise_history(
        points,
        max_iterations=max_it,
        current_iteration=current,
        triggers=triggers,
        token_budget=token_budget,
        tokens_used=tokens_used,
        target=target,
        acceptable=acceptable,
        source=state.kind,
        subject=state.name,
    )

"""The strategy tree of the dag-iteration-detector (seed 000): at the last iterations by the
trend, otherwise by the most severe open trigger type."""

from __future__ import annotations

from collections.abc import Sequence

from scars.core.advice.model import QualityPoint, Recommendation, Trigger


def strategy_tree(
    points: Sequence[QualityPoint],
    triggers: Sequence[Trigger],
    max_iterations: int,
    current_iteration: int,
    trend_direction: str,
) -> Recommendation | None:
    if max_iterations > 0 and current_iteration >= max_iterations - 1:
        if trend_direction == "improving":
            return Recommendation(
                "strategy_tree.iteration_limit",
                "FINAL_RETRY",
                f"Iteration {current_iteration} ≥ max − 1 ({max_iterations - 1}) with an improving "
                "trend: one final retry with all fixes.",
                {"iteration": current_iteration, "max": max_iterations, "trend": trend_direction},
            )
        return Recommendation(
            "strategy_tree.iteration_limit",
            "ESCALATE",
            f"Iteration {current_iteration} ≥ max − 1 ({max_iterations - 1}) without improvement: "
            "escalate with a failure summary.",
            {"iteration": current_iteration, "max": max_iterations, "trend": trend_direction},
        )
    if not triggers:
        return None
    by_type: dict[str, list[Trigger]] = {}
    for t in triggers:
        by_type.setdefault(t.type, []).append(t)
    order = ("validation_failure", "low_confidence", "hallucination_detected", "user_rejection")
    top = max(
        by_type,
        key=lambda k: (
            max(t.severity for t in by_type[k]),
            len(by_type[k]),
            -(order.index(k) if k in order else len(order)),
        ),
    )
    ts = by_type[top]
    figures = {"trigger_type": top, "count": len(ts), "max_severity": max(t.severity for t in ts)}
    prev_strategy = next((p.strategy for p in reversed(points) if p.strategy), None)
    retry_failed = (
        len(points) >= 2 and (points[-1].strategy or "").upper() == "RETRY" and points[-1].quality <= points[-2].quality
    )
    if top == "validation_failure":
        if retry_failed:
            return Recommendation(
                "strategy_tree.validation_failure",
                "REFINE",
                "Validation failures remain after a failed retry: refine with schema guidance.",
                {**figures, "previous_strategy": prev_strategy},
            )
        return Recommendation(
            "strategy_tree.validation_failure",
            "RETRY",
            "Validation failures (silent-failure conditions) open: retry with error fixes and a death test per item.",
            figures,
        )
    if top == "low_confidence":
        if any(t.cause == "factual_uncertainty" for t in ts):
            return Recommendation(
                "strategy_tree.low_confidence",
                "RETRY",
                "Low confidence from factual uncertainty: retry with verification emphasis.",
                {**figures, "cause": "factual_uncertainty"},
            )
        return Recommendation(
            "strategy_tree.low_confidence",
            "EXPAND",
            "Low confidence from missing evidence (unverified assumptions): expand — verify each "
            "assumption with a test or a pointer.",
            {**figures, "cause": "missing_evidence"},
        )
    if top == "hallucination_detected":
        if any(t.cause == "systemic" for t in ts):
            return Recommendation(
                "strategy_tree.hallucination",
                "REFINE",
                "Systemic hallucination (no specific claim to remove): refine with source restrictions.",
                {**figures, "cause": "systemic"},
            )
        return Recommendation(
            "strategy_tree.hallucination",
            "RETRY",
            "Specific false claims identified: retry with the claims removed.",
            {**figures, "cause": "specific_claims"},
        )
    if top == "user_rejection":
        if all(t.fixable for t in ts):
            return Recommendation(
                "strategy_tree.user_rejection",
                "REFINE",
                "User rejection with a clear direction: refine with the user's guidance.",
                figures,
            )
        return Recommendation(
            "strategy_tree.user_rejection",
            "ESCALATE",
            "User rejection with vague feedback: escalate to a human.",
            figures,
        )
    return Recommendation(
        f"strategy_tree.{top}",
        "REFINE",
        f"Open {top.replace('_', ' ')} triggers: refine the output towards the unmet items.",
        figures,
    )

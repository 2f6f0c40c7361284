"""Fixability (seed 000): the fixable share of the open triggers and its rule, a trigger's
fixability by its error code, and the ImprovementAssessment over the open triggers."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from scars.core.advice.model import MIN_GAIN, Recommendation, Trigger
from scars.core.advice.trend import (
    below,
    slope,
    variance,
)

FIXABILITY_MIN = 0.3


def fixability(triggers: Iterable[Trigger]) -> float | None:
    ts = list(triggers)
    if not ts:
        return None
    return sum(1 for t in ts if t.fixable) / len(ts)


# Validation error codes the seed's fixability assessment holds unfixable: a type mismatch or a
# schema violation is a model or schema limitation, not an error a retry fixes.
UNFIXABLE_CODES = ("TYPE_MISMATCH", "SCHEMA_VIOLATION")


def fixability_recommendation(triggers: Sequence[Trigger]) -> list[Recommendation]:
    """The fixability rule of the dag-iteration-detector (seed 000) as one recommendation: escalate
    when the fixable share of the open triggers is below ``FIXABILITY_MIN``; none without triggers.
    Samsara features and DAG decision reports are advised by this one rule and its one wording."""
    fx = fixability(triggers)
    if fx is None:
        return []
    esc = below(fx, FIXABILITY_MIN)
    return [
        Recommendation(
            "fixability",
            "ESCALATE" if esc else "ITERATE",
            (
                f"Only {fx:.0%} of the open triggers are fixable (< {FIXABILITY_MIN:.0%}): escalate."
                if esc
                else f"{fx:.0%} of the open triggers are fixable."
            ),
            {
                "fixable": sum(1 for t in triggers if t.fixable),
                "triggers": len(triggers),
                "fixability": round(fx, 4),
                "threshold": FIXABILITY_MIN,
            },
        )
    ]


def seed_fixable(trigger_type: str, code: str | None, fixable: bool) -> bool:
    """A trigger's fixability by seed 000's rule: a validation failure is fixable unless its error
    code is TYPE_MISMATCH or SCHEMA_VIOLATION (whatever ``fixable`` says); the other types keep
    their own flag (source material, specific claims, the requirement's, actionable feedback)."""
    if trigger_type == "validation_failure" and code is not None:
        return code.upper() not in UNFIXABLE_CODES
    return fixable


# ImprovementAssessment (the detector's assessImprovementPotential): plateau when the variance of
# the last three quality scores is under 0.02; the expected gain damped to 0.3 on a plateau, else 0.7.
ASSESSMENT_PLATEAU_VARIANCE = 0.02
GAIN_ON_PLATEAU = 0.3
GAIN_OTHERWISE = 0.7


def improvement_assessment(
    qualities: Sequence[float], triggers: Sequence[Trigger], remaining: int | None
) -> dict[str, Any] | None:
    """seed 000's ImprovementAssessment of the open ``triggers``: likelihood (fixability, halved on a
    plateau), expectedGain (fixability × mean severity × 0.3 on a plateau, else 0.7),
    diminishingReturns (the plateau) and its recommendation, the first rule that holds: no
    iteration left → accept; a plateau with a trend under 0.01 → escalate; a gain under 0.1 →
    accept; fixability under 0.3 → escalate; else iterate. None without triggers."""
    if not triggers:
        return None
    fx = fixability(triggers) or 0.0
    severity = sum(t.severity for t in triggers) / len(triggers)
    last3 = list(qualities[-3:])
    plateau = len(last3) >= 3 and below(variance(last3), ASSESSMENT_PLATEAU_VARIANCE)
    xs = [float(i) for i in range(len(qualities))]
    trend = slope(xs, list(qualities)) if len(qualities) >= 2 else 0.0
    gain = fx * severity * (GAIN_ON_PLATEAU if plateau else GAIN_OTHERWISE)
    if remaining is not None and remaining <= 0:
        recommendation, why = "accept", "no iteration left"
    elif plateau and below(trend, 0.01):
        recommendation, why = "escalate", f"plateau with a trend of {trend:+.3f} (< 0.01): not improving"
    elif below(gain, MIN_GAIN):
        recommendation, why = "accept", f"expected gain {gain:.3f} (< {MIN_GAIN}): not worth iterating"
    elif below(fx, FIXABILITY_MIN):
        recommendation, why = "escalate", f"fixability {fx:.2f} (< {FIXABILITY_MIN}): most issues cannot be fixed"
    else:
        recommendation, why = "iterate", f"expected gain {gain:.3f} with fixability {fx:.2f}"
    return {
        "likelihood": round(fx * (0.5 if plateau else 1.0), 4),
        "expectedGain": round(gain, 4),
        "diminishingReturns": plateau,
        "recommendation": recommendation,
        "why": why,
        "figures": {"fixability": round(fx, 4), "mean_severity": round(severity, 4), "trend": round(trend, 6)},
    }

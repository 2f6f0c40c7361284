"""The convergence monitor, once: variance, slope, the trend of a history and the monitor's action.

Pure functions over numbers (and points that have an ``iteration`` and a ``quality``), used by
the advisor (``scars.core.advice.advisor``) and by the DAG convergence reports
(``scars.core.loops.dag.reader``). The thresholds are those of seed 000 and formats.md §5.2; where the
two former copies disagreed the monitor's own rule was kept:

* slope: least squares over the points' iteration numbers (the monitor's index when iterations
  are numbered 1, 2, 3 …, as its ``trackProgress`` numbers them);
* acceleration: slope of the last three points minus slope of the three before them;
* achievable: not plateauing, not declining, and the predicted iteration at most the remaining
  budget after the last point.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

from scars.core.records import record


class Point(Protocol):
    """One iteration of a history (the advisor's ``QualityPoint`` is one)."""

    @property
    def iteration(self) -> int: ...

    @property
    def quality(self) -> float: ...


TARGET_QUALITY = 0.85


ACCEPTABLE_QUALITY = 0.70


SLOPE_EPSILON = 0.02


PLATEAU_VARIANCE = 0.01  # convergence monitor


PREDICTION_HORIZON = 20


# Comparisons with the seeds' thresholds are made with a tolerance: a gain of exactly 0.1 computed
# as 0.6 − 0.5 = 0.09999999999999998 is not "below 0.1". Far below any figure the seeds use.
TOLERANCE = 1e-12


def below(value: float, limit: float) -> bool:
    """``value < limit``, a value within :data:`TOLERANCE` of the limit counting as at it."""
    return value < limit - TOLERANCE


def above(value: float, limit: float) -> bool:
    """``value > limit``, a value within :data:`TOLERANCE` of the limit counting as at it."""
    return value > limit + TOLERANCE


def last_three_slope(values: Sequence[float]) -> float | None:
    """Least-squares slope of the last three values per iteration (None for fewer than three)."""
    if len(values) < 3:
        return None
    return slope([0.0, 1.0, 2.0], list(values[-3:]))


def flat(values: Sequence[float]) -> bool:
    """The last three values hold level: their slope is within the monitor's stable band
    (|slope| ≤ 0.02 per iteration). A plateau is flat; a steady climb or decline is not."""
    s3 = last_three_slope(values)
    return s3 is not None and not above(abs(s3), SLOPE_EPSILON)


def variance(values: Sequence[float]) -> float:
    """Population variance (0.0 for fewer than two values)."""
    n = len(values)
    if n < 2:
        return 0.0
    mean = sum(values) / n
    return sum((v - mean) ** 2 for v in values) / n


def slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope of ys over xs (0.0 when undefined)."""
    n = len(xs)
    if n < 2:
        return 0.0
    mx, my = sum(xs) / n, sum(ys) / n
    den = sum((x - mx) ** 2 for x in xs)
    if den == 0:
        return 0.0
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den


def _acceleration(xs: Sequence[float], ys: Sequence[float]) -> float:
    """The change in rate: the slope of the last three points minus the slope of the three
    before them (a slope of fewer than two points is 0), as the monitor's ``analyzeTrend`` has it."""
    if len(ys) < 2:
        return 0.0
    return slope(xs[-3:], ys[-3:]) - slope(xs[-6:-3], ys[-6:-3])


def trend_analysis(points: Sequence[Point], remaining: int | None, target: float = TARGET_QUALITY) -> dict[str, Any]:
    """The convergence monitor's TrendAnalysis of a history (formats.md §5.2).

    ``remaining`` is the iterations left in the budget (None: no limit known); ``target`` the
    goal's target quality. ``achievable`` is the goal-achievable rule: not plateauing, not
    declining, and the predicted iteration at most ``remaining`` iterations after the last point.
    """
    xs = [float(p.iteration) for p in points]
    ys = [float(p.quality) for p in points]
    s = slope(xs, ys)
    direction = "improving" if above(s, SLOPE_EPSILON) else "declining" if below(s, -SLOPE_EPSILON) else "stable"
    accel = _acceleration(xs, ys)
    last3 = ys[-3:]
    # A plateau is flat: the variance of the last three under 0.01 (seed 000's monitor) and no
    # steady climb or decline across them (0.40 → 0.50 → 0.62 has a variance of 0.0081 but climbs).
    plateau = len(ys) >= 3 and below(variance(last3), PLATEAU_VARIANCE) and flat(ys)
    plateau_start = None
    if plateau:
        start = len(ys) - 3
        while start > 0 and below(variance(ys[start - 1 :]), PLATEAU_VARIANCE):
            start -= 1
        plateau_start = points[start].iteration
    latest = ys[-1] if ys else 0.0
    current = points[-1].iteration if points else 0
    predicted = None
    if ys and not below(latest, target):
        predicted = current
    elif s > 0:
        steps = math.ceil((target - latest) / s - 1e-9)
        if steps <= PREDICTION_HORIZON:
            predicted = current + steps
    return {
        "points": len(ys),
        "direction": direction,
        "slope": round(s, 6),
        "acceleration": round(accel, 6),
        "is_plateauing": plateau,
        "variance_last_three": round(variance(last3), 6) if len(ys) >= 3 else None,
        "slope_last_three": None if last_three_slope(ys) is None else round(last_three_slope(ys) or 0.0, 6),
        "plateau_start_iteration": plateau_start,
        "predicted_convergence_iteration": predicted,
        "latest_quality": round(latest, 6),
        "target": target,
        "achievable": (
            not plateau
            and direction != "declining"
            and predicted is not None
            and (remaining is None or predicted - current <= remaining)
        ),
    }


@record(slots=True)
class MonitorVerdict:
    """The monitor's recommendation: ``action`` (continue / accept / escalate), the rule that chose it."""

    action: str
    reason: str
    converged: bool = False


def converged(quality: float | None, improvements_remaining: int | None, target: float) -> bool:
    """Converged ⇔ quality ≥ target and no improvement remaining (unknown remaining counts as none)."""
    return quality is not None and not below(quality, target) and improvements_remaining in (None, 0)


def monitor_recommendation(
    trend: dict[str, Any],
    quality: float | None,
    improvements_remaining: int | None,
    remaining: int | None,
    acceptable: float = ACCEPTABLE_QUALITY,
) -> MonitorVerdict:
    """The monitor's action (formats.md §5.2), the first rule that holds:

    accept when converged; accept when acceptable with at most one iteration left; with none
    left accept if acceptable else escalate; escalate on a plateau below acceptable, on a
    decline over three or more points, or when the target is not achievable at the current
    trend (judged from two or more points: one point has no slope); else continue.
    """
    target = trend["target"]
    if quality is None:
        return MonitorVerdict("continue", "no quality measured yet")
    if converged(quality, improvements_remaining, target):
        return MonitorVerdict(
            "accept", f"converged: quality {quality:g} ≥ target {target:g} and no improvement remaining", True
        )
    ok = not below(quality, acceptable)
    if ok and remaining is not None and remaining <= 1:
        return MonitorVerdict(
            "accept", f"acceptable quality ({quality:g} ≥ {acceptable:g}) with {remaining} iteration(s) left"
        )
    if remaining is not None and remaining <= 0:
        if ok:
            return MonitorVerdict("accept", "budget spent at acceptable quality")
        return MonitorVerdict("escalate", f"budget spent below the acceptable quality {acceptable:g}")
    if trend["is_plateauing"] and not ok:
        return MonitorVerdict("escalate", f"plateau below the acceptable quality {acceptable:g}")
    if trend["direction"] == "declining" and trend["points"] >= 3:
        return MonitorVerdict("escalate", "quality declining over 3 or more points")
    if trend["points"] < 2:
        return MonitorVerdict("continue", "one point: no trend yet")
    if not trend["achievable"]:
        return MonitorVerdict(
            "escalate", "the target is not reachable within the remaining iterations at the current trend"
        )
    return MonitorVerdict("continue", "on track: the target is reachable within the remaining iterations")

"""The convergence monitor's arithmetic: variance, least-squares slope and the trend of a history.

Pure functions over numbers (and points that have an ``iteration`` and a ``quality``), shared by
the advisor (``scars.core.advice.advisor``) and the loops that report a quality history
(``scars.core.loops.dag``). The thresholds are those of seed 000 and formats.md §5.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol


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


def trend_analysis(points: Sequence[Point], remaining: int, target: float = TARGET_QUALITY) -> dict[str, Any]:
    xs = [float(p.iteration) for p in points]
    ys = [float(p.quality) for p in points]
    s = slope(xs, ys)
    direction = "improving" if s > SLOPE_EPSILON else "declining" if s < -SLOPE_EPSILON else "stable"
    accel = 0.0
    if len(ys) >= 3:
        accel = (ys[-1] - ys[-2]) - (ys[-2] - ys[-3])
    last3 = ys[-3:]
    plateau = len(ys) >= 3 and variance(last3) < PLATEAU_VARIANCE
    plateau_start = None
    if plateau:
        start = len(ys) - 3
        while start > 0 and variance(ys[start - 1 :]) < PLATEAU_VARIANCE:
            start -= 1
        plateau_start = points[start].iteration
    latest = ys[-1] if ys else 0.0
    current = points[-1].iteration if points else 0
    predicted = None
    if ys and latest >= target:
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
        "plateau_start_iteration": plateau_start,
        "predicted_convergence_iteration": predicted,
        "latest_quality": round(latest, 6),
        "target": target,
        "achievable": (
            not plateau and direction != "declining" and predicted is not None and predicted - current <= remaining
        ),
    }

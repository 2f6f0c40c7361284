"""The five failure modes of the dag-iteration-detector (seed 000) over a quality history:
infinite loop, budget burn, false improvement, trigger cascade, strategy mismatch."""

from __future__ import annotations

from collections.abc import Sequence

from scars.core.advice.model import MIN_GAIN, FailureMode, QualityPoint
from scars.core.advice.trend import (
    SLOPE_EPSILON,
    above,
    below,
    flat,
    last_three_slope,
    variance,
)

FALSE_IMPROVEMENT_VARIANCE = 0.02  # iteration detector


CASCADE_FACTOR = 1.2


BURN_SHARE = 0.75


SAME_TRIGGERS_MIN = 3


def _trigger_keys(p: QualityPoint) -> tuple | None:
    if p.triggers is None:
        return None
    return tuple(sorted((t.type, t.key, round(t.severity, 4)) for t in p.triggers))


def failure_modes(
    points: Sequence[QualityPoint], *, token_budget: float | None, tokens_used: float | None
) -> list[FailureMode]:
    out: list[FailureMode] = []
    iterations = sum(1 for p in points if p.iteration >= 1)

    # 1. infinite loop
    keyed = [(p, _trigger_keys(p)) for p in points]
    latest_keys = [k for _, k in reversed(keyed)]
    ref: tuple | None = latest_keys[0] if latest_keys and latest_keys[0] else None
    run = next((i for i, k in enumerate(latest_keys) if not k or k != ref), len(latest_keys)) if ref else 0
    evaluated = any(k for _, k in keyed)
    by_count = False
    if not evaluated:
        # Identities unknown (a convergence report counts its open improvements): the same count
        # with none resolved across the last iterations is the same open set, as far as it shows.
        counted = [p for p in points if p.count is not None]
        if len(counted) >= 2:
            by_count, evaluated = True, True
            run = 1 + next(
                (
                    i
                    for i, (a, b) in enumerate(zip(reversed(counted[:-1]), reversed(counted[1:])))
                    if a.count != b.count or (b.improvements_resolved or 0) > (a.improvements_resolved or 0)
                ),
                len(counted) - 1,
            )
    active = run >= SAME_TRIGGERS_MIN
    if active:
        msg = (
            f"The same {len(ref or ())} triggers stayed open across the last {run} iterations: rotate the strategy "
            "(retry → refine → expand → escalate)."
            if not by_count
            else f"The same number of open improvements, none resolved, across the last {run} iterations: "
            "rotate the strategy (retry → refine → expand → escalate)."
        )
    elif evaluated:
        msg = (
            f"Identical trigger sets in {run} latest iteration(s) (fires at {SAME_TRIGGERS_MIN})."
            if not by_count
            else f"The same open-improvement count in {run} latest iteration(s) (fires at {SAME_TRIGGERS_MIN}; "
            "identities unknown, compared by count)."
        )
    else:
        msg = "Trigger identities are not known for this history."
    out.append(
        FailureMode(
            "infinite_loop",
            "infinite loop syndrome",
            active,
            evaluated,
            msg,
            {"consecutive_identical": run, "threshold": SAME_TRIGGERS_MIN, "by_count": by_count},
        )
    )

    # 2. budget burn
    gains = [b.quality - a.quality for a, b in zip(points, points[1:])]
    mean_gain = sum(gains) / len(gains) if gains else None
    if token_budget and tokens_used is not None and token_budget > 0:
        share = tokens_used / token_budget
        active = above(share, BURN_SHARE) and mean_gain is not None and below(mean_gain, MIN_GAIN)
        msg = (
            f"{share:.0%} of the token budget used with a mean quality gain of {mean_gain:.3f} per iteration: "
            "escalate, consider decomposing the task."
            if active
            else f"{share:.0%} of the token budget used; mean gain "
            f"{'n/a' if mean_gain is None else f'{mean_gain:.3f}'} per iteration."
        )
        out.append(
            FailureMode(
                "budget_burn",
                "budget burn without progress",
                active,
                True,
                msg,
                {
                    "token_share_used": round(share, 4),
                    "mean_gain": mean_gain,
                    "share_threshold": BURN_SHARE,
                    "gain_threshold": MIN_GAIN,
                },
            )
        )
    else:
        out.append(
            FailureMode(
                "budget_burn",
                "budget burn without progress",
                False,
                False,
                "No token budget given (--token-budget/--tokens-used): not evaluated.",
                {"mean_gain": mean_gain},
            )
        )

    # 3. false improvement: scores fluctuating around the same value (seed 000: "±0.05 around the
    # same value", detected as a variance of the last three under 0.02) — a steady climb or
    # decline (0.40 → 0.50 → 0.62; 4 → 5 → 2 of 10) is not one, whatever its variance.
    qualities = [p.quality for p in points]
    last3 = qualities[-3:]
    var3 = variance(last3) if len(last3) == 3 else None
    s3 = last_three_slope(qualities)
    low_variance = var3 is not None and below(var3, FALSE_IMPROVEMENT_VARIANCE)
    active = iterations >= 3 and low_variance and flat(qualities)
    if active:
        msg = (
            f"Quality variance over the last three iterations is {var3:.4f} (< {FALSE_IMPROVEMENT_VARIANCE}) and "
            f"their slope {s3:+.3f} is flat: check for metric gaming; switch to human evaluation."
        )
    elif iterations < 3:
        msg = f"Needs ≥ 3 iterations ({iterations} so far)."
    elif low_variance:
        msg = (
            f"Quality variance over the last three iterations is {var3:.4f} (< {FALSE_IMPROVEMENT_VARIANCE}) but "
            f"their slope {s3:+.3f} is a steady {'climb' if (s3 or 0) > 0 else 'decline'}, not a fluctuation."
        )
    else:
        msg = f"Quality variance over the last three iterations is {var3:.4f}."
    out.append(
        FailureMode(
            "false_improvement",
            "false improvement mirage",
            active,
            iterations >= 3,
            msg,
            {
                "variance_last_three": None if var3 is None else round(var3, 6),
                "slope_last_three": None if s3 is None else round(s3, 6),
                "iterations": iterations,
                "threshold": FALSE_IMPROVEMENT_VARIANCE,
                "flat_slope": SLOPE_EPSILON,
            },
        )
    )

    # 4. trigger cascade
    counted = [p for p in points if p.count is not None]
    if len(counted) >= 2:
        prev, cur = counted[-2].count, counted[-1].count
        assert prev is not None and cur is not None  # `counted` keeps points with a count
        active = above(cur, CASCADE_FACTOR * prev)
        out.append(
            FailureMode(
                "trigger_cascade",
                "trigger cascade explosion",
                active,
                True,
                (
                    f"Triggers grew from {prev} to {cur} (> {CASCADE_FACTOR}×): halt iteration, analyse how the "
                    "triggers depend on each other, consider reducing scope."
                    if active
                    else f"Triggers {prev} → {cur} (fires above {CASCADE_FACTOR}× the previous count)."
                ),
                {
                    "previous": prev,
                    "current": cur,
                    "factor": CASCADE_FACTOR,
                    "ratio": None if prev == 0 else round(cur / prev, 4),
                },
            )
        )
    else:
        out.append(
            FailureMode(
                "trigger_cascade",
                "trigger cascade explosion",
                False,
                False,
                "Needs two points with a trigger count.",
                {},
            )
        )

    # 5. strategy mismatch
    failed_runs: list[str] = []
    for a, b in zip(points, points[1:]):
        if b.strategy:
            failed_runs.append(b.strategy if b.quality <= a.quality else "")
    active = len(failed_runs) >= 2 and failed_runs[-1] != "" and failed_runs[-1] == failed_runs[-2]
    with_strategy = [p for p in points if p.strategy]
    out.append(
        FailureMode(
            "strategy_mismatch",
            "strategy mismatch persistence",
            active,
            bool(with_strategy),
            (
                f"Strategy {failed_runs[-1]!s} failed twice in a row: rotate to another strategy."
                if active
                else "No strategy failed twice in a row."
                if with_strategy
                else "No strategies recorded."
            ),
            {"failed_strategy": failed_runs[-1] if active else None, "recent": failed_runs[-3:]},
        )
    )
    return out

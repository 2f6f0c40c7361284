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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from scars.core.advice.trend import (
    ACCEPTABLE_QUALITY,
    SLOPE_EPSILON,
    TARGET_QUALITY,
    above,
    below,
    flat,
    last_three_slope,
    monitor_recommendation,
    slope,
    trend_analysis,
    variance,
)
from scars.core.model import CATEGORIES, Feature, Round
from scars.core.samsara.reconcile import reconcile
from scars.core.samsara.rounds import BASIS_LABEL, DEFAULT_MAX_ROUNDS, advice_series, split_rounds
from scars.core.samsara.rounds import field_of as _attr
from scars.core.samsara.rounds import norm as _norm

FIXABILITY_MIN = 0.3


FALSE_IMPROVEMENT_VARIANCE = 0.02  # iteration detector


CASCADE_FACTOR = 1.2


BURN_SHARE = 0.75


MIN_GAIN = 0.1


SAME_TRIGGERS_MIN = 3


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


# samsara category -> dag trigger type (our mapping, see the module docstring)
CATEGORY_TRIGGER = {
    "silent_failure_conditions": "validation_failure",
    "unverified_assumptions": "low_confidence",
    "known_shortcuts": "requirement_unmet",
}


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class Recommendation:
    rule: str  # e.g. "budget_matrix", "fixability", "failure_mode.trigger_cascade"
    action: str  # one of ACTIONS, or a strategy (RETRY, REFINE, EXPAND, FINAL_RETRY, ESCALATE, ROTATE)
    message: str
    figures: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "action": self.action, "message": self.message, "figures": dict(self.figures)}


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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


def budget_matrix(
    remaining: int, gap: float | None, token_share: float | None, improvements_remaining: int | None = None
) -> tuple[str, str]:
    """(action, the matrix row that chose it). ``gap`` None: no quality measured — only the
    ESCALATE rows (no iteration left, under 25 % of tokens) can be evaluated. A low gap with
    required improvements still open is not a converged output (seed 000's ConvergenceGoal
    requires them): it counts as a medium gap, never ACCEPT."""
    tokens = "no token budget given" if token_share is None else f"{token_share:.0%} of tokens left"
    if token_share is not None and below(token_share, 0.25):
        return "ESCALATE", f"{tokens} (< 25%): budget"
    if remaining <= 0:
        return "ESCALATE", "no iteration left"
    if gap is None:
        return "ITERATE", f"{remaining} iteration(s) left, {tokens}; no quality measured, so no gap row applies"
    open_items = bool(improvements_remaining)
    if remaining >= 3 and (token_share is None or above(token_share, 0.5)):
        head = f"{remaining} iterations left, {tokens}"
        if above(gap, 0.3):
            return "ITERATE", f"{head}, high gap {gap:.2f} (> 0.3)"
        if not below(gap, 0.1):
            return "REFINE", f"{head}, medium gap {gap:.2f} (0.1–0.3)"
        if open_items:
            return "REFINE", f"{head}, low gap {gap:.2f} but {improvements_remaining} required improvement(s) open"
        return "ACCEPT", f"{head}, low gap {gap:.2f} (< 0.1)"
    row = (
        f"{remaining} iteration(s) left, {tokens}"
        if remaining <= 2
        else f"{remaining} iterations left but only {tokens} (the 1–2 row applies)"
    )
    if above(gap, 0.3):
        return "FINAL_ATTEMPT", f"{row}, high gap {gap:.2f} (> 0.3)"
    if open_items:
        return "FINAL_ATTEMPT", f"{row}, gap {gap:.2f} but {improvements_remaining} required improvement(s) open"
    return "ACCEPT", f"{row}, gap {gap:.2f} (≤ 0.3)"


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


def _round_triggers(r: Round) -> tuple[Trigger, ...] | None:
    texts = [*r.fix, *(_attr(a, "description") if isinstance(a, Mapping) else a for a in r.accept), *r.defer]
    texts = [t for t in texts if t]
    if not texts:
        return None
    return tuple(Trigger("scar_item", _norm(t)) for t in texts)


def feature_triggers(feature: Feature, decisions: Mapping[str, Any] | None = None) -> list[Trigger]:
    """The open samsara items as triggers. An item is not fixable when it is decided accept or
    defer, is a systemic_ref (a cross-feature structural fact) or is era-D ``blocked``."""
    ds: dict[str, Any] = {}
    for key, d in (decisions or {}).items():
        ds[_attr(d, "item_id") or key] = d
    out = []
    for it in feature.items:
        if not it.counted:
            continue
        action = _attr(ds.get(it.id), "action") if it.id in ds else None
        fixable = action not in ("accept", "defer") and it.systemic_ref is None and it.status != "blocked"
        out.append(
            Trigger(
                CATEGORY_TRIGGER.get(it.category, it.category),
                it.systemic_ref or it.normalized or _norm(it.text),
                1.0,
                fixable,
                it.file,
            )
        )
    return out


def samsara_history(feature: Feature) -> tuple[list[QualityPoint], int, int]:
    """(points, max_iterations, current_iteration) from the feature's signal_lost series.

    The series is :func:`scars.core.samsara.rounds.advice_series`: the part of the one series
    (the header, the trends screen, ``scars loops`` and the gates show it whole) counted by one
    rule — the loop's recorded figures, or scars' recount from its first own round on — so the
    advisor never compares the loop's 22 with scars' 85: point 0 is its start (the iteration
    entry; the current signal_lost when no start is recorded), point r its value after done
    round r; the "now" point is not an iteration and is left out. quality = 1 − signal_lost /
    the start value (1.0 when that is 0). A point's trigger set is the set of items triaged at
    the start of the next round, and the current open items for the latest point.
    """

    log = feature.iteration_log
    done, _ = split_rounds(log)
    by_round = {r.round: r for r in done}
    series = advice_series(log, feature.signal_lost)
    start = next((p.value for p in series if p.label == "start"), feature.signal_lost)

    def quality(s: int) -> float:
        return 1.0 if start <= 0 else 1.0 - s / start

    current_triggers = tuple(feature_triggers(feature))
    points: list[QualityPoint] = [
        QualityPoint(
            0, quality(start), _round_triggers(done[0]) if done else current_triggers, start, None, start, 0, "start"
        )
    ]
    for p in series:
        if p.round is None:
            continue
        r = by_round[p.round]
        nxt = next((d for d in done if d.round > r.round), None)
        trig = _round_triggers(nxt) if nxt is not None else current_triggers
        hint = (r.budget_context or {}).get("strategy_hint") if isinstance(r.budget_context, Mapping) else None
        points.append(
            QualityPoint(
                r.round,
                quality(p.value),
                trig,
                p.value,
                str(hint) if hint else None,
                p.value,
                max(0, start - p.value),
                p.label,
            )
        )
    max_it = log.max_rounds if log is not None else DEFAULT_MAX_ROUNDS
    current = points[-1].iteration
    return points, max_it, current


def advise_feature(
    feature: Feature,
    decisions: Mapping[str, Any] | None = None,
    *,
    token_budget: float | None = None,
    tokens_used: float | None = None,
) -> Advice:
    """Advice for a samsara feature's next round (the app's advisor panel)."""
    points, max_it, current = samsara_history(feature)
    advice = advise_history(
        points,
        max_iterations=max_it,
        current_iteration=current,
        triggers=feature_triggers(feature, decisions),
        token_budget=token_budget,
        tokens_used=tokens_used,
        source="samsara",
        subject=feature.name,
    )
    rec = reconcile(feature)
    if rec.difference:  # the history and the open items are two counts: say so, and by how much
        series = advice_series(feature.iteration_log, feature.signal_lost)
        which = BASIS_LABEL[series[-1].basis] if series else BASIS_LABEL["recounted"]
        note = f"{rec.summary()} The history the advice reads is one count: {which}."
        advice = replace(advice, notes=(*advice.notes, note))
    return advice


def trigger_counts_by_category(feature: Feature) -> dict[str, int]:
    return {c: sum(1 for it in feature.items if it.counted and it.category == c) for c in CATEGORIES}


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

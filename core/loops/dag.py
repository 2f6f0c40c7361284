"""DAG iteration-detector decisions and convergence-monitor reports (formats.md §5).

No file is mandated upstream: these are report shapes an agent emits as YAML, found by their
root key (``iterationDecision:`` / ``convergenceReport:``) in ``*.yaml`` files under a path
with ``dag`` in its name, or in a file named on the command line. The convergence rules of
§5.2 are evaluated from ``qualityHistory``; the report's own recommendation is shown beside
ours, never replaced by it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from scars.core.advice.advisor import FIXABILITY_MIN, QualityPoint
from scars.core.advice.trend import ACCEPTABLE_QUALITY, TARGET_QUALITY, monitor_recommendation, trend_analysis
from scars.core.loops.base import (
    Budget,
    LoopState,
    StopRule,
    TrendPoint,
    as_int,
    as_number,
    configured_count,
    configured_number,
    fmt_number,
    make_points_trend,
    read_yaml,
    rel,
)
from scars.core.model import Problem
from scars.core.values import as_dict, as_list

ROOT_KEYS = ("iterationDecision", "convergenceReport")
_ROOT_LINE = re.compile(r"^(iterationDecision|convergenceReport)\s*:", re.MULTILINE)
PEEK_BYTES = 64 * 1024

# dag-convergence-monitor defaults (the seed's example goal); the monitor's thresholds and rules
# are scars.core.advice.trend's (one monitor for the DAG reports and the advisor).
DEFAULT_TARGET = TARGET_QUALITY
DEFAULT_ACCEPTABLE = ACCEPTABLE_QUALITY
DEFAULT_MAX_ITERATIONS = 5
STRATEGIES = ("retry", "refine", "expand", "simplify", "escalate")
ACTIONS = ("continue", "accept", "escalate", "abort")


def root_key(path: Path) -> str | None:
    """The report's root key when the file starts a mapping with one (cheap peek, no parse)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(PEEK_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None
    m = _ROOT_LINE.search(head)
    return m.group(1) if m else None


def is_dag_path(relative: Path) -> bool:
    return any("dag" in part.lower() for part in relative.parts[:-1]) or "dag" in relative.name.lower()


def read_report(path: Path, root: Path | None = None) -> LoopState:
    """A decision or convergence report file. Never raises on bad input."""
    path = Path(path)
    root = Path(root) if root is not None else path.parent
    name = rel(path, root)
    data, failure = read_yaml(path, root)
    if failure is None:
        if not isinstance(data, dict) or not any(k in data for k in ROOT_KEYS):
            failure = Problem(name, None, "no `iterationDecision:` or `convergenceReport:` root key")
        elif not isinstance(data.get("iterationDecision", data.get("convergenceReport")), dict):
            failure = Problem(name, None, "the report's root key does not hold a mapping")
    if failure is not None:
        return LoopState(
            kind="dag-convergence" if "convergence" in path.name.lower() else "dag-iteration",
            name=path.stem,
            path=name,
            budget=Budget(None, None),
            stop_rule=StopRule(None, ("report unusable",)),
            route=None,
            trend=(),
            waiting_for_human=False,
            reason=f"unusable: {failure.message}",
            parse_failures=(failure,),
            status="unreadable",
        )
    if "convergenceReport" in data:
        return convergence_state(data["convergenceReport"], name, path.stem)
    return decision_state(data["iterationDecision"], name, path.stem)


# --------------------------------------------------------------------------- detector decision


def decision_state(report: dict[str, Any], file: str, default_name: str) -> LoopState:
    failures: list[Problem] = []
    decision = as_dict(report.get("decision"))
    strategy = as_dict(report.get("strategy"))
    budget_block = as_dict(report.get("budget"))
    assessment = as_dict(report.get("assessment"))
    triggers = as_list(report.get("triggers"))
    needs = decision.get("needsIteration", report.get("needsIteration"))
    strategy_type = strategy.get("type") if isinstance(strategy.get("type"), str) else None
    if strategy_type is not None and strategy_type.lower() not in STRATEGIES:
        failures.append(Problem(file, None, f"unknown strategy type {strategy_type!r} (kept)"))
    recommendation = assessment.get("recommendation") if isinstance(assessment.get("recommendation"), str) else None
    current = as_int(budget_block.get("currentIteration"))
    limit = as_int(budget_block.get("maxIterations"))
    remaining = as_int(budget_block.get("remainingIterations"))
    if limit is None and current is not None and remaining is not None:
        limit = current + remaining
    budget = Budget(current, limit, "iterations")

    numbers = [as_number(t.get("severity")) for t in triggers if isinstance(t, dict)]
    severities = [s for s in numbers if s is not None]
    fixable = [t.get("fixable") is True for t in triggers if isinstance(t, dict)]
    fixability = sum(fixable) / len(fixable) if fixable else None
    reasons = [f"{len(triggers)} trigger(s)" + (f", max severity {fmt_number(max(severities))}" if severities else "")]
    if fixability is not None:
        reasons.append(
            f"fixability {fixability:.2f}"
            + (f" < {FIXABILITY_MIN:g} → escalate" if fixability < FIXABILITY_MIN else "")
        )
    if needs is False:
        stop = StopRule(True, tuple(["needsIteration: false"] + reasons), "no_iteration_needed")
    elif needs is True:
        stop = StopRule(False, tuple(["needsIteration: true"] + reasons), None)
    else:
        stop = StopRule(None, tuple(["needsIteration missing"] + reasons), None)
    escalate = (strategy_type or "").lower() == "escalate" or (recommendation or "").lower() == "escalate"
    route = strategy_type or recommendation or ("accept" if needs is False else None)
    reason = (
        (
            "escalated to a person: "
            + (str(report.get("recommendation") or "") or f"strategy {strategy_type}, assessment {recommendation}")
        )
        if escalate
        else "; ".join(stop.reasons[:2])
    )
    points = tuple(
        TrendPoint(
            f"trigger {i} {t.get('type', '?')}",
            as_number(t.get("severity")),
            "fixable" if t.get("fixable") is True else "not fixable",
        )
        for i, t in enumerate(triggers, 1)
        if isinstance(t, dict)
    )
    return LoopState(
        kind="dag-iteration",
        name=str(report.get("taskId") or default_name),
        path=file,
        budget=budget,
        stop_rule=stop,
        route=route.lower() if isinstance(route, str) else route,
        trend=make_points_trend(points),
        waiting_for_human=escalate,
        reason=reason,
        parse_failures=tuple(failures),
        raw=report,
        status=str(decision.get("priority") or "unknown"),
        trend_label="trigger severity (0–1)",
        points=points,
        details={
            "priority": decision.get("priority"),
            "strategy": strategy_type,
            "assessment": recommendation,
            "fixability": fixability,
            "next_steps": as_list(report.get("nextSteps")),
        },
    )


# --------------------------------------------------------------------------- convergence monitor


def convergence_state(report: dict[str, Any], file: str, default_name: str) -> LoopState:
    failures: list[Problem] = []
    goal_block = as_dict(report.get("goal"))
    goal = {
        "targetQuality": configured_number(goal_block.get("targetQuality"), DEFAULT_TARGET),
        "acceptableQuality": configured_number(goal_block.get("acceptableQuality"), DEFAULT_ACCEPTABLE),
    }
    limit = configured_count(goal_block.get("maxIterations"), DEFAULT_MAX_ITERATIONS)
    history = report.get("qualityHistory")
    if history is None:
        history = []
    elif not isinstance(history, list):
        failures.append(Problem(file, None, "qualityHistory is not a list; ignored"))
        history = []
    points: list[TrendPoint] = []
    measured: list[QualityPoint] = []
    remaining_improvements = None
    for index, point in enumerate(history, 1):
        if not isinstance(point, dict):
            failures.append(Problem(file, None, f"qualityHistory[{index - 1}] is not a mapping; ignored"))
            continue
        q = as_number(point.get("qualityScore"))
        it = as_int(point.get("iteration")) or index
        left_items = as_int(point.get("improvementsRemaining"))
        points.append(
            TrendPoint(
                f"iteration {it}", q, f"{left_items} improvement(s) remaining" if left_items is not None else None
            )
        )
        if q is not None:
            measured.append(QualityPoint(it, q))
        remaining_improvements = left_items if left_items is not None else remaining_improvements
    current = as_int(report.get("currentIteration")) or (measured[-1].iteration if measured else len(points) or None)
    budget = Budget(current, limit, "iterations")
    trend = trend_analysis(measured, budget.left, goal["targetQuality"])
    quality = measured[-1].quality if measured else None
    monitor = monitor_recommendation(trend, quality, remaining_improvements, budget.left, goal["acceptableQuality"])
    action, why, converged = monitor.action, monitor.reason, monitor.converged
    own = report.get("recommendation")
    own_action = own.get("action") if isinstance(own, dict) else (own if isinstance(own, str) else None)
    if isinstance(own_action, str) and own_action.lower() not in ACTIONS:
        failures.append(Problem(file, None, f"unknown recommendation action {own_action!r} (kept)"))
    reasons = [
        f"quality {fmt_number(quality)} vs target {goal['targetQuality']:g} (acceptable {goal['acceptableQuality']:g})",
        f"{remaining_improvements if remaining_improvements is not None else '?'} improvement(s) remaining",
        f"trend {trend['direction']} (slope {trend['slope']:+.3f}){', plateauing' if trend['is_plateauing'] else ''}",
        f"monitor rule: {action} — {why}",
    ]
    if isinstance(own_action, str) and own_action.lower() != action:
        reasons.append(f"the report itself recommends {own_action}")
    stop = StopRule(
        converged or action in ("accept", "escalate", "abort"),
        tuple(reasons),
        "converged" if converged else (action if action != "continue" else None),
    )
    effective = (own_action or action).lower() if isinstance(own_action, str) else action
    waiting = effective in ("escalate", "abort") or action in ("escalate", "abort")
    reason = f"{'escalate' if waiting else effective}: {why}"
    return LoopState(
        kind="dag-convergence",
        name=str(report.get("taskId") or default_name),
        path=file,
        budget=budget,
        stop_rule=stop,
        route=effective,
        trend=make_points_trend(points),
        waiting_for_human=waiting,
        reason=reason,
        parse_failures=tuple(failures),
        raw=report,
        status="converged" if converged else trend["direction"],
        trend_label="quality score (0–1)",
        points=tuple(points),
        details={"goal": goal, "trend": trend, "recommendation": action, "report_recommendation": own_action},
    )

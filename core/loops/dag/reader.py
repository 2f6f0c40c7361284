"""DAG iteration-detector decisions and convergence-monitor reports (formats.md §5).

No file is mandated upstream: these are report shapes an agent emits as YAML, found by their
root key (``iterationDecision:`` / ``convergenceReport:``) in ``*.yaml`` files under a path
with ``dag`` in its name, or in a file named on the command line. The convergence rules of
§5.2 are evaluated from ``qualityHistory``; the report's own recommendation is shown beside
ours, never replaced by it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from scars.core.advice.advisor import report_triggers_as
from scars.core.advice.budget import budget_matrix
from scars.core.advice.fixable import FIXABILITY_MIN, fixability, improvement_assessment, seed_fixable
from scars.core.advice.model import QualityPoint
from scars.core.advice.trend import ACCEPTABLE_QUALITY, TARGET_QUALITY, below, monitor_recommendation, trend_analysis
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
    read_yaml,
    rel,
)
from scars.core.model import Problem
from scars.core.storage import safe_read
from scars.core.text import join_clauses
from scars.core.values import as_dict, as_list

ROOT_KEYS = ("iterationDecision", "convergenceReport")
ANSWERS_KEY = "humanDecisions"  # the answers of the dag-escalate gate, a root key after the report
_ROOT_LINE = re.compile(r"^(iterationDecision|convergenceReport)\s*:", re.MULTILINE)
PEEK_BYTES = 64 * 1024

# dag-convergence-monitor defaults (the seed's example goal); the monitor's thresholds and rules
# are scars.core.advice.trend's (one monitor for the DAG reports and the advisor).
DEFAULT_TARGET = TARGET_QUALITY
DEFAULT_ACCEPTABLE = ACCEPTABLE_QUALITY
DEFAULT_MAX_ITERATIONS = 5
STRATEGIES = ("retry", "refine", "expand", "simplify", "escalate")
ACTIONS = ("continue", "accept", "escalate", "abort")


def root_key(path: Path, root: Path | None = None) -> str | None:
    """The report's root key when the file starts a mapping with one (cheap peek, no parse), read
    by the read rule inside ``root`` (``storage/safe_read``; None: the report's own folder)."""
    try:
        fd = safe_read.open_file(path, root=path.parent if root is None else root, what="DAG report")
    except (OSError, safe_read.Unreadable):
        return None
    try:
        head = os.read(fd, PEEK_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)
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
            waiting_for_human=False,
            reason=f"unusable: {failure.message}",
            parse_failures=(failure,),
            status="unreadable",
        )
    # The dag-escalate gate's answers, appended as a root key beside the report (scars.core.gates.dag).
    answers = [d for d in as_list(data.get(ANSWERS_KEY)) if isinstance(d, dict)]
    if "convergenceReport" in data:
        return convergence_state(data["convergenceReport"], name, path.stem, answers)
    return decision_state(data["iterationDecision"], name, path.stem, answers)


# --------------------------------------------------------------------------- detector decision


_CODE = re.compile(r"\b(TYPE_MISMATCH|SCHEMA_VIOLATION|[A-Z][A-Z0-9]*_[A-Z0-9_]+)\b")
_FACTUAL = re.compile(r"factual|uncertain|verif", re.IGNORECASE)
_SYSTEMIC = re.compile(r"systemic|pervasive|throughout|across the (?:output|document)", re.IGNORECASE)


def report_triggers(raw: list[Any]) -> list[dict[str, Any]]:
    """The report's triggers with seed 000's fixability (a validation failure's error code decides,
    not its ``fixable`` flag) and the cause the decision tree branches on."""
    out = []
    for index, t in enumerate(raw, 1):
        if not isinstance(t, dict):
            continue
        kind = str(t.get("type") or "unknown")
        details = str(t.get("details") or "")
        code = t.get("code") or t.get("errorCode")
        if code is None and kind == "validation_failure":
            m = _CODE.search(details)
            code = m.group(1) if m else None
        written = t.get("fixable") is True
        fixable = seed_fixable(kind, str(code) if code is not None else None, written)
        cause = str(t.get("cause") or "")
        if not cause and kind == "low_confidence":
            cause = "factual_uncertainty" if _FACTUAL.search(details) else "missing_evidence"
        if not cause and kind == "hallucination_detected":
            claims = as_list(t.get("claims"))
            cause = "systemic" if (not claims and _SYSTEMIC.search(details)) else "specific_claims"
        out.append(
            {
                "index": index,
                "type": kind,
                "severity": as_number(t.get("severity")),
                "code": code,
                "fixable_written": written,
                "fixable": fixable,
                "cause": cause,
                "details": details,
            }
        )
    return out


def _estimated_tokens(report: dict[str, Any], budget: dict[str, Any]) -> float | None:
    """The estimated cost of the next iteration in tokens (seed 000 Example 2's "estimated fix
    cost"), when the report states one."""
    for holder in (budget, report):
        for key in ("estimatedTokens", "estimatedCost", "estimatedFixTokens"):
            value = holder.get(key)
            if isinstance(value, dict):
                value = value.get("tokens")
            number = as_number(value)
            if number is not None:
                return number
    return None


def decision_state(
    report: dict[str, Any], file: str, default_name: str, answers: list[dict[str, Any]] | None = None
) -> LoopState:
    failures: list[Problem] = []
    decision = as_dict(report.get("decision"))
    strategy = as_dict(report.get("strategy"))
    budget_block = as_dict(report.get("budget"))
    assessment = as_dict(report.get("assessment"))
    triggers = report_triggers(as_list(report.get("triggers")))
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
    if remaining is None and limit is not None and current is not None:
        remaining = max(limit - current, 0)
    budget = Budget(current, limit, "iterations")

    # The token budget: its share left, and whether the next iteration fits (Example 2).
    token_budget = as_number(budget_block.get("tokenBudget"))
    used_tokens = as_number(budget_block.get("usedTokens"))
    left_tokens = as_number(budget_block.get("remainingTokens"))
    if left_tokens is None and token_budget is not None and used_tokens is not None:
        left_tokens = token_budget - used_tokens
    token_share = left_tokens / token_budget if token_budget and left_tokens is not None else None
    estimate = _estimated_tokens(report, budget_block)
    insufficient = estimate is not None and left_tokens is not None and left_tokens < estimate

    severities = [t["severity"] for t in triggers if t["severity"] is not None]
    as_triggers = report_triggers_as(triggers)
    fx = fixability(as_triggers)
    qualities = [q for q in (as_number(v) for v in as_list(report.get("qualityScores"))) if q is not None]
    ours = improvement_assessment(qualities, as_triggers, remaining)
    matrix = budget_matrix(remaining, None, token_share) if remaining is not None else None

    reasons = [f"{len(triggers)} trigger(s)" + (f", max severity {fmt_number(max(severities))}" if severities else "")]
    overridden = [t for t in triggers if t["fixable"] != t["fixable_written"]]
    if fx is not None:
        reasons.append(
            f"fixability {fx:.2f}"
            + (f" < {FIXABILITY_MIN:g} → escalate" if below(fx, FIXABILITY_MIN) else "")
            + (f" (by error code: {', '.join(str(t['code']) for t in overridden)} not fixable)" if overridden else "")
        )
    escalations: list[str] = []
    if fx is not None and below(fx, FIXABILITY_MIN):
        escalations.append(f"fixability {fx:.2f} is under {FIXABILITY_MIN:g}")
    if matrix is not None and matrix[0] == "ESCALATE":
        escalations.append(f"budget matrix: {matrix[1]}")
    if insufficient:
        escalations.append(
            f"BUDGET_INSUFFICIENT: {fmt_number(left_tokens)} tokens left, the next iteration needs "
            f"{fmt_number(estimate)}"
        )
    if ours is not None:
        reasons.append(f"assessment (seed rule): {ours['recommendation']} — {ours['why']}")
        if ours["recommendation"] == "escalate":
            escalations.append(f"improvement assessment: {ours['why']}")
    if needs is False:
        stop = StopRule(True, tuple(["needsIteration: false"] + reasons), "no_iteration_needed")
    elif needs is True:
        stop = StopRule(False, tuple(["needsIteration: true"] + reasons + escalations), None)
    else:
        stop = StopRule(None, tuple(["needsIteration missing"] + reasons + escalations), None)
    own_escalate = (strategy_type or "").lower() == "escalate" or (recommendation or "").lower() == "escalate"
    escalate = needs is not False and (own_escalate or bool(escalations))
    answered = answers[-1] if answers else None
    route = strategy_type or recommendation or ("accept" if needs is False else None)
    if escalate:
        route = "escalate"
    if answered is not None:
        reason = (
            f"answered {answered.get('answer')} by {answered.get('decidedBy') or 'a person'} at the dag-escalate gate"
        )
    elif escalate:
        why = escalations or [
            str(report.get("recommendation") or "") or f"strategy {strategy_type}, assessment {recommendation}"
        ]
        reason = "ESCALATE to a person: " + join_clauses(why)
    else:
        reason = join_clauses(stop.reasons[:2])
    points = tuple(
        TrendPoint(
            f"trigger {t['index']} {t['type']}",
            t["severity"],
            "fixable" if t["fixable"] else "not fixable",
        )
        for t in triggers
    )
    return LoopState(
        kind="dag-iteration",
        name=str(report.get("taskId") or default_name),
        path=file,
        budget=budget,
        stop_rule=stop,
        route=route.lower() if isinstance(route, str) else route,
        waiting_for_human=escalate and answered is None,
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
            "report_assessment": assessment or None,
            "improvement_assessment": ours,
            "fixability": fx,
            "triggers": triggers,
            "remaining_iterations": remaining,
            "token_share_left": token_share,
            "tokens_left": left_tokens,
            "estimated_tokens": estimate,
            "budget_insufficient": insufficient,
            "budget_matrix": list(matrix) if matrix else None,
            "escalations": escalations,
            "answered": answered,
            "next_steps": as_list(report.get("nextSteps")),
        },
    )


# --------------------------------------------------------------------------- convergence monitor


def convergence_state(
    report: dict[str, Any], file: str, default_name: str, answers: list[dict[str, Any]] | None = None
) -> LoopState:
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
    per_point: list[dict[str, Any]] = []  # the history as the advisor takes it (counts, strategies)
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
        resolved = as_int(point.get("improvementsResolved"))
        strategy = point.get("strategy") or point.get("strategyType")
        if isinstance(strategy, dict):
            strategy = strategy.get("type")
        if q is not None:
            measured.append(QualityPoint(it, q, improvements_remaining=left_items, improvements_resolved=resolved))
            per_point.append(
                {
                    "iteration": it,
                    "quality": q,
                    "improvements_remaining": left_items,
                    "improvements_resolved": resolved,
                    "strategy": str(strategy) if isinstance(strategy, str) and strategy else None,
                }
            )
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
    escalated = effective in ("escalate", "abort") or action in ("escalate", "abort")
    answered = answers[-1] if answers else None
    waiting = escalated and answered is None
    if answered is not None and escalated:
        reason = (
            f"answered {answered.get('answer')} by {answered.get('decidedBy') or 'a person'} at the dag-escalate gate"
        )
    else:
        reason = f"{'escalate' if escalated else effective}: {why}"
    return LoopState(
        kind="dag-convergence",
        name=str(report.get("taskId") or default_name),
        path=file,
        budget=budget,
        stop_rule=stop,
        route=effective if not escalated or effective in ("escalate", "abort") else "escalate",
        waiting_for_human=waiting,
        reason=reason,
        parse_failures=tuple(failures),
        raw=report,
        status="converged" if converged else trend["direction"],
        trend_label="quality score (0–1)",
        points=tuple(points),
        details={
            "goal": goal,
            "trend": trend,
            "recommendation": action,
            "report_recommendation": own_action,
            "improvements_remaining": remaining_improvements,
            "history": per_point,
            "escalated": escalated,
            "answered": answered,
        },
    )

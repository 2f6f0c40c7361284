"""bkit PDCA iterator state (popup-studio-ai/bkit-claude-code): formats.md §4.

Reads ``.bkit/state/pdca-status.json`` (or the legacy ``docs/.pdca-status.json``): one
:class:`LoopState` per feature, and ``.bkit/state/sprints/*.json``: one per sprint with its
``iterateHistory``. Rules: pass at Match Rate ≥ 90 %, 5 iterations (10 for critical work,
``bkit.config.json`` ``pdca.maxIterations`` overrides), stop after 3 iterations without
improvement. An ``iterationCount`` above the limit is shown as such, never rejected; a
``matchRate`` of null means *not measured* and is never read as 100.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
    read_json,
    rel,
)
from scars.core.model import Problem
from scars.core.values import as_dict, as_list

MATCH_RATE_THRESHOLD = 90.0
DEFAULT_MAX_ITERATIONS = 5
CRITICAL_MAX_ITERATIONS = 10
NO_IMPROVEMENT_LIMIT = 3
SPRINT_TARGET = 100.0
SPRINT_MIN_ACCEPTABLE = 90.0
DONE_PHASES = ("completed", "archived", "report")

CURRENT_STATUS = Path(".bkit/state/pdca-status.json")
LEGACY_STATUS = Path("docs/.pdca-status.json")
SPRINTS_DIR = Path(".bkit/state/sprints")


def status_files(project: Path) -> list[Path]:
    """The project's PDCA status file: the current one, else the legacy one."""
    for candidate in (project / CURRENT_STATUS, project / LEGACY_STATUS):
        if candidate.is_file() or candidate.is_symlink():
            return [candidate]
    return []


def sprint_files(project: Path) -> list[Path]:
    """The project's sprint state files (``.bkit/state/sprints/*.json``), by name."""
    directory = project / SPRINTS_DIR
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.glob("*.json") if p.is_file() or p.is_symlink())


def project_of(path: Path) -> Path:
    """The project directory of a status or sprint file."""
    parts = path.parts
    if path.name == ".pdca-status.json" and path.parent.name == "docs":
        return path.parent.parent
    if ".bkit" in parts:
        index = len(parts) - 1 - parts[::-1].index(".bkit")
        return Path(*parts[:index]) if index else Path(".")
    return path.parent


def read_config(project: Path, root: Path) -> tuple[dict[str, Any], list[Problem]]:
    """``bkit.config.json`` ``pdca`` settings (threshold, max iterations), when present."""
    path = project / "bkit.config.json"
    if not (path.is_file() or path.is_symlink()):
        return {}, []
    data, failure = read_json(path, root)
    if failure is not None:
        return {}, [failure]
    pdca = data.get("pdca") if isinstance(data, dict) else None
    return (pdca if isinstance(pdca, dict) else {}), []


def pdca_settings(config: dict[str, Any]) -> tuple[float, int]:
    """(Match Rate threshold, max iterations) of a ``bkit.config.json`` ``pdca`` object.

    A configured value is used exactly as written: a fractional threshold stays fractional and
    0 stays 0. Only an absent value, or one that is not a number (a non-whole count for
    ``maxIterations``), falls back to 90 % and 5. Every reader of bkit state (``scars loops``,
    the ``pdca-continue`` gate, the advisor) takes its threshold from here.
    """
    return (
        configured_number(config.get("matchRateThreshold"), MATCH_RATE_THRESHOLD),
        configured_count(config.get("maxIterations"), DEFAULT_MAX_ITERATIONS),
    )


def match_rate_met(rate: float | None, threshold: float) -> bool:
    """bkit's pass rule: a measured Match Rate at or above the threshold (unmeasured never passes)."""
    return rate is not None and rate >= threshold


def no_improvement_run(rates: list[float | None]) -> int:
    """Trailing count of measured iterations whose rate did not rise above the one before."""
    measured = [r for r in rates if r is not None]
    run = 0
    for before, after in zip(measured, measured[1:]):
        run = run + 1 if after <= before else 0
    return run


def read_status(path: Path, root: Path | None = None) -> list[LoopState]:
    """Every feature of a pdca-status.json. Never raises on bad input."""
    path = Path(path)
    project = project_of(path)
    root = Path(root) if root is not None else project
    name = rel(path, root)
    config, failures = read_config(project, root)
    data, failure = read_json(path, root)
    if failure is None and not isinstance(data, dict):
        failure = Problem(name, None, "pdca-status.json is not a JSON object")
    if failure is None and not isinstance(data.get("features"), dict):
        failure = Problem(name, None, "pdca-status.json has no `features` object")
    if failure is not None:
        return [
            LoopState(
                kind="bkit",
                name=name,
                path=name,
                budget=Budget(None, None),
                stop_rule=StopRule(None, ("status file unusable",)),
                route=None,
                trend=(),
                waiting_for_human=False,
                reason=f"unusable: {failure.message}",
                parse_failures=tuple(failures + [failure]),
                status="unreadable",
            )
        ]
    threshold, limit = pdca_settings(config)
    states = []
    for feature, entry in data["features"].items():
        states.append(_feature_state(str(feature), entry, name, threshold, limit, failures, data))
    return states


def _feature_state(
    feature: str,
    entry: Any,
    file: str,
    threshold: float,
    default_limit: int,
    file_failures: list[Problem],
    document: dict[str, Any],
) -> LoopState:
    failures = list(file_failures)
    if not isinstance(entry, dict):
        failures.append(Problem(file, None, f"features[{feature!r}] is not an object"))
        entry = {}
    phase = entry.get("phase") if isinstance(entry.get("phase"), str) else None
    rate = as_number(entry.get("matchRate"))
    if entry.get("matchRate") is not None and rate is None:
        failures.append(
            Problem(file, None, f"features[{feature!r}].matchRate {entry.get('matchRate')!r} is not a number")
        )
    count = as_int(entry.get("iterationCount"))
    if entry.get("iterationCount") is not None and count is None:
        failures.append(
            Problem(file, None, f"features[{feature!r}].iterationCount {entry.get('iterationCount')!r} is not a count")
        )
    limit = configured_count(entry.get("maxIterations"), default_limit)
    budget = Budget(count if count is not None else 0, limit, "iterations")
    machine = as_dict(entry.get("stateMachine"))
    breaker = machine.get("circuitBreakerOpen") is True

    reasons = []
    passes = match_rate_met(rate, threshold)
    if rate is None:
        reasons.append("match rate not measured")
    else:
        reasons.append(f"match rate {fmt_number(rate)}% {'≥' if passes else '<'} {fmt_number(threshold)}%")
    if budget.over:
        reasons.append(
            f"iterationCount {count} is above the nominal limit {limit} "
            f"(critical work allows {CRITICAL_MAX_ITERATIONS})"
        )
    if passes:
        stop = StopRule(True, tuple(reasons), "success")
    elif budget.spent:
        stop = StopRule(True, tuple(reasons + [f"max iterations reached ({count}/{limit})"]), "failure")
    elif phase in ("completed", "archived"):
        stop = StopRule(True, tuple(reasons + [f"phase {phase}"]), "completed")
    else:
        stop = StopRule(False, tuple(reasons + [budget.describe()]), None)

    waiting = False
    if breaker:
        waiting, reason = True, "circuit breaker open: the state machine stopped retrying"
    elif stop.outcome == "failure":
        waiting = True
        reason = (
            f"iteration limit spent ({count}/{limit}) with match rate "
            f"{fmt_number(rate) + '%' if rate is not None else 'not measured'} below {fmt_number(threshold)}%: "
            "a person decides (raise the limit for critical work, or accept PARTIAL)"
        )
    elif stop.met:
        reason = "; ".join(stop.reasons[:2])
    else:
        reason = f"phase {phase or 'unknown'}; " + "; ".join(stop.reasons)

    route: str | None
    if phase in ("completed", "archived"):
        route = "done"
    elif stop.outcome == "success":
        route = "report"
    elif stop.outcome == "failure":
        route = "stop"
    elif phase in ("check", "act"):
        route = "iterate"
    else:
        route = phase
    label = f"iteration {count}" if count is not None else "latest"
    points = (TrendPoint(label, rate, phase),)
    details = {
        "feature": feature,
        "phase": phase,
        "phase_number": entry.get("phaseNumber"),
        "match_rate": rate,
        "threshold": threshold,
        "match_rate_met": passes,
        "iteration_count": count,
        "critical_limit": CRITICAL_MAX_ITERATIONS,
        "last_iteration_status": entry.get("lastIterationStatus"),
        "circuit_breaker_open": breaker,
        "primary": document.get("primaryFeature") == feature,
        "active": feature in (document.get("activeFeatures") or [])
        if isinstance(document.get("activeFeatures"), list)
        else False,
        "version": document.get("version"),
    }
    return LoopState(
        kind="bkit",
        name=feature,
        path=file,
        budget=budget,
        stop_rule=stop,
        route=route,
        trend=make_points_trend(points),
        waiting_for_human=waiting,
        reason=reason,
        parse_failures=tuple(failures),
        raw=entry,
        status=phase or "unknown",
        trend_label="match rate %",
        points=points,
        details=details,
    )


def _find_key(value: Any, key: str, depth: int = 0) -> tuple[Any, dict[str, Any] | None]:
    """The first ``key`` in nested objects (breadth first, bounded), and its parent object."""
    if depth > 4 or not isinstance(value, dict):
        return None, None
    if key in value:
        return value[key], value
    for child in value.values():
        found, parent = _find_key(child, key, depth + 1)
        if parent is not None:
            return found, parent
    return None, None


def sprint_features(data: dict[str, Any]) -> list[str]:
    """The features a sprint covers: its ``features`` list and its ``feature``."""
    names = [str(f) for f in as_list(data.get("features")) if isinstance(f, str)]
    if isinstance(data.get("feature"), str) and data["feature"] not in names:
        names.append(data["feature"])
    return names


def read_sprint(path: Path, root: Path | None = None) -> LoopState:
    """One sprint file and its ``iterateHistory``. Never raises on bad input."""
    path = Path(path)
    root = Path(root) if root is not None else project_of(path)
    name = rel(path, root)
    data, failure = read_json(path, root)
    if failure is None and not isinstance(data, dict):
        failure = Problem(name, None, "sprint file is not a JSON object")
    sprint_id = path.stem
    if failure is not None:
        return LoopState(
            kind="bkit-sprint",
            name=sprint_id,
            path=name,
            budget=Budget(None, None),
            stop_rule=StopRule(None, ("sprint file unusable",)),
            route=None,
            trend=(),
            waiting_for_human=False,
            reason=f"unusable: {failure.message}",
            parse_failures=(failure,),
            status="unreadable",
        )
    failures: list[Problem] = []
    sprint_id = str(data.get("id") or data.get("sprintId") or sprint_id)
    history, holder = _find_key(data, "iterateHistory")
    if history is None:
        history = []
    elif not isinstance(history, list):
        failures.append(Problem(name, None, "iterateHistory is not a list; ignored"))
        history = []
    config, _ = _find_key(data, "config")
    config = config if isinstance(config, dict) else {}
    limit = configured_count(config.get("maxIterations"), DEFAULT_MAX_ITERATIONS)
    target = configured_number(config.get("matchRateTarget"), SPRINT_TARGET)
    minimum = configured_number(config.get("matchRateMinAcceptable"), SPRINT_MIN_ACCEPTABLE)
    points = []
    rates: list[float | None] = []
    for index, entry in enumerate(history, 1):
        if not isinstance(entry, dict):
            failures.append(Problem(name, None, f"iterateHistory[{index - 1}] is not an object; ignored"))
            continue
        rate = as_number(entry.get("matchRate"))
        rates.append(rate)
        fixed = as_list(entry.get("fixedTaskIds"))
        points.append(
            TrendPoint(
                f"iteration {as_int(entry.get('iteration')) or index}",
                rate,
                f"{len(fixed)} task(s) fixed" if fixed else None,
            )
        )
    used = len(points)
    budget = Budget(used, limit, "iterations")
    latest = next((r for r in reversed(rates) if r is not None), None)
    flat = no_improvement_run(rates)
    blocked = (holder or {}).get("blocked") is True or data.get("blocked") is True
    reasons = [f"latest match rate {fmt_number(latest)}%" if latest is not None else "match rate not measured"]
    if match_rate_met(latest, target):
        stop = StopRule(True, tuple(reasons + [f"target {fmt_number(target)}% reached"]), "success")
    elif budget.spent:
        ok = match_rate_met(latest, minimum)
        stop = StopRule(
            True,
            tuple(
                reasons
                + [
                    f"max iterations reached ({used}/{limit})",
                    f"{'at or above' if ok else 'below'} the minimum {fmt_number(minimum)}%",
                ]
            ),
            "partial" if ok else "iteration_exhausted",
        )
    elif flat >= NO_IMPROVEMENT_LIMIT:
        stop = StopRule(True, tuple(reasons + [f"no improvement for {flat} consecutive iterations"]), "no_improvement")
    else:
        stop = StopRule(False, tuple(reasons + [budget.describe()]), None)
    waiting = blocked or stop.outcome in ("iteration_exhausted", "no_improvement")
    if blocked or stop.outcome == "iteration_exhausted":
        reason = f"blocked: ITERATION_EXHAUSTED below {fmt_number(minimum)}% — a person decides"
    elif stop.outcome == "no_improvement":
        reason = f"no improvement for {flat} iterations: a person decides"
    else:
        reason = "; ".join(stop.reasons)
    route = "done" if stop.met and not waiting else ("paused" if waiting else "iterate")
    return LoopState(
        kind="bkit-sprint",
        name=sprint_id,
        path=name,
        budget=budget,
        stop_rule=stop,
        route=route,
        trend=make_points_trend(points),
        waiting_for_human=waiting,
        reason=reason,
        parse_failures=tuple(failures),
        raw=data,
        status=str(data.get("status") or data.get("phase") or "unknown"),
        trend_label="match rate %",
        points=tuple(points),
        details={
            "target": target,
            "min_acceptable": minimum,
            "blocked": blocked,
            "no_improvement_run": flat,
            "features": sprint_features(data),
        },
    )

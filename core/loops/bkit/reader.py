"""bkit PDCA iterator state (popup-studio-ai/bkit-claude-code): formats.md §4.

Reads ``.bkit/state/pdca-status.json`` (or the legacy ``docs/.pdca-status.json``): one
:class:`LoopState` per feature, and ``.bkit/state/sprints/*.json``: one per sprint with its
``iterateHistory``. Rules, as bkit's own code has them: pass at Match Rate ≥ 90 %
(``bkit.config.json`` ``pdca.matchRateThreshold``); the iteration limit is the one bkit's state
machine enforces — ``guardrails.loopBreaker.maxPdcaIterations`` (5), read by
``lib/pdca/state-machine.js`` for its ``guardCanIterate`` / ``guardMaxIterReached`` guards —
beside the iterator's own ``pdca.maxIterations`` (5, its "Maximum iterations reached" prompt);
stop after 3 iterations without improvement. An ``iterationCount`` above the limit is shown as
such, never rejected; a ``matchRate`` of null means *not measured* and is never read as 100. A
sprint is waiting when bkit auto-paused it (``status: paused``; the trigger and its user
actions in ``autoPause``) or when one of bkit's armed auto-pause triggers fires.
"""

from __future__ import annotations

from datetime import datetime
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
    now_utc,
    parse_time,
    read_json,
    rel,
)
from scars.core.model import Problem
from scars.core.records import replace
from scars.core.storage import safe_read
from scars.core.text import join_clauses
from scars.core.values import as_dict, as_list

MATCH_RATE_THRESHOLD = 90.0
DEFAULT_MAX_ITERATIONS = 5
# The agent's ceiling for critical work (seed 001: CRITICAL_MAX_ITERATIONS = 10, reached through
# `/pdca-iterate <feature> --max-iterations N`): shown, never enforced — bkit's state machine
# enforces its configured loop-breaker limit.
CRITICAL_MAX_ITERATIONS = 10
NO_IMPROVEMENT_LIMIT = 3
SPRINT_TARGET = 100.0
SPRINT_MIN_ACCEPTABLE = 90.0
# Phases after the PDCA iteration: QA (MATCH_PASS), the report, completed, archived.
DONE_PHASES = ("qa", "report", "completed", "archived")

# lib/pdca/phase.js getPhaseNumber (completed is not a phase there: 0).
PHASE_NUMBERS: dict[str, int] = {
    "pm": 0,
    "plan": 1,
    "design": 2,
    "do": 3,
    "check": 4,
    "act": 5,
    "qa": 6,
    "report": 7,
    "archived": 8,
}
# What scripts/iterator-stop.js writes as lastIterationStatus (scars never writes it).
ITERATOR_STATUSES = ("in_progress", "completed", "max_iterations", "improved", "unknown")

# The transitions of lib/pdca/state-transitions.js a gate answer takes: (from, event) -> (to, guard).
TRANSITIONS: dict[tuple[str, str], tuple[str, str | None]] = {
    ("check", "ITERATE"): ("act", "guardCanIterate"),
    ("act", "ANALYZE_DONE"): ("check", None),
    ("check", "MATCH_PASS"): ("qa", "guardMatchRatePass"),
    ("check", "REPORT_DONE"): ("report", "guardMaxIterReached"),
    ("*", "ABANDON"): ("archived", None),
}


def can_iterate(count: int, limit: int) -> bool:
    """bkit's ``guardCanIterate`` (lib/pdca/state-transitions.js): ``iterationCount`` below the
    loop-breaker limit. Its complement is ``guardMaxIterReached`` (``count >= limit``): the state
    machine allows ITERATE exactly while it refuses the forced REPORT_DONE. The one rule of the
    iteration limit: the transitions below and the gates (``at_limit``) both ask it."""
    return count < limit


def pdca_transition(
    phase: str | None,
    event: str,
    count: int,
    limit: int,
    rate: float | None = None,
    threshold: float = MATCH_RATE_THRESHOLD,
) -> tuple[str | None, str | None]:
    """(target phase, None), or (None, why bkit refuses): bkit's ``findTransition`` (exact, then
    wildcard) and the transition's guard, for a feature at ``count`` of ``limit`` iterations with
    Match Rate ``rate``."""
    entry = TRANSITIONS.get((phase or "idle", event)) or TRANSITIONS.get(("*", event))
    if entry is None:
        return None, f"bkit's state machine has no {event} transition from {phase or 'idle'}"
    target, guard = entry
    if guard == "guardCanIterate" and not can_iterate(count, limit):
        return None, f"guardCanIterate: iterationCount {count} is not below the limit {limit}"
    if guard == "guardMaxIterReached" and can_iterate(count, limit):
        return None, f"guardMaxIterReached: iterationCount {count} is below the limit {limit}"
    if guard == "guardMatchRatePass" and not match_rate_met(rate, threshold):
        return None, f"guardMatchRatePass: Match Rate {fmt_number(rate)} is below {fmt_number(threshold)}"
    return target, None


def transition_path(
    phase: str | None, event: str, count: int, limit: int, rate: float | None, threshold: float
) -> tuple[list[tuple[str, str, str]], str | None]:
    """The steps to take ``event`` from ``phase``: from act through check first (ANALYZE_DONE: the
    act iteration is done). ([(event, from, to)], None) or ([], why bkit refuses). REPORT_DONE is
    the forced report (max iterations reached), MATCH_PASS the success path (check → qa)."""
    steps: list[tuple[str, str, str]] = []
    current = phase
    if current == "act":
        steps.append(("ANALYZE_DONE", "act", "check"))
        current = "check"
    target, why = pdca_transition(current, event, count, limit, rate, threshold)
    if target is None:
        return [], why
    steps.append((event, str(current), target))
    return steps, None


# The history entry a human gate answer appends (bkit's addPdcaHistory takes any entry); the
# reader finds the answer there while the feature's state is the one it answered.
GATE_HISTORY_ACTION = "human_gate"


def answered_gate(document: dict[str, Any], feature: str, entry: dict[str, Any]) -> dict[str, Any] | None:
    """The human gate answer that still stands for ``feature``: its latest history entry, when it
    is a gate answer recorded at the feature's current phase, iteration count and match rate."""
    for item in reversed(as_list(document.get("history"))):
        if not isinstance(item, dict) or item.get("feature") != feature:
            continue
        if item.get("action") != GATE_HISTORY_ACTION:
            return None
        same = (
            item.get("phase") == entry.get("phase")
            and item.get("iterationCount") == entry.get("iterationCount")
            and item.get("matchRate") == entry.get("matchRate")
        )
        return item if same else None
    return None


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
    """The project's sprint state files (``.bkit/state/sprints/*.json``), by name. The folder is
    listed by the read rule: one leading out of the project raises ``safe_read.Unreadable``."""
    directory = project / SPRINTS_DIR
    if not directory.is_dir():
        return []
    names = safe_read.list_dir(directory, root=project, what=str(SPRINTS_DIR))
    return sorted(p for p in (directory / n for n in names if n.endswith(".json")) if p.is_file() or p.is_symlink())


# bkit up to v2.0 kept its status at docs/.pdca-status.json; the current lib (core/paths.js
# STATE_PATHS.pdcaStatus) reads only .bkit/state/pdca-status.json and neither reads nor migrates
# the old file (LEGACY_PATHS, "deprecated"). scars shows such a file, marked, and writes no gate
# into it: an answer written there is one bkit never reads back.
LEGACY_FORMAT = "bkit v1.5–2.0 (docs/.pdca-status.json)"
LEGACY_NOTICE = (
    "bkit v1.5–2.0 status file: the current bkit neither reads nor migrates docs/.pdca-status.json "
    "(it reads .bkit/state/pdca-status.json); shown read-only, no gate is written into it"
)


def is_legacy_status(path: Path) -> bool:
    """True for bkit's v1.5–2.0 status file (``docs/.pdca-status.json``), by where it lives."""
    return path.name == LEGACY_STATUS.name and path.parent.name == LEGACY_STATUS.parent.name


def project_of(path: Path) -> Path:
    """The project directory of a status or sprint file."""
    parts = path.parts
    if is_legacy_status(path):
        return path.parent.parent
    if ".bkit" in parts:
        index = len(parts) - 1 - parts[::-1].index(".bkit")
        return Path(*parts[:index]) if index else Path(".")
    return path.parent


def read_config(project: Path, root: Path) -> tuple[dict[str, Any], list[Problem]]:
    """The project's ``bkit.config.json`` (the object; {} when absent or unusable)."""
    path = project / "bkit.config.json"
    if not (path.is_file() or path.is_symlink()):
        return {}, []
    data, failure = read_json(path, root)
    if failure is not None:
        return {}, [failure]
    return (data if isinstance(data, dict) else {}), []


def pdca_settings(config: dict[str, Any]) -> tuple[float, int]:
    """(Match Rate threshold, the iterator's max iterations) of a ``bkit.config.json`` ``pdca`` object.

    A configured value is used exactly as written: a fractional threshold stays fractional and
    0 stays 0. Only an absent value, or one that is not a number (a non-whole count for
    ``maxIterations``), falls back to 90 % and 5. Every reader of bkit state (``scars loops``,
    the ``pdca-continue`` gate, the advisor) takes its threshold from here.
    """
    return (
        configured_number(config.get("matchRateThreshold"), MATCH_RATE_THRESHOLD),
        configured_count(config.get("maxIterations"), DEFAULT_MAX_ITERATIONS),
    )


def loop_breaker_limit(config: dict[str, Any]) -> int:
    """``guardrails.loopBreaker.maxPdcaIterations`` (5): the iteration limit bkit's state machine
    loads into every context (``createContext`` / ``loadContext``) and its guards compare with."""
    breaker = as_dict(as_dict(config.get("guardrails")).get("loopBreaker"))
    return configured_count(breaker.get("maxPdcaIterations"), DEFAULT_MAX_ITERATIONS)


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
                waiting_for_human=False,
                reason=f"unusable: {failure.message}",
                parse_failures=tuple(failures + [failure]),
                status="unreadable",
            )
        ]
    threshold, iterator_max = pdca_settings(as_dict(config.get("pdca")))
    limit = loop_breaker_limit(config)
    legacy = project / LEGACY_STATUS
    is_legacy = is_legacy_status(path)
    if is_legacy:
        failures.append(Problem(name, None, LEGACY_NOTICE, severity="warning"))
    elif path == project / CURRENT_STATUS and (legacy.is_file() or legacy.is_symlink()):
        failures.append(
            Problem(
                rel(legacy, root),
                None,
                "the legacy status file is not read: bkit reads .bkit/state/pdca-status.json when both exist",
            )
        )
    states = []
    for index, (feature, entry) in enumerate(data["features"].items()):
        # The file's own problems are said once, with its first feature (not once per feature);
        # every feature keeps them in ``details["file_problems"]`` for its gate.
        shown = failures if index == 0 else []
        state = _feature_state(str(feature), entry, name, threshold, limit, iterator_max, shown, data)
        state.details["file_problems"] = tuple(failures)
        if is_legacy:
            state = _as_legacy(state)
        states.append(state)
    return states


def _as_legacy(state: LoopState) -> LoopState:
    """A feature of a v1.5–2.0 file: marked, waiting for nobody (no gate writes there)."""
    state.details["format"] = LEGACY_FORMAT
    return replace(state, waiting_for_human=False, reason=f"{LEGACY_FORMAT}, read-only: {state.reason}")


def _feature_state(
    feature: str,
    entry: Any,
    file: str,
    threshold: float,
    limit: int,
    iterator_max: int,
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
    budget = Budget(count if count is not None else 0, limit, "iterations")
    machine = as_dict(entry.get("stateMachine"))
    breaker = machine.get("circuitBreakerOpen") is True
    answered = answered_gate(document, feature, entry)
    status_value = entry.get("lastIterationStatus")
    if status_value is not None and status_value not in ITERATOR_STATUSES:
        failures.append(
            Problem(
                file,
                None,
                f"features[{feature!r}].lastIterationStatus {status_value!r} is not a value bkit's iterator writes (kept)",
            )
        )

    reasons = []
    passes = match_rate_met(rate, threshold)
    if rate is None:
        reasons.append("match rate not measured")
    else:
        reasons.append(f"match rate {fmt_number(rate)}% {'≥' if passes else '<'} {fmt_number(threshold)}%")
    if budget.over:
        reasons.append(f"iterationCount {count} is above the state machine's limit {limit}")
    if phase in DONE_PHASES:
        stop = StopRule(True, tuple(reasons + [f"phase {phase}"]), "success" if passes else "completed")
    elif passes:
        stop = StopRule(True, tuple(reasons), "success")
    elif budget.spent:
        stop = StopRule(True, tuple(reasons + [f"max iterations reached ({count}/{limit})"]), "failure")
    else:
        stop = StopRule(False, tuple(reasons + [budget.describe()]), None)

    waiting = False
    if breaker:
        waiting, reason = True, "circuit breaker open: the state machine stopped retrying"
    elif phase in DONE_PHASES:
        reason = f"phase {phase}: nothing waits"
    elif answered is not None:
        reason = (
            f"answered {answered.get('answer')} at the {answered.get('gate')} gate by "
            f"{answered.get('decidedBy') or 'a person'}; waits for the next analysis"
        )
    elif stop.outcome == "failure":
        waiting = True
        reason = (
            f"iteration limit spent ({count}/{limit}) with match rate "
            f"{fmt_number(rate) + '%' if rate is not None else 'not measured'} below {fmt_number(threshold)}%: "
            "bkit asks how to proceed (manual fix, complete as-is, update design)"
        )
    elif stop.met:
        reason = join_clauses(stop.reasons[:2])
    else:
        reason = f"phase {phase or 'unknown'}; " + join_clauses(stop.reasons)

    route: str | None
    if phase in DONE_PHASES:
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
        "limit": limit,
        "limit_source": "guardrails.loopBreaker.maxPdcaIterations",
        "iterator_max": iterator_max,
        "critical_limit": CRITICAL_MAX_ITERATIONS,
        "last_iteration_status": entry.get("lastIterationStatus"),
        "answered_gate": answered,
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


# lib/application/sprint-lifecycle/auto-pause.js: the four armed triggers and their user actions,
# and quality-gates.js: the gates active in each sprint phase.
AUTO_PAUSE_ACTIONS: dict[str, tuple[str, ...]] = {
    "QUALITY_GATE_FAIL": ("fix & resume", "forward fix", "abort sprint"),
    "ITERATION_EXHAUSTED": ("forward fix", "carry to next sprint", "abort"),
    "BUDGET_EXCEEDED": ("increase budget & resume", "abort with partial report", "archive as-is"),
    "PHASE_TIMEOUT": ("extend timeout & resume", "force-advance phase", "abort"),
}
SPRINT_DEFAULT_BUDGET = 1_000_000
SPRINT_DEFAULT_TIMEOUT_HOURS = 4.0
ACTIVE_GATES_BY_PHASE: dict[str, tuple[str, ...]] = {
    "prd": (),
    "plan": ("M8",),
    "design": ("M4", "M8"),
    "do": ("M1", "M2", "M3", "M4", "M5", "M7"),
    "iterate": ("M1", "M2", "M3", "M5", "M7"),
    "qa": ("M1", "M2", "M3", "M4", "M5", "M7", "S1", "S2"),
    "report": ("M1", "M2", "M3", "M4", "M5", "M7", "M8", "M10", "S1", "S2", "S4"),
    "archived": (),
}
GATE_FIELDS: dict[str, str] = {
    "M1": "M1_matchRate",
    "M2": "M2_codeQualityScore",
    "M3": "M3_criticalIssueCount",
    "M4": "M4_apiComplianceRate",
    "M5": "M5_runtimeErrorRate",
    "M7": "M7_conventionCompliance",
    "M8": "M8_designCompleteness",
    "M10": "M10_pdcaCycleTimeHours",
    "S1": "S1_dataFlowIntegrity",
    "S2": "S2_featureCompletion",
    "S4": "S4_archiveReadiness",
}
# lib/application/sprint-lifecycle/transitions.js: the forward phase of each sprint phase.
SPRINT_NEXT_PHASE: dict[str, str] = {
    "prd": "plan",
    "plan": "design",
    "design": "do",
    "do": "iterate",
    "iterate": "qa",
    "qa": "report",
    "report": "archived",
}


def _positive(value: Any, default: float) -> float:
    """JavaScript's ``value || default`` for a configured number (0, null and absent → default)."""
    number = as_number(value)
    return number if number else default


def sprint_triggers(data: dict[str, Any], now: datetime | None = None) -> list[dict[str, Any]]:
    """The armed auto-pause triggers that fire on ``data`` (bkit's ``checkAutoPauseTriggers``):
    ``{trigger, message, user_actions}`` each, in the armed order."""
    found, _ = _find_key(data, "config")
    config = as_dict(found)
    kpi = as_dict(data.get("kpi"))
    armed = as_dict(data.get("autoPause")).get("armed")
    order = armed if isinstance(armed, list) else list(AUTO_PAUSE_ACTIONS)
    hits = []
    for trigger in order:
        if trigger not in AUTO_PAUSE_ACTIONS:
            continue
        message = None
        if trigger == "QUALITY_GATE_FAIL":
            gates = as_dict(data.get("qualityGates"))
            failing = [
                g
                for g in ACTIVE_GATES_BY_PHASE.get(str(data.get("phase")), ())
                if as_dict(gates.get(GATE_FIELDS[g])).get("passed") is False
            ]
            if failing:
                message = "Quality Gate fail: " + ", ".join(failing)
        elif trigger == "ITERATION_EXHAUSTED":
            # bkit's sprint keeps iterateHistory and kpi at the top; older files nest them.
            history, _ = _find_key(data, "iterateHistory")
            entries = [e for e in as_list(history) if isinstance(e, dict)]
            used = len(entries)
            limit = _positive(config.get("maxIterations"), DEFAULT_MAX_ITERATIONS)
            minimum = _positive(config.get("matchRateMinAcceptable"), SPRINT_MIN_ACCEPTABLE)
            measured = [r for r in (as_number(e.get("matchRate")) for e in entries) if r is not None]
            rate = as_number(kpi.get("matchRate")) if "matchRate" in kpi else (measured[-1] if measured else None)
            if used >= limit and (rate is None or rate < minimum):
                shown = "--" if rate is None else f"{fmt_number(rate)}%"
                message = f"Iteration {used}/{fmt_number(limit)} exhausted, matchRate {shown} < min acceptable"
        elif trigger == "BUDGET_EXCEEDED":
            used_tokens = as_number(kpi.get("cumulativeTokens")) or 0
            budget = _positive(config.get("budget"), SPRINT_DEFAULT_BUDGET)
            if used_tokens > budget:
                message = f"Cumulative tokens {fmt_number(used_tokens)} > budget {fmt_number(budget)}"
        elif trigger == "PHASE_TIMEOUT":
            history = [h for h in as_list(data.get("phaseHistory")) if isinstance(h, dict)]
            last = history[-1] if history else {}
            entered = parse_time(last.get("enteredAt"))
            hours = _positive(config.get("phaseTimeoutHours"), SPRINT_DEFAULT_TIMEOUT_HOURS)
            moment = now or now_utc()
            if entered is not None and not last.get("exitedAt") and (moment - entered).total_seconds() > hours * 3600:
                message = f"Phase {data.get('phase') or 'unknown'} elapsed > {fmt_number(hours)}h timeout"
        if message is not None:
            hits.append({"trigger": trigger, "message": message, "user_actions": list(AUTO_PAUSE_ACTIONS[trigger])})
    return hits


def sprint_features(data: dict[str, Any]) -> list[str]:
    """The features a sprint covers: its ``features`` list and its ``feature``."""
    names = [str(f) for f in as_list(data.get("features")) if isinstance(f, str)]
    if isinstance(data.get("feature"), str) and data["feature"] not in names:
        names.append(data["feature"])
    return names


def read_sprint(path: Path, root: Path | None = None, *, now: datetime | None = None) -> LoopState:
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
    status = str(data.get("status") or "unknown")
    paused = status == "paused"
    auto_pause = as_dict(data.get("autoPause"))
    pauses = [p for p in as_list(auto_pause.get("pauseHistory")) if isinstance(p, dict)]
    last_pause = pauses[-1] if pauses else {}
    firing = sprint_triggers(data, now)
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
    ended = status in ("completed", "archived") or data.get("phase") == "archived"
    waiting = not ended and (paused or bool(firing) or stop.outcome == "no_improvement")
    if ended:
        reason = f"sprint {status}: nothing waits"
    elif paused:
        trigger = last_pause.get("trigger") or auto_pause.get("lastTrigger") or "unknown trigger"
        actions = as_list(last_pause.get("userActions")) or list(AUTO_PAUSE_ACTIONS.get(str(trigger), ()))
        reason = (
            f"auto-paused by {trigger}: {last_pause.get('message') or 'no message recorded'} — "
            f"{' / '.join(map(str, actions)) or 'no action recorded'}"
        )
    elif firing:
        reason = (
            f"{firing[0]['trigger']} fires ({firing[0]['message']}): bkit pauses the sprint at its next check — "
            + " / ".join(firing[0]["user_actions"])
        )
    elif stop.outcome == "no_improvement":
        reason = f"no improvement for {flat} iterations: a person decides"
    else:
        reason = join_clauses(stop.reasons)
    route = "done" if ended or (stop.met and not waiting) else ("paused" if waiting else "iterate")
    return LoopState(
        kind="bkit-sprint",
        name=sprint_id,
        path=name,
        budget=budget,
        stop_rule=stop,
        route=route,
        waiting_for_human=waiting,
        reason=reason,
        parse_failures=tuple(failures),
        raw=data,
        status=status if status != "unknown" else str(data.get("phase") or "unknown"),
        trend_label="match rate %",
        points=tuple(points),
        details={
            "target": target,
            "min_acceptable": minimum,
            "status": status,
            "phase": data.get("phase"),
            "paused": paused,
            "pause": last_pause or None,
            "last_trigger": auto_pause.get("lastTrigger"),
            "triggers_firing": firing,
            "no_improvement_run": flat,
            "features": sprint_features(data),
            "kpi_match_rate": as_number(as_dict(data.get("kpi")).get("matchRate")),
            "budget_tokens": _positive(as_dict(data.get("config")).get("budget"), SPRINT_DEFAULT_BUDGET),
            "cumulative_tokens": as_number(as_dict(data.get("kpi")).get("cumulativeTokens")),
        },
    )

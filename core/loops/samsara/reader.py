"""A samsara feature as a :class:`LoopState`, through ``scars.core.samsara``.

A samsara feature waits for a person when it needs triage (iteration-entry verdict ``gate``
or ``unknown`` with undecided items) or a round decision (a round is open and every item is
decided). Decisions come from a read-only ``FeatureSession`` (no lock).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scars.core.loops.base import Budget, LoopState, StopRule, TrendPoint, rel
from scars.core.model import Feature, Problem
from scars.core.samsara.aggregate import parse_failures_said
from scars.core.samsara.feature import read_feature
from scars.core.samsara.layout import FAST_TRACK_SAID
from scars.core.samsara.reconcile import reconcile
from scars.core.samsara.rounds import (
    DEFAULT_MAX_ROUNDS,
    evaluate_valves,
    one_basis_series,
    rounds_done,
    signal_series,
    split_rounds,
)
from scars.core.samsara.session import FeatureSession
from scars.core.text import join_clauses


def _session_view(feature_dir: Path) -> tuple[Feature | None, dict[str, Any], int | None, list[str]]:
    """(feature, decisions, open round, problems) through a read-only session (no lock).

    The session reads the feature itself, so the feature is not read twice. When the session
    cannot be opened, (None, {}, None, [the problem]) and the caller reads the feature alone.
    """
    try:
        with FeatureSession.open(feature_dir, read_only=True) as session:
            decisions = dict(session.decisions)
            try:
                open_round = session.current_round()
            except Exception:  # noqa: BLE001 - a log the session cannot read: no round is shown as open
                open_round = None
            problems = list(session.problems)
            return session.feature, decisions, open_round, problems
    except Exception as exc:  # noqa: BLE001 - a journal that cannot be replayed must not hide the feature
        return None, {}, None, [f"decisions unreadable: {exc}"]


def feature_state(
    feature: Feature,
    root: Path,
    *,
    decisions: dict[str, Any] | None = None,
    open_round: int | None = None,
    problems: list[str] | None = None,
) -> LoopState:
    """Summarise an already read Feature (``decisions``: item id → Decision)."""
    decisions = decisions or {}
    path = rel(Path(feature.path), root)
    failures = list(feature.parse_failures)
    failures.extend(Problem(path, None, p) for p in problems or [])
    log = feature.iteration_log
    max_rounds = log.max_rounds if log is not None else DEFAULT_MAX_ROUNDS
    closed, _ = split_rounds(log)
    budget = Budget(rounds_done(log), max_rounds, "rounds")
    counted = [it for it in feature.items if it.counted]
    undecided = [it for it in counted if it.id not in decisions]
    verdict = feature.entry.verdict if feature.entry is not None else "unknown"

    series = signal_series(log, feature.signal_lost)
    two_counts = len({p.basis for p in series}) > 1  # the loop's record and scars' recount: labelled
    points = [
        TrendPoint(
            f"{p.label} ({p.basis})" if two_counts else p.label,
            float(p.value),
            p.decision if p.round is not None else (verdict if p.label == "now" else None),
        )
        for p in series
    ]
    span = one_basis_series(log, feature.signal_lost)  # the trend joins one count only
    trend_label = f"signal_lost {span.label()}" + (f" ({span.apart()})" if span.apart() else "")
    by_point = {(p.label, p.value, p.basis): t for p, t in zip(series, points)}
    trend = tuple(by_point.get((p.label, p.value, p.basis), TrendPoint(p.label, float(p.value))) for p in span.points)
    rec = reconcile(feature)

    reasons = list(feature.entry.reasons) if feature.entry is not None else []
    last = closed[-1] if closed else None
    valves: list[str] = []
    try:
        valves = [v.message for v in evaluate_valves(feature, decisions) if v.active]
    except Exception as exc:  # noqa: BLE001 - advisory only; a failure is listed, never fatal
        failures.append(Problem(path, None, f"safety valves not evaluated: {exc}"))
    if last is not None and last.decision in ("stop", "forced_stop"):
        stop = StopRule(True, tuple([f"round {last.round} decided {last.decision}"] + reasons), last.decision)
    elif verdict == "skip":
        stop = StopRule(True, tuple(reasons or ["iteration entry: default-skip"]), "default_skip")
    else:
        stop = StopRule(False, tuple(reasons + valves + [budget.describe()]), None)

    waiting = False
    if verdict in ("gate", "unknown") and undecided and stop.met is not True:
        waiting = True
        reason = f"needs triage: {len(undecided)} of {len(counted)} item(s) undecided (entry {verdict})"
    elif open_round is not None and not undecided and counted:
        waiting = True
        reason = f"needs a round decision: round {open_round} is open and every item is decided"
    elif stop.met:
        reason = join_clauses(stop.reasons[:1])
    elif verdict == "unknown" and not feature.parse_failures and reasons:
        reason = f"entry unknown: {reasons[0]}"  # e.g. implement has not run yet
    else:
        reason = f"entry {verdict}; signal_lost {feature.signal_lost}"
    if verdict == "unknown" and feature.parse_failures:
        reason += f"; {parse_failures_said(feature.parse_failures)}"
    route = (
        "triage"
        if waiting and reason.startswith("needs triage")
        else ("round decision" if waiting else ("done" if stop.met else "iterate"))
    )
    details = {
        "entry": verdict,
        "signal_lost": feature.signal_lost,
        "counts": dict(feature.counts),
        "items": len(counted),
        "undecided": len(undecided),
        "decided": len(counted) - len(undecided),
        "open_round": open_round,
        "valves": valves,
        "execution_mode": feature.execution_mode,
        "signal_lost_recorded_by_loop": rec.recorded_latest,
        "signal_lost_difference": rec.difference,
        "signal_lost_reconciliation": rec.summary() if rec.difference else None,
    }
    return LoopState(
        kind="samsara",
        name=feature.name,
        path=path,
        budget=budget,
        stop_rule=stop,
        route=route,
        waiting_for_human=waiting,
        reason=reason,
        parse_failures=tuple(failures),
        raw=None,
        status=verdict,
        trend_label=trend_label,
        points=tuple(points),
        trend_points=trend,
        details=details,
    )


def read_samsara_feature(feature_dir: Path, root: Path) -> LoopState:
    """Read one feature directory, with its decisions."""

    name = rel(Path(feature_dir), root)
    feature, decisions, open_round, problems = _session_view(Path(feature_dir))
    try:
        if feature is None:
            feature = read_feature(feature_dir)
    except Exception as exc:  # noqa: BLE001 - the reader's typed errors (PathNotFound …) and anything unforeseen
        return LoopState(
            kind="samsara",
            name=Path(feature_dir).name,
            path=name,
            budget=Budget(None, None, "rounds"),
            stop_rule=StopRule(None, ("feature unreadable",)),
            route=None,
            waiting_for_human=False,
            reason=f"unreadable: {exc}",
            parse_failures=(Problem(name, None, str(exc)),),
            status="unreadable",
        )
    return feature_state(feature, root, decisions=decisions, open_round=open_round, problems=problems)


def fast_track_state(directory: Path, root: Path) -> LoopState:
    """A ``changes/`` directory holding only fast-track artefacts, as what it is: samsara's side
    route (no rounds, nothing to triage, no gate), listed so that it is never silently left out."""
    return LoopState(
        kind="samsara-fast-track",
        name=directory.name,
        path=rel(directory, root),
        budget=Budget(None, None, "rounds"),
        stop_rule=StopRule(None, (), None),
        route=None,
        waiting_for_human=False,
        reason=FAST_TRACK_SAID,
        status="fast-track",
    )

"""bkit PDCA and DAG report rules, on our own small fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scars.core.loops import discover_loops
from scars.core.loops.bkit import reader as bkit
from scars.core.loops.dag import reader as dag


def status(root: Path, features: dict, legacy: bool = False, config: dict | None = None) -> Path:
    path = root / ("docs/.pdca-status.json" if legacy else ".bkit/state/pdca-status.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": "3.0", "features": features}))
    if config is not None:
        (root / "bkit.config.json").write_text(json.dumps({"pdca": config}))
    return path


def test_null_match_rate_is_not_measured_never_100(tmp_path):
    path = status(tmp_path, {"f": {"phase": "check", "matchRate": None, "iterationCount": 1}})
    (state,) = bkit.read_status(path, tmp_path)
    assert state.details["match_rate"] is None and state.stop_rule.met is False
    assert "match rate not measured" in state.stop_rule.reasons
    assert state.trend == () and state.history()[0].value is None
    assert state.route == "iterate"


def test_limit_spent_below_threshold_waits(tmp_path):
    path = status(tmp_path, {"f": {"phase": "act", "matchRate": 72, "iterationCount": 5}})
    (state,) = bkit.read_status(path, tmp_path)
    assert state.stop_rule.met and state.stop_rule.outcome == "failure"
    assert state.waiting_for_human and "72%" in state.reason and state.route == "stop"


def test_config_overrides_threshold_and_limit(tmp_path):
    path = status(
        tmp_path,
        {"f": {"phase": "act", "matchRate": 85, "iterationCount": 5}},
        config={"matchRateThreshold": 80, "maxIterations": 7},
    )
    (state,) = bkit.read_status(path, tmp_path)
    # pdca.maxIterations is the iterator's; bkit's state machine limits with the loop breaker (5).
    assert (state.budget.limit, state.details["iterator_max"]) == (5, 7)
    assert state.stop_rule.outcome == "success"


def test_circuit_breaker_waits(tmp_path):
    path = status(
        tmp_path,
        {"f": {"phase": "act", "matchRate": 50, "iterationCount": 1, "stateMachine": {"circuitBreakerOpen": True}}},
    )
    (state,) = bkit.read_status(path, tmp_path)
    assert state.waiting_for_human and "circuit breaker" in state.reason


def test_current_status_file_shadows_legacy(tmp_path):
    status(tmp_path, {"new": {"phase": "do", "iterationCount": 0}})
    status(tmp_path, {"old": {"phase": "do", "iterationCount": 0}}, legacy=True)
    names = [s.name for s in discover_loops(tmp_path) if s.kind == "bkit"]
    assert names == ["new"]


def test_unusable_status_is_one_failed_state(tmp_path):
    path = tmp_path / ".bkit/state/pdca-status.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"features": [1, 2]}')
    (state,) = bkit.read_status(path, tmp_path)
    assert state.status == "unreadable" and "no `features` object" in state.parse_failures[0].message


def sprint(root: Path, history: list, **extra) -> Path:
    path = root / ".bkit/state/sprints/s1.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "id": "s1",
        "phases": {"iterate": {"iterateHistory": history}},
        "config": {"maxIterations": 5, "matchRateTarget": 100, "matchRateMinAcceptable": 90},
    }
    data.update(extra)
    path.write_text(json.dumps(data))
    return path


def h(*rates):
    return [
        {"iteration": i, "matchRate": r, "fixedTaskIds": ["t"] if r else [], "durationMs": None}
        for i, r in enumerate(rates, 1)
    ]


def test_sprint_history_trend_and_rules(tmp_path):
    state = bkit.read_sprint(sprint(tmp_path, h(70, None, 80)), tmp_path)
    assert state.trend == (70.0, 80.0) and len(state.history()) == 3
    assert state.budget.used == 3 and state.route == "iterate" and not state.waiting_for_human
    state = bkit.read_sprint(sprint(tmp_path, h(80, 80, 79, 79)), tmp_path)
    assert state.stop_rule.outcome == "no_improvement" and state.waiting_for_human
    state = bkit.read_sprint(sprint(tmp_path, h(70, 75, 80, 85, 88)), tmp_path)
    assert state.stop_rule.outcome == "iteration_exhausted" and state.waiting_for_human
    state = bkit.read_sprint(sprint(tmp_path, h(70, 75, 80, 85, 92)), tmp_path)
    assert state.stop_rule.outcome == "partial" and not state.waiting_for_human
    state = bkit.read_sprint(sprint(tmp_path, h(90, 100)), tmp_path)
    assert state.stop_rule.outcome == "success" and state.route == "done"
    state = bkit.read_sprint(sprint(tmp_path, h(95), status="paused"), tmp_path)
    assert state.waiting_for_human


def test_no_improvement_run():
    assert bkit.no_improvement_run([1, 2, 3]) == 0
    assert bkit.no_improvement_run([3, 3, 2, 2]) == 3
    assert bkit.no_improvement_run([3, 2, 4, 4]) == 1


# --------------------------------------------------------------------------- DAG


def write_yaml(root: Path, name: str, text: str) -> Path:
    path = root / "reports" / "dag" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


DECISION = """iterationDecision:
  taskId: summarise-docs
  decision: {needsIteration: true, priority: high}
  triggers:
    - {type: validation_failure, source: v, severity: 1.0, fixable: false}
    - {type: low_confidence, source: c, severity: 0.3, fixable: false}
  strategy: {type: escalate, modifications: [], contextAdjustments: []}
  budget: {maxIterations: 5, currentIteration: 4, remainingIterations: 1}
  assessment: {likelihood: 0.2, expectedGain: 0.05, diminishingReturns: true, recommendation: escalate}
"""


def test_dag_decision_escalates_to_a_person(tmp_path):
    state = dag.read_report(write_yaml(tmp_path, "decision.yaml", DECISION), tmp_path)
    assert state.kind == "dag-iteration" and state.name == "summarise-docs"
    assert state.waiting_for_human and state.route == "escalate"
    assert (state.budget.used, state.budget.limit, state.budget.left) == (4, 5, 1)
    assert state.details["fixability"] == 0.0 and any("< 0.3" in r for r in state.stop_rule.reasons)
    assert state.trend == (1.0, 0.3)


def convergence(scores, remaining, goal="{targetQuality: 0.85, acceptableQuality: 0.7, maxIterations: 5}", extra=""):
    points = "\n".join(
        f"    - {{iteration: {i}, qualityScore: {q}, improvementsRemaining: {r}}}"
        for i, (q, r) in enumerate(zip(scores, remaining), 1)
    )
    return f"convergenceReport:\n  taskId: t\n  currentIteration: {len(scores)}\n  goal: {goal}\n  qualityHistory:\n{points}\n{extra}"


@pytest.mark.parametrize(
    "scores, remaining, action, waiting",
    [
        ([0.6, 0.75, 0.9], [3, 1, 0], "accept", False),  # converged
        ([0.3, 0.5, 0.7], [5, 4, 3], "continue", False),  # improving, achievable (variance 0.027: no plateau)
        ([0.5, 0.51, 0.505], [5, 5, 5], "escalate", True),  # plateau below acceptable
        ([0.8, 0.7, 0.6], [1, 2, 3], "escalate", True),  # declining
        ([0.6, 0.65, 0.7, 0.72], [4, 3, 3, 2], "accept", False),  # acceptable with 1 iteration left
    ],
)
def test_dag_convergence_rules(tmp_path, scores, remaining, action, waiting):
    state = dag.read_report(write_yaml(tmp_path, "conv.yaml", convergence(scores, remaining)), tmp_path)
    assert state.kind == "dag-convergence"
    assert state.details["recommendation"] == action
    assert state.waiting_for_human is waiting
    assert state.trend == tuple(float(s) for s in scores)


def test_dag_report_own_recommendation_is_shown_beside_ours(tmp_path):
    text = convergence([0.3, 0.5, 0.7], [5, 4, 3], extra="  recommendation: {action: escalate, reason: tired}\n")
    state = dag.read_report(write_yaml(tmp_path, "conv.yaml", text), tmp_path)
    assert state.details["recommendation"] == "continue" and state.details["report_recommendation"] == "escalate"
    assert state.waiting_for_human and any("report itself recommends escalate" in r for r in state.stop_rule.reasons)


def test_dag_discovery_by_root_key_under_dag_paths_only(tmp_path):
    write_yaml(tmp_path, "decision.yaml", DECISION)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "decision.yaml").write_text(DECISION)  # not under a dag-ish path
    write_yaml(tmp_path, "unrelated.yaml", "name: x\n")
    states = [s for s in discover_loops(tmp_path) if s.kind.startswith("dag")]
    assert [s.path for s in states] == ["reports/dag/decision.yaml"]
    # Named explicitly, any YAML report is read.
    (explicit,) = discover_loops(tmp_path / "other" / "decision.yaml")
    assert explicit.name == "summarise-docs"


def test_dag_bad_yaml_is_a_failure(tmp_path):
    path = write_yaml(tmp_path, "bad.yaml", "convergenceReport:\n  qualityHistory: [\n")
    state = dag.read_report(path, tmp_path)
    assert state.status == "unreadable" and state.parse_failures


def test_slope_and_trend(tmp_path):
    state = dag.read_report(write_yaml(tmp_path, "conv.yaml", convergence([0.5, 0.6, 0.7], [3, 2, 1])), tmp_path)
    t = state.details["trend"]
    assert t["slope"] == pytest.approx(0.1)
    assert t["direction"] == "improving" and t["predicted_convergence_iteration"] == 5

"""Convergence rules at their boundaries: the advisor's and the DAG convergence monitor's.

The DAG reader takes its thresholds from the advisor's trend module (one place); each comparison is tested
exactly at its threshold and on both sides. Where a threshold is a float that sums cannot hit
exactly (a variance of 0.01), the test sets the threshold to the computed value to check the
comparison, and uses values on both sides of the real constant to check the constant.
Qualities below are binary fractions (1/64 …) so slopes and gaps are exact.
"""

from __future__ import annotations

import pytest

from scars.core.advice import trend
from scars.core.advice.advisor import QualityPoint, monitor_action
from scars.core.advice.trend import trend_analysis, variance
from scars.core.loops import dag, loopspec

STEP = 1 / 64  # 0.015625: below the slope epsilon 0.02, exact in binary


def pts(*qualities, remaining=None):
    return [QualityPoint(i + 1, q, improvements_remaining=remaining) for i, q in enumerate(qualities)]


# ---------------------------------------------------------------- plateau (variance of the last three < 0.01)


def test_advisor_plateau_is_strictly_below_the_variance_threshold(monkeypatch):
    qs = [0.5, 0.5, 0.75]
    monkeypatch.setattr(trend, "PLATEAU_VARIANCE", variance(qs))
    assert not trend_analysis(pts(*qs), remaining=5)["is_plateauing"]
    monkeypatch.setattr(trend, "PLATEAU_VARIANCE", variance(qs) + 1e-9)
    assert trend_analysis(pts(*qs), remaining=5)["is_plateauing"]


@pytest.mark.parametrize("spread, plateau", [(0.122, True), (0.1225, False)])
def test_plateau_variance_constant_0_01_both_readers(spread, plateau):
    # variance of (0, d, 2d) is 2d²/3: d = 0.122 gives 0.00992, d = 0.1225 gives 0.01000417.
    qs = [0.1, 0.1 + spread, 0.1 + 2 * spread]
    assert (variance(qs) < 0.01) is plateau
    assert trend_analysis(pts(*qs), remaining=5)["is_plateauing"] is plateau
    assert dag.trend_analysis(qs, [1, 2, 3], 0.85)["isPlateauing"] is plateau


def test_dag_plateau_is_strictly_below_the_variance_threshold(monkeypatch):
    from statistics import pvariance

    qs = [0.5, 0.5, 0.75]
    monkeypatch.setattr(dag, "MONITOR_PLATEAU_VARIANCE", pvariance(qs))
    assert not dag.trend_analysis(qs, [1, 2, 3], 0.85)["isPlateauing"]
    monkeypatch.setattr(dag, "MONITOR_PLATEAU_VARIANCE", pvariance(qs) + 1e-9)
    assert dag.trend_analysis(qs, [1, 2, 3], 0.85)["isPlateauing"]


# ---------------------------------------------------------------- slope epsilon 0.02


def test_dag_slope_exactly_at_epsilon_is_stable(monkeypatch):
    monkeypatch.setattr(dag, "SLOPE_EPSILON", 0.25)
    assert dag.trend_analysis([0.0, 0.25], [1, 2], 0.85)["direction"] == "stable"
    assert dag.trend_analysis([0.25, 0.0], [1, 2], 0.85)["direction"] == "stable"
    assert dag.trend_analysis([0.0, 0.5], [1, 2], 0.85)["direction"] == "improving"
    assert dag.trend_analysis([0.5, 0.0], [1, 2], 0.85)["direction"] == "declining"


@pytest.mark.parametrize("step, direction", [(STEP, "stable"), (0.0234375, "improving"), (-0.0234375, "declining")])
def test_slope_epsilon_constant_both_readers(step, direction):
    # 1/64 = 0.0156 is below 0.02; 3/128 = 0.0234 is above.
    qs = [0.25, 0.25 + step]
    assert trend_analysis(pts(*qs), remaining=5)["direction"] == direction
    assert dag.trend_analysis(qs, [1, 2], 0.85)["direction"] == direction


# ---------------------------------------------------------------- prediction horizon: 20 iterations


@pytest.mark.parametrize("steps, predicted", [(20, 22), (21, None)])
def test_prediction_horizon_is_at_most_20_iterations_both_readers(steps, predicted):
    qs = [0.0, STEP]
    target = STEP + steps * STEP  # exactly `steps` iterations of the current slope away
    assert trend_analysis(pts(*qs), remaining=50, target=target)["predicted_convergence_iteration"] == predicted
    assert dag.trend_analysis(qs, [1, 2], target)["predictedConvergenceIteration"] == predicted


# ---------------------------------------------------------------- the monitor's rules


def _trend(**over):
    base = {"target": 0.85, "is_plateauing": False, "direction": "improving", "points": 3, "achievable": True}
    base.update(over)
    return base


def test_advisor_monitor_converged_exactly_at_target():
    latest = QualityPoint(3, 0.85, improvements_remaining=0)
    assert monitor_action(_trend(), latest, remaining=5)[0] == "ACCEPT"
    assert monitor_action(_trend(), QualityPoint(3, 0.84, improvements_remaining=0), remaining=5)[0] == "ITERATE"


@pytest.mark.parametrize("remaining, action", [(1, "ACCEPT"), (2, "ITERATE")])
def test_advisor_monitor_accepts_acceptable_quality_with_at_most_one_left(remaining, action):
    latest = QualityPoint(3, 0.7, improvements_remaining=2)  # exactly the acceptable quality
    assert monitor_action(_trend(), latest, remaining=remaining)[0] == action
    below = QualityPoint(3, 0.69, improvements_remaining=2)
    assert monitor_action(_trend(), below, remaining=1)[0] == "ITERATE"


GOAL = {"targetQuality": 0.85, "acceptableQuality": 0.7}
ON_TRACK = {"direction": "improving", "isPlateauing": False, "predictedConvergenceIteration": 4}


def test_dag_recommend_converged_exactly_at_target():
    assert dag.recommend(0.85, 0, GOAL, 3, ON_TRACK, 3, 3)[0] == "accept"
    assert dag.recommend(0.84, 0, GOAL, 3, ON_TRACK, 3, 3)[0] == "continue"
    assert dag.recommend(0.85, 1, GOAL, 3, ON_TRACK, 3, 3)[0] == "continue"  # improvements remain


@pytest.mark.parametrize("points, action", [(2, "continue"), (3, "escalate")])
def test_dag_recommend_declining_needs_three_points(points, action):
    declining = dict(ON_TRACK, direction="declining")
    # A declining trend is not "achievable" either; give the rule its own verdict by a
    # prediction that holds, then only the points decide between its escalate and the rest.
    got = dag.recommend(0.5, 2, GOAL, 5, declining, points, points)
    if action == "escalate":
        assert got == ("escalate", "quality declining over 3+ iterations")
    else:
        assert got[1] != "quality declining over 3+ iterations"


@pytest.mark.parametrize("left, action", [(1, "accept"), (2, "continue")])
def test_dag_recommend_acceptable_with_at_most_one_left(left, action):
    assert dag.recommend(0.7, 2, GOAL, left, ON_TRACK, 3, 3)[0] == action


def test_dag_uses_the_advisors_thresholds():
    assert (dag.SLOPE_EPSILON, dag.MONITOR_PLATEAU_VARIANCE, dag.PREDICTION_HORIZON) == (
        trend.SLOPE_EPSILON,
        trend.PLATEAU_VARIANCE,
        trend.PREDICTION_HORIZON,
    )
    assert (dag.DEFAULT_TARGET, dag.DEFAULT_ACCEPTABLE) == (trend.TARGET_QUALITY, trend.ACCEPTABLE_QUALITY)


# ---------------------------------------------------------------- loop-spec maxIterations 1..100


@pytest.mark.parametrize("value, used", [(1, 1), (100, 100), (0, 10), (101, 10), (-1, 10)])
def test_loop_spec_max_iterations_range_is_1_to_100(value, used):
    block, problems = loopspec.iterate_block({"iterate": {"maxIterations": value}})
    assert block["maxIterations"] == used
    assert bool(problems) is (used != value)


@pytest.mark.parametrize("fixable, escalate_text", [(3, False), (2, True)])
def test_dag_report_fixability_below_0_3_is_flagged(tmp_path, fixable, escalate_text):
    triggers = "".join(
        f"    - {{type: validation_failure, source: s{i}, severity: 0.5, fixable: {'true' if i < fixable else 'false'}}}\n"
        for i in range(10)
    )
    path = tmp_path / "reports" / "dag" / "d.yaml"
    path.parent.mkdir(parents=True)
    path.write_text("iterationDecision:\n  taskId: t\n  decision: {needsIteration: true}\n  triggers:\n" + triggers)
    state = dag.read_report(path, tmp_path)
    assert state.details["fixability"] == fixable / 10
    assert any("→ escalate" in r for r in state.stop_rule.reasons) is escalate_text

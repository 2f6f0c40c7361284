"""The convergence monitor's rules at their boundaries (one monitor: scars.core.advice.trend).

The advisor and the DAG convergence reports both call it; each comparison is tested exactly at
its threshold and on both sides. Where a threshold is a float that sums cannot hit exactly (a
variance of 0.01), the test sets the threshold to the computed value to check the comparison,
and uses values on both sides of the real constant to check the constant. Qualities below are
binary fractions (1/64 …) so slopes and gaps are exact.
"""

from __future__ import annotations

import pytest

from scars.core.advice import trend
from scars.core.advice.model import QualityPoint
from scars.core.advice.trend import monitor_recommendation, trend_analysis, variance
from scars.core.loops.dag import reader as dag
from scars.core.loops.loopspec import reader as loopspec

STEP = 1 / 64  # 0.015625: below the slope epsilon 0.02, exact in binary


def pts(*qualities, remaining=None):
    return [QualityPoint(i + 1, q, improvements_remaining=remaining) for i, q in enumerate(qualities)]


def dag_report(tmp_path, scores, goal="{targetQuality: 0.85, acceptableQuality: 0.7, maxIterations: 5}", remaining=3):
    history = "\n".join(
        f"    - {{iteration: {i}, qualityScore: {q!r}, improvementsRemaining: {remaining}}}"
        for i, q in enumerate(scores, 1)
    )
    path = tmp_path / "dag" / "conv.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"convergenceReport:\n  taskId: t\n  currentIteration: {len(scores)}\n  goal: {goal}\n"
        f"  qualityHistory:\n{history}\n"
    )
    return dag.read_report(path, tmp_path)


# ---------------------------------------------------------------- plateau (variance of the last three < 0.01)


def test_plateau_is_strictly_below_the_variance_threshold_for_the_advisor_and_dag_reports(monkeypatch, tmp_path):
    qs = [0.5, 0.75, 0.5]  # flat (slope 0): only the variance decides
    monkeypatch.setattr(trend, "PLATEAU_VARIANCE", variance(qs))
    assert not trend_analysis(pts(*qs), remaining=5)["is_plateauing"]
    assert not dag_report(tmp_path, qs).details["trend"]["is_plateauing"]
    monkeypatch.setattr(trend, "PLATEAU_VARIANCE", variance(qs) + 1e-9)
    assert trend_analysis(pts(*qs), remaining=5)["is_plateauing"]
    assert dag_report(tmp_path, qs).details["trend"]["is_plateauing"]


@pytest.mark.parametrize("spread, plateau", [(0.212, True), (0.2122, False)])
def test_plateau_variance_constant_0_01(spread, plateau):
    # variance of (0, d, 0) is 2d²/9: d = 0.212 gives 0.009988, d = 0.2122 gives 0.0100064.
    qs = [0.1, 0.1 + spread, 0.1]
    assert (variance(qs) < 0.01) is plateau
    assert trend_analysis(pts(*qs), remaining=5)["is_plateauing"] is plateau


# ---------------------------------------------------------------- slope epsilon 0.02


def test_slope_exactly_at_epsilon_is_stable(monkeypatch):
    monkeypatch.setattr(trend, "SLOPE_EPSILON", 0.25)
    assert trend_analysis(pts(0.0, 0.25), remaining=5)["direction"] == "stable"
    assert trend_analysis(pts(0.25, 0.0), remaining=5)["direction"] == "stable"
    assert trend_analysis(pts(0.0, 0.5), remaining=5)["direction"] == "improving"
    assert trend_analysis(pts(0.5, 0.0), remaining=5)["direction"] == "declining"


@pytest.mark.parametrize("step, direction", [(STEP, "stable"), (0.0234375, "improving"), (-0.0234375, "declining")])
def test_slope_epsilon_constant(step, direction):
    # 1/64 = 0.0156 is below 0.02; 3/128 = 0.0234 is above.
    assert trend_analysis(pts(0.25, 0.25 + step), remaining=5)["direction"] == direction


# ---------------------------------------------------------------- prediction horizon: 20 iterations


@pytest.mark.parametrize("steps, predicted", [(20, 22), (21, None)])
def test_prediction_horizon_is_at_most_20_iterations(steps, predicted):
    target = STEP + steps * STEP  # exactly `steps` iterations of the current slope away
    assert trend_analysis(pts(0.0, STEP), remaining=50, target=target)["predicted_convergence_iteration"] == predicted


# ---------------------------------------------------------------- acceleration and achievable (where the two copies differed)


def test_acceleration_is_the_slope_of_the_last_three_minus_the_three_before():
    # slopes 1/64 then 4/64 per iteration: the change in rate is 3/64.
    qs = [0.0, STEP, 2 * STEP, 2 * STEP + 4 * STEP, 2 * STEP + 8 * STEP, 2 * STEP + 12 * STEP]
    assert trend_analysis(pts(*qs), remaining=5)["acceleration"] == round(3 * STEP, 6) == 0.046875
    # Four points: the three before the last three are one point, whose slope is 0.
    assert trend_analysis(pts(*qs[:4]), remaining=5)["acceleration"] == round((4 * STEP + STEP) / 2, 6)
    assert trend_analysis(pts(0.5), remaining=5)["acceleration"] == 0.0


@pytest.mark.parametrize("remaining, achievable", [(2, True), (1, False)])
def test_achievable_counts_the_iterations_after_the_last_point(remaining, achievable):
    t = trend_analysis(pts(0.25, 0.5), remaining=remaining)  # slope 0.25: 0.85 in two more iterations
    assert t["predicted_convergence_iteration"] == 4
    assert t["achievable"] is achievable


def test_dag_report_counts_the_iterations_needed_after_its_last_measured_point(tmp_path):
    # The monitor's estimatedIterationsToGoal = predicted - the last point, against the budget
    # left. The report is at iteration 4 of 5 (1 left) but its last measure is iteration 2:
    # the target (predicted at iteration 4) is two measured iterations away, more than the one left.
    path = tmp_path / "dag" / "conv.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(
        "convergenceReport:\n  taskId: t\n  currentIteration: 4\n"
        "  goal: {targetQuality: 0.85, acceptableQuality: 0.7, maxIterations: 5}\n"
        "  qualityHistory:\n    - {iteration: 1, qualityScore: 0.25, improvementsRemaining: 3}\n"
        "    - {iteration: 2, qualityScore: 0.5, improvementsRemaining: 2}\n"
    )
    state = dag.read_report(path, tmp_path)
    assert state.details["trend"]["predicted_convergence_iteration"] == 4 and state.budget.left == 1
    assert not state.details["trend"]["achievable"]
    assert state.details["recommendation"] == "escalate"


def test_one_point_has_no_trend_so_it_does_not_escalate(tmp_path):
    verdict = monitor_recommendation(trend_analysis(pts(0.3), remaining=4), 0.3, 2, 4)
    assert (verdict.action, verdict.reason) == ("continue", "one point: no trend yet")
    assert dag_report(tmp_path, [0.3]).details["recommendation"] == "continue"
    assert dag_report(tmp_path, [0.3, 0.3]).details["recommendation"] == "escalate"  # two points, flat: out of reach


# ---------------------------------------------------------------- the monitor's rules


def _trend(**over):
    base = {"target": 0.85, "is_plateauing": False, "direction": "improving", "points": 3, "achievable": True}
    base.update(over)
    return base


def test_monitor_converged_exactly_at_target():
    assert monitor_recommendation(_trend(), 0.85, 0, 5).action == "accept"
    assert monitor_recommendation(_trend(), 0.85, 0, 5).converged
    assert monitor_recommendation(_trend(), 0.84, 0, 5).action == "continue"
    assert monitor_recommendation(_trend(), 0.85, 1, 5).action == "continue"  # improvements remain


@pytest.mark.parametrize("remaining, action", [(1, "accept"), (2, "continue")])
def test_monitor_accepts_acceptable_quality_with_at_most_one_left(remaining, action):
    assert monitor_recommendation(_trend(), 0.7, 2, remaining).action == action  # exactly the acceptable quality
    assert monitor_recommendation(_trend(), 0.69, 2, 1).action == "continue"


@pytest.mark.parametrize("points, action", [(2, "continue"), (3, "escalate")])
def test_monitor_declining_needs_three_points(points, action):
    # A declining trend is not "achievable" either; give the rule its own verdict by a
    # prediction that holds, then only the points decide between its escalate and the rest.
    got = monitor_recommendation(_trend(direction="declining", points=points), 0.5, 2, 5)
    if action == "escalate":
        assert (got.action, got.reason) == ("escalate", "quality declining over 3 or more points")
    else:
        assert got.reason != "quality declining over 3 or more points"


def test_dag_defaults_are_the_monitors_example_goal():
    assert (dag.DEFAULT_TARGET, dag.DEFAULT_ACCEPTABLE) == (trend.TARGET_QUALITY, trend.ACCEPTABLE_QUALITY)


@pytest.mark.parametrize("target", [0, 0.0])
def test_dag_configured_target_of_zero_is_used_as_configured(tmp_path, target):
    state = dag_report(
        tmp_path, [0.1, 0.2], goal=f"{{targetQuality: {target}, acceptableQuality: 0, maxIterations: 0}}", remaining=0
    )
    assert state.details["goal"] == {"targetQuality": 0, "acceptableQuality": 0}
    assert state.budget.limit == 0
    assert state.details["recommendation"] == "accept" and state.stop_rule.outcome == "converged"


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


@pytest.mark.parametrize(("last", "predicted"), [(0.84375, 3), (0.85, 2), (0.875, 2)])
def test_the_default_target_is_the_monitors_0_85(last, predicted):
    # formats.md §5.2's example goal: with no target given, 0.85 is reached (predicted at the last
    # point, iteration 2) and 0.84375 is not (one more iteration at its slope).
    assert (trend.TARGET_QUALITY, trend.ACCEPTABLE_QUALITY) == (0.85, 0.70)
    t = trend_analysis(pts(0.5, last), remaining=5)
    assert t["target"] == 0.85 and t["predicted_convergence_iteration"] == predicted

"""The iteration advisor: budget matrix, fixability, failure modes, convergence trend (issue 5)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scars.core.advice import failures, trend
from scars.core.advice.advisor import advise_history
from scars.core.advice.budget import budget_matrix
from scars.core.advice.failures import failure_modes
from scars.core.advice.feature import advise_feature, samsara_history
from scars.core.advice.fixable import fixability
from scars.core.advice.model import QualityPoint, Trigger
from scars.core.advice.trend import trend_analysis, variance
from scars.core.loops.advise import advise_loop_state, loop_goal
from scars.core.loops.loopspec import system as loopspec_system
from tests.factories import decisions, feature, item, log, rnd
from tests.hypothesis_profiles import examples


def pts(*qualities, counts=None, strategies=None, triggers=None):
    out = []
    for i, q in enumerate(qualities):
        out.append(
            QualityPoint(
                iteration=i + 1,
                quality=q,
                trigger_count=None if counts is None else counts[i],
                strategy=None if strategies is None else strategies[i],
                triggers=None if triggers is None else triggers[i],
            )
        )
    return out


def mode(modes, mid):
    (m,) = [m for m in modes if m.id == mid]
    return m


# ------------------------------------------------------------------ budget matrix


@pytest.mark.parametrize(
    "remaining, gap, share, action",
    [
        (3, 0.31, None, "ITERATE"),
        (3, 0.3, None, "REFINE"),  # exactly 0.3 is medium
        (3, 0.1, None, "REFINE"),  # exactly 0.1 is medium
        (3, 0.09, None, "ACCEPT"),
        (5, 0.5, 0.51, "ITERATE"),
        (5, 0.5, 0.5, "FINAL_ATTEMPT"),  # tokens not > 50 %: the 1-2 row applies
        (2, 0.31, None, "FINAL_ATTEMPT"),
        (1, 0.3, None, "ACCEPT"),
        (1, 0.31, 0.25, "FINAL_ATTEMPT"),  # exactly 25 % left is not < 25 %
        (1, 0.31, 0.2499, "ESCALATE"),
        (0, 0.9, None, "ESCALATE"),
        (9, 0.9, 0.1, "ESCALATE"),
    ],
)
def test_budget_matrix(remaining, gap, share, action):
    assert budget_matrix(remaining, gap, share)[0] == action


# ------------------------------------------------------------------ fixability


def _triggers(fixable: int, total: int):
    return [Trigger("requirement_unmet", f"t{i}", 1.0, i < fixable) for i in range(total)]


def test_fixability_exactly_0_3_does_not_escalate():
    assert fixability(_triggers(3, 10)) == 0.3
    a = advise_history(pts(0.1, 0.2), max_iterations=10, triggers=_triggers(3, 10))
    (r,) = [r for r in a.recommendations if r.rule == "fixability"]
    assert r.action != "ESCALATE"
    b = advise_history(pts(0.1, 0.2), max_iterations=10, triggers=_triggers(2, 10))
    (r,) = [r for r in b.recommendations if r.rule == "fixability"]
    assert r.action == "ESCALATE" and r.figures["fixability"] == 0.2
    assert b.action == "ESCALATE" and b.gate_choice == "stop"


def test_fixability_none_without_triggers():
    assert fixability([]) is None
    a = advise_history(pts(0.1, 0.2), max_iterations=10, triggers=[])
    assert a.fixability is None and not [r for r in a.recommendations if r.rule == "fixability"]


# ------------------------------------------------------------------ failure modes


def test_trigger_cascade_exactly_1_2_times_is_quiet():
    assert not mode(
        failure_modes(pts(0.2, 0.3, counts=[10, 12]), token_budget=None, tokens_used=None), "trigger_cascade"
    ).active
    m = mode(failure_modes(pts(0.2, 0.3, counts=[10, 13]), token_budget=None, tokens_used=None), "trigger_cascade")
    assert m.active and m.figures["ratio"] == 1.3


def test_infinite_loop_needs_three_identical_trigger_sets():
    same = (Trigger("validation_failure", "a"), Trigger("low_confidence", "b"))
    other = (Trigger("validation_failure", "a"),)
    two = failure_modes(pts(0.1, 0.2, 0.3, triggers=[other, same, same]), token_budget=None, tokens_used=None)
    assert not mode(two, "infinite_loop").active
    three = failure_modes(pts(0.1, 0.2, 0.3, triggers=[same, same, same]), token_budget=None, tokens_used=None)
    m = mode(three, "infinite_loop")
    assert m.active and m.figures["consecutive_identical"] == 3
    # order of triggers does not matter; a different severity does
    rev = tuple(reversed(same))
    assert mode(
        failure_modes(pts(0.1, 0.2, 0.3, triggers=[same, rev, same]), token_budget=None, tokens_used=None),
        "infinite_loop",
    ).active
    sev = (Trigger("validation_failure", "a", 0.7), Trigger("low_confidence", "b"))
    assert not mode(
        failure_modes(pts(0.1, 0.2, 0.3, triggers=[same, sev, same]), token_budget=None, tokens_used=None),
        "infinite_loop",
    ).active


def test_budget_burn_boundaries():
    def burn(qs, used):
        return mode(failure_modes(pts(*qs), token_budget=100, tokens_used=used), "budget_burn")

    assert burn([0.0, 0.05], 76).active
    assert not burn([0.0, 0.05], 75).active  # exactly 75 % is not above
    assert not burn([0.0, 0.1], 90).active  # mean gain exactly 0.1 is not below
    assert burn([0.0, 0.09], 90).active
    m = mode(failure_modes(pts(0.0, 0.05), token_budget=None, tokens_used=None), "budget_burn")
    assert not m.evaluated and not m.active


def test_false_improvement_strictly_below_threshold(monkeypatch):
    qs = [0.5, 0.75, 0.5]  # flat (slope 0): only the variance decides
    v = variance(qs)
    monkeypatch.setattr(failures, "FALSE_IMPROVEMENT_VARIANCE", v)
    assert not mode(failure_modes(pts(*qs), token_budget=None, tokens_used=None), "false_improvement").active
    monkeypatch.setattr(failures, "FALSE_IMPROVEMENT_VARIANCE", v + 1e-9)
    assert mode(failure_modes(pts(*qs), token_budget=None, tokens_used=None), "false_improvement").active


def test_false_improvement_needs_three_iterations():
    assert not mode(failure_modes(pts(0.5, 0.5), token_budget=None, tokens_used=None), "false_improvement").active
    m = mode(failure_modes(pts(0.65, 0.67, 0.66), token_budget=None, tokens_used=None), "false_improvement")
    assert m.active  # the seed's example 3 plateau


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=3, max_size=8))
def test_false_improvement_matches_its_definition(qs):
    m = mode(failure_modes(pts(*qs), token_budget=None, tokens_used=None), "false_improvement")
    s3 = (qs[-1] - qs[-3]) / 2  # the least-squares slope of three equally spaced points
    assert m.active == (variance(qs[-3:]) < 0.02 - 1e-12 and abs(s3) <= 0.02 + 1e-12)


def test_strategy_mismatch_twice_failed():
    flat = pts(0.3, 0.3, 0.3, strategies=["explore", "converge", "converge"])
    m = mode(failure_modes(flat, token_budget=None, tokens_used=None), "strategy_mismatch")
    assert m.active and m.figures["failed_strategy"] == "converge"
    rising = pts(0.3, 0.3, 0.4, strategies=["explore", "converge", "converge"])
    assert not mode(failure_modes(rising, token_budget=None, tokens_used=None), "strategy_mismatch").active
    once = pts(0.3, 0.3, 0.3, strategies=["explore", "explore", "converge"])
    assert not mode(failure_modes(once, token_budget=None, tokens_used=None), "strategy_mismatch").active


# ------------------------------------------------------------------ convergence trend


def test_trend_direction_slope_boundary(monkeypatch):
    monkeypatch.setattr(trend, "SLOPE_EPSILON", 0.25)
    assert trend_analysis(pts(0.0, 0.25), remaining=5)["direction"] == "stable"  # slope exactly 0.25
    assert trend_analysis(pts(0.0, 0.5), remaining=5)["direction"] == "improving"
    assert trend_analysis(pts(0.5, 0.0), remaining=5)["direction"] == "declining"


def test_trend_prediction_and_horizon():
    t = trend_analysis(pts(0.25, 0.5), remaining=5)
    assert t["slope"] == 0.25 and t["predicted_convergence_iteration"] == 4  # 2 + ceil(0.35 / 0.25)
    assert t["achievable"]
    assert not trend_analysis(pts(0.25, 0.5), remaining=1)["achievable"]
    slow = trend_analysis(pts(0.0, 0.03, 0.06), remaining=50)  # 0.79 / 0.03 = 27 iterations away
    assert slow["predicted_convergence_iteration"] is None and not slow["achievable"]
    done = trend_analysis(pts(0.5, 0.9), remaining=0)
    assert done["predicted_convergence_iteration"] == 2


def test_plateau_by_variance_of_last_three():
    t = trend_analysis(pts(0.1, 0.4, 0.41, 0.42), remaining=3)
    assert t["is_plateauing"] and t["plateau_start_iteration"] == 2
    assert not trend_analysis(pts(0.1, 0.4, 0.6), remaining=3)["is_plateauing"]


def test_monitor_escalates_a_plateau_below_acceptable():
    a = advise_history(pts(0.4, 0.41, 0.42), max_iterations=10)
    (r,) = [r for r in a.recommendations if r.rule == "convergence_monitor"]
    assert r.action == "ESCALATE" and "plateau" in r.message
    assert a.action == "ESCALATE"


def test_monitor_accepts_converged():
    p = [QualityPoint(1, 0.6, improvements_remaining=3), QualityPoint(2, 0.9, improvements_remaining=0)]
    a = advise_history(p, max_iterations=10, triggers=[])
    (r,) = [r for r in a.recommendations if r.rule == "convergence_monitor"]
    assert r.action == "ACCEPT" and a.action == "ACCEPT" and a.gate_choice == "stop"


def test_every_recommendation_names_rule_and_figures():
    a = advise_history(pts(0.1, 0.3, 0.2, counts=[5, 4, 9]), max_iterations=6, token_budget=100, tokens_used=80)
    assert a.recommendations
    for r in a.recommendations:
        assert r.rule and r.message and isinstance(r.figures, dict) and r.figures
    assert {"failure_mode.trigger_cascade", "failure_mode.budget_burn"} <= {r.rule for r in a.recommendations}
    assert a.action == "ESCALATE"


# ------------------------------------------------------------------ strategy tree


def test_tree_iteration_limit_branch():
    improving = advise_history(pts(0.2, 0.5), max_iterations=3, triggers=[Trigger("validation_failure", "x")])
    assert improving.strategy == "FINAL_RETRY"
    flat = advise_history(pts(0.5, 0.5), max_iterations=3, triggers=[Trigger("validation_failure", "x")])
    assert flat.strategy == "ESCALATE"


def test_tree_validation_failure_retry_then_refine():
    t = [Trigger("validation_failure", "x")]
    first = advise_history(pts(0.2), max_iterations=10, triggers=t)
    assert first.strategy == "RETRY"
    failed_retry = advise_history(pts(0.2, 0.2, strategies=[None, "retry"]), max_iterations=10, triggers=t)
    assert failed_retry.strategy == "REFINE"


def test_tree_picks_the_most_severe_trigger_type():
    t = [Trigger("low_confidence", "a", 0.3), Trigger("user_rejection", "b", 0.9, fixable=False)]
    assert advise_history(pts(0.2), max_iterations=10, triggers=t).strategy == "ESCALATE"
    t = [Trigger("low_confidence", "a", 0.95), Trigger("user_rejection", "b", 0.9)]
    assert advise_history(pts(0.2), max_iterations=10, triggers=t).strategy == "EXPAND"


def test_infinite_loop_steps_the_strategy_up():
    same = (Trigger("validation_failure", "a"),)
    a = advise_history(pts(0.1, 0.2, 0.3, triggers=[same] * 3), max_iterations=20)
    assert a.strategy == "REFINE"  # RETRY stepped up one rung
    assert any(r.rule == "failure_mode.infinite_loop" and r.action == "ROTATE" for r in a.recommendations)


# ------------------------------------------------------------------ samsara


def test_samsara_history_quality_from_signal_lost():
    f = feature([item(i) for i in range(4)], log(rnd(1, 8, 6), rnd(2, 6, 4)))
    points, max_it, current = samsara_history(f)
    assert [p.iteration for p in points] == [0, 1, 2]
    assert [p.quality for p in points] == [0.0, 0.25, 0.5]
    assert [p.count for p in points] == [8, 6, 4]
    assert (max_it, current) == (3, 2)


def test_samsara_without_log_is_entry_point_only():
    f = feature([item(1), item(2, "unverified_assumptions")])
    points, max_it, current = samsara_history(f)
    assert len(points) == 1 and points[0].quality == 0.0 and current == 0
    a = advise_feature(f)
    assert a.action == "ITERATE" and a.gate_choice == "continue"  # 3 rounds left, gap 0.85
    assert a.strategy == "EXPAND"  # tie of one item each: the tree's order puts low_confidence first


def test_samsara_flat_rounds_escalate_to_stop():
    f = feature([item(i) for i in range(5)], log(rnd(1, 6, 5), rnd(2, 5, 5), rnd(3, 5, 5), max_rounds=3))
    a = advise_feature(f)
    assert a.action == "ESCALATE" and a.gate_choice == "stop"
    assert "\n" in a.summary() and a.summary().startswith("Advice (samsara): ESCALATE")


def test_samsara_decisions_make_items_unfixable():
    its = [item(i) for i in range(10)]
    f = feature(its)
    a = advise_feature(f, decisions(accept=its[:8]))
    assert a.fixability == 0.2
    assert a.action == "ESCALATE"


def test_samsara_strategy_hints_feed_strategy_mismatch():
    from scars.core.model import Round

    def r(n, b, a):
        return Round(
            round=n,
            signal_lost_before=b,
            signal_lost_after=a,
            decision="continue",
            budget_context={"strategy_hint": "converge"},
        )

    f = feature([item(i) for i in range(5)], log(r(1, 6, 5), r(2, 5, 5), r(3, 5, 5), max_rounds=5))
    a = advise_feature(f)
    assert mode(a.failure_modes, "strategy_mismatch").active


# ------------------------------------------------------------------ other loops


def _state(kind, values, used, limit, **kw):
    from scars.core.loops.base import Budget, LoopState, StopRule, TrendPoint

    points = tuple(TrendPoint(f"iteration {i}", v) for i, v in enumerate(values, 1))
    return LoopState(
        kind=kind,
        name="x",
        path="x",
        budget=Budget(used, limit),
        stop_rule=StopRule(None),
        route=None,
        waiting_for_human=False,
        reason="",
        points=points,
        **kw,
    )


def test_loop_scores_are_scaled_and_unmeasured_points_skipped():
    a = advise_loop_state(
        _state("bkit-sprint", [60.0, None, 70.0, 71.0], 4, 5, details={"target": 100, "min_acceptable": 90})
    )
    assert [p.quality for p in a.history] == [0.6, 0.7, 0.71]
    assert a.trend["target"] == 1.0
    # A DAG decision is advised from its triggers and budget (before: skipped).
    assert advise_loop_state(_state("dag-iteration", [0.7], 1, 5)).source == "dag-iteration"
    assert advise_loop_state(_state("loop-spec", [], 0, 10)) is None


def test_loop_spec_gaps_become_triggers_and_strategies():
    gap = {"type": "execute", "description": "d", "fix_first": "Pass the flag"}
    hist = [{"iteration": i, "converged": False, "gap": dict(gap), "remaining_gaps": []} for i in (1, 2, 3)]
    raw = {"iterate": {"history": hist}}
    s = _state("loop-spec", [6.0, 6.0, 6.0], 3, 10, raw=raw, details={"criterion_converged": 8.0})
    a = advise_loop_state(s)
    assert mode(a.failure_modes, "infinite_loop").active  # the same fix_first three times
    assert mode(a.failure_modes, "strategy_mismatch").figures["failed_strategy"] == "execute"
    assert a.action == "ESCALATE"


def test_loop_goals_are_the_readers(tmp_path):
    """The advisor's target for a loop is the goal its reader evaluated, never a second copy."""
    from scars.core.loops.loopspec import reader as loopspec
    from scars.core.loops.review.reader import read_review_dir
    from scars.core.loops.review.shared import TARGET_SCORE
    from tests.factories import mechanist_state

    stage = mechanist_state(tmp_path)
    a = advise_loop_state(read_review_dir(stage, tmp_path))
    assert a.trend["target"] == TARGET_SCORE / 10
    s = _state("loop-spec", [6.0, 7.0], 2, 10, details={"criterion_converged": loopspec.CRITERION_CONVERGED})
    assert advise_loop_state(s).trend["target"] == 0.8
    assert advise_loop_state(_state("aris", [6.0, 7.0], 2, 4)) is None  # no goal from a reader: no advice


@pytest.mark.parametrize(("last", "accepted"), [(6.9, False), (7.0, True), (7.1, True)])
def test_loop_spec_is_acceptable_from_seven_of_ten(last, accepted):
    """loop-spec has no acceptable level of its own: scars takes 7 of 10 (LOOP_SPEC_ACCEPTABLE), so
    with one iteration left the monitor accepts a last score of 7.0 and not of 6.9."""
    assert loopspec_system.ACCEPTABLE == 0.7
    s = _state("loop-spec", [6.0, last], 9, 10, details={"criterion_converged": 8.0})
    assert loop_goal("loop-spec", s.details) == (0.8, 0.7)
    (monitor,) = [r for r in advise_loop_state(s).recommendations if r.rule == "convergence_monitor"]
    assert (monitor.action == "ACCEPT") is accepted
    if accepted:
        assert f"acceptable quality ({last / 10:g} ≥ 0.7) with 1 iteration(s) left" in monitor.message

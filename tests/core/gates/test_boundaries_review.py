"""ARIS / Mechanist rules at their boundaries, on both paths.

The reader (`scars loops`, scars.core.loops.review.reader) and the `review-continue` gate
(scars.core.gatekit.state_io) evaluate the same STOP rule: score >= 6 exactly at 6 and just below,
the budgets at their last unit, the stall guard, the claim re-entry sub-budget, blocking claim
buckets and the 24 h staleness.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from scars.core import gates
from scars.core.errors import DecisionRefused
from scars.core.loops.review import reader as review
from scars.core.loops.review.shared import score_met
from tests.factories import clean_env, mechanist_state

NOW = datetime(2026, 3, 16, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)


def _edit_state(stage: Path, **changes) -> None:
    path = stage / "REVIEW_STATE.json"
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data, indent=2) + "\n")


def _aris(root: Path, **state) -> Path:
    stage = root / "review-stage"
    stage.mkdir(parents=True)
    data = {
        "round": 2,
        "threadId": "t",
        "status": "in_progress",
        "last_score": 6,
        "last_verdict": "almost",
        "pending_experiments": [],
        "timestamp": "2026-03-16T10:00:00Z",
    }
    data.update(state)
    (stage / "REVIEW_STATE.json").write_text(json.dumps(data, indent=2) + "\n")
    return stage


SCORES = [(5, False), (5.9, False), (6, True), (6.1, True), ("6/10", True), ("5.99", False)]


@pytest.mark.parametrize("score, met", SCORES)
def test_mechanist_score_boundary_both_paths(tmp_path, score, met):
    stage = mechanist_state(tmp_path, score=score, verdict="ready")
    state = review.read_review_dir(stage, tmp_path, now=NOW)
    assert state.kind == "mechanist"
    assert state.stop_rule.met is met
    assert state.stop_rule.outcome == ("positive_verdict" if met else None)
    ev = gates.gather("review-continue", stage)
    figs = dict(ev.figures)
    assert figs["score"].endswith(f"(target >= 6): {'met' if met else 'not met'}")
    assert figs["STOP rule"] == ("met" if met else "not met")
    assert ev.default == ("stop" if met else "continue")
    assert ("continue" in ev.reason_required) is met


@pytest.mark.parametrize("score, met", SCORES)
def test_aris_score_boundary_both_paths(tmp_path, score, met):
    stage = _aris(tmp_path, last_score=score)
    state = review.read_review_dir(stage, tmp_path, now=NOW)
    assert state.kind == "aris"
    assert state.stop_rule.met is met
    assert state.stop_rule.reasons[0].startswith("score ") and ("≥ 6" in state.stop_rule.reasons[0]) is met
    ev = gates.gather("review-continue", stage)
    assert dict(ev.figures)["STOP rule"] == ("met" if met else "not met")
    assert ev.decision_overrides == ({"stop": "proceed"} if met else {})


def test_score_met_is_the_one_rule():
    assert score_met(6) and score_met(6.0) and not score_met(5.999)
    assert not score_met(None)


@pytest.mark.parametrize("verdict, met", [("almost", True), ("ready", True), ("not ready", False), ("revise", False)])
def test_verdict_dimension_at_score_six_both_paths(tmp_path, verdict, met):
    stage = _aris(tmp_path, last_score=6, last_verdict=verdict)
    assert review.read_review_dir(stage, tmp_path, now=NOW).stop_rule.met is met
    assert dict(gates.gather("review-continue", stage).figures)["STOP rule"] == ("met" if met else "not met")


@pytest.mark.parametrize("fail_lines, met", [(0, True), (1, False)])
def test_one_blocking_claim_keeps_the_stop_rule_unmet_both_paths(tmp_path, fail_lines, met):
    stage = mechanist_state(tmp_path, score=6, verdict="ready", fail_lines=fail_lines)
    assert review.read_review_dir(stage, tmp_path, now=NOW).stop_rule.met is met
    assert dict(gates.gather("review-continue", stage).figures)["STOP rule"] == ("met" if met else "not met")


@pytest.mark.parametrize("consumed, spent", [(5, False), (6, True), (7, True)])
def test_mechanist_iteration_budget_boundary_both_paths(tmp_path, consumed, spent):
    stage = mechanist_state(tmp_path, score=4, verdict="not ready", consumed=consumed)
    state = review.read_review_dir(stage, tmp_path, now=NOW)
    assert state.budget.spent is spent and state.waiting_for_human is spent
    assert state.route == ("terminate" if spent else f"iteration {consumed + 1}")
    ev = gates.gather("review-continue", stage)
    assert ("continue" in ev.refused) is spent
    if spent:
        with pytest.raises(DecisionRefused, match="iteration budget is spent"):
            gates.record(ev, "continue", None, user="alice")


@pytest.mark.parametrize("noop, stalled", [(1, False), (2, True)])
def test_mechanist_stall_guard_boundary_both_paths(tmp_path, noop, stalled):
    stage = mechanist_state(tmp_path, score=4, verdict="not ready")
    _edit_state(stage, consecutive_noop_count=noop)
    state = review.read_review_dir(stage, tmp_path, now=NOW)
    assert state.details["stalled"] is stalled and state.waiting_for_human is stalled
    ev = gates.gather("review-continue", stage)
    assert any(w.startswith("stall guard") for w in ev.warnings) is stalled
    assert dict(ev.figures)["no-op streak"] == f"{noop} of 2"


@pytest.mark.parametrize("reentries, spent", [(1, False), (2, True)])
def test_mechanist_claim_reentry_sub_budget_boundary(tmp_path, reentries, spent):
    stage = mechanist_state(tmp_path, score=4, verdict="not ready")
    _edit_state(stage, claim_reentries_consumed=reentries)
    state = review.read_review_dir(stage, tmp_path, now=NOW)
    assert any("claim re-entry sub-budget spent" in r for r in state.stop_rule.reasons) is spent
    figs = dict(gates.gather("review-continue", stage).figures)
    assert figs["claim re-entries"] == f"{reentries} of 2 ({2 - reentries} left)"


@pytest.mark.parametrize("rnd, max_rounds, spent", [(3, None, False), (4, None, True), (4, 5, False), (5, 5, True)])
def test_aris_round_budget_boundary_both_paths(tmp_path, rnd, max_rounds, spent):
    extra = {"max_rounds": max_rounds} if max_rounds else {}
    stage = _aris(tmp_path, round=rnd, last_score=5, last_verdict="not ready", **extra)
    state = review.read_review_dir(stage, tmp_path, now=NOW)
    assert state.budget.spent is spent and state.waiting_for_human is spent
    ev = gates.gather("review-continue", stage)
    assert ("continue" in ev.refused) is spent


@pytest.mark.parametrize("age, stale", [(timedelta(hours=24), False), (timedelta(hours=24, seconds=1), True)])
def test_staleness_is_strictly_older_than_24_hours(tmp_path, age, stale):
    stamp = (NOW - age).strftime("%Y-%m-%dT%H:%M:%SZ")
    stage = mechanist_state(tmp_path, score=4, verdict="not ready")
    _edit_state(stage, timestamp=stamp)
    assert review.read_review_dir(stage, tmp_path, now=NOW).details["stale"] is stale
    other = _aris(tmp_path / "aris", timestamp=stamp, last_score=4)
    assert review.read_review_dir(other, tmp_path, now=NOW).details["stale"] is stale

"""DAG reports and the advisor as seed 000 means them (issue 15, points 7, 11, 12; the
ImprovementAssessment, fixability by error code, the confidence / hallucination branches, the
budget-insufficient case and the `dag-escalate` gate). Report texts are ours."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from scars.core import gates
from scars.core.advice.budget import budget_matrix
from scars.core.advice.failures import failure_modes
from scars.core.advice.fixable import improvement_assessment
from scars.core.advice.model import QualityPoint, Trigger
from scars.core.advice.strategy import strategy_tree
from scars.core.advice.trend import trend_analysis
from scars.core.loops import discover_loops
from scars.core.loops.advise import advise_loop_state
from scars.core.loops.dag import reader as dag
from scars.tui.cli import main as cli
from tests.factories import clean_env


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)


def decision(root: Path, triggers: list[dict], budget: dict | None = None, **extra) -> Path:
    report = {
        "taskId": "docs-task",
        "decision": {"needsIteration": True, "priority": "high"},
        "triggers": triggers,
        "strategy": {"type": "refine"},
        "budget": budget or {"maxIterations": 5, "currentIteration": 2, "remainingIterations": 3},
        "assessment": {"recommendation": "iterate"},
        **extra,
    }
    path = root / "dag" / "decision.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"iterationDecision": report}, sort_keys=False))
    return path


def validation(code: str, fixable: bool = True) -> dict:
    return {"type": "validation_failure", "severity": 0.7, "details": f"$.x: {code}", "code": code, "fixable": fixable}


# --------------------------------------------------------------------------- point 7


def test_fixability_comes_from_the_error_codes_and_escalates(tmp_path):
    """Before: the report's own `fixable: true` was trusted and nothing escalated."""
    path = decision(
        tmp_path, [validation("TYPE_MISMATCH"), validation("SCHEMA_VIOLATION"), validation("TYPE_MISMATCH")]
    )
    state = dag.read_report(path, tmp_path)
    assert state.details["fixability"] == 0.0
    assert state.waiting_for_human and state.route == "escalate"
    assert "fixability 0.00 is under 0.3" in state.reason


@pytest.mark.parametrize("fixable, waits", [(3, False), (2, True)])
def test_fixability_boundary_0_3(tmp_path, fixable, waits):
    triggers = [validation("MISSING_FIELD")] * fixable + [validation("TYPE_MISMATCH")] * (10 - fixable)
    state = dag.read_report(decision(tmp_path, triggers), tmp_path)
    assert state.details["fixability"] == fixable / 10
    assert ("fixability" in state.reason) is waits


@pytest.mark.parametrize(
    "budget, waits",
    [
        ({"maxIterations": 5, "currentIteration": 5, "remainingIterations": 0}, True),
        ({"maxIterations": 5, "currentIteration": 4, "remainingIterations": 1}, False),
        ({"remainingIterations": 3, "tokenBudget": 50000, "usedTokens": 38000}, True),  # 24 % left
        ({"remainingIterations": 3, "tokenBudget": 50000, "usedTokens": 37500}, False),  # exactly 25 %
    ],
)
def test_the_budget_matrix_escalates(tmp_path, budget, waits):
    state = dag.read_report(decision(tmp_path, [validation("MISSING_FIELD")], budget), tmp_path)
    assert state.waiting_for_human is waits
    if waits:
        assert "budget matrix" in state.reason


def test_example_2_budget_insufficient(tmp_path):
    """Seed 000 Example 2: 8K tokens left of 50K, the fix needs 12K → ESCALATE."""
    budget = {"maxIterations": 5, "currentIteration": 4, "remainingIterations": 1, "tokenBudget": 50000}
    budget |= {"usedTokens": 42000, "estimatedCost": {"tokens": 12000}}
    unmet = {"type": "requirement_unmet", "severity": 0.9, "fixable": True, "details": "section missing"}
    state = dag.read_report(decision(tmp_path, [unmet] * 3, budget), tmp_path)
    assert state.details["budget_insufficient"] and state.waiting_for_human
    assert "BUDGET_INSUFFICIENT: 8000 tokens left, the next iteration needs 12000" in state.reason
    [advice] = [advise_loop_state(s) for s in discover_loops(tmp_path)]
    assert advice.action == "ESCALATE" and "budget_insufficient" in [r.rule for r in advice.recommendations]


def test_advise_reads_decision_reports(tmp_path, capsys):
    decision(tmp_path, [validation("MISSING_FIELD")])
    assert cli.main(["advise", str(tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["skipped"] == [] and out["advice"][0]["source"] == "dag-iteration"


def convergence(
    root: Path,
    points: list[tuple[float, int]],
    goal: str = "{targetQuality: 0.85, acceptableQuality: 0.7, maxIterations: 8}",
) -> Path:
    history = "\n".join(
        f"    - {{iteration: {i}, qualityScore: {q}, improvementsRemaining: {left}, improvementsResolved: 0}}"
        for i, (q, left) in enumerate(points, 1)
    )
    path = root / "dag" / "conv.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"convergenceReport:\n  taskId: t\n  currentIteration: {len(points)}\n  goal: {goal}\n  qualityHistory:\n{history}\n"
    )
    return path


def test_failure_modes_on_a_convergence_history(tmp_path):
    """Before: infinite loop and cascade were 'not evaluated' though improvementsRemaining grew."""
    convergence(tmp_path, [(0.5, 3), (0.55, 4), (0.6, 6), (0.62, 9)])
    [state] = discover_loops(tmp_path)
    advice = advise_loop_state(state)
    modes = {m.id: m for m in advice.failure_modes}
    assert modes["trigger_cascade"].evaluated and modes["trigger_cascade"].active  # 9 > 1.2 × 6
    assert modes["infinite_loop"].evaluated and not modes["infinite_loop"].active
    convergence(tmp_path / "b", [(0.5, 4), (0.5, 4), (0.5, 4)])
    [state] = discover_loops(tmp_path / "b")
    assert {m.id: m for m in advise_loop_state(state).failure_modes}["infinite_loop"].active


# --------------------------------------------------------------------------- point 11


def pts(*qs):
    return [QualityPoint(i, q) for i, q in enumerate(qs, 1)]


def mode(qs, name):
    return {m.id: m for m in failure_modes(pts(*qs), token_budget=None, tokens_used=None)}[name]


@pytest.mark.parametrize(
    "qs, fires",
    [
        ((0.40, 0.50, 0.62), False),  # a steady climb (variance 0.0081)
        ((0.4, 0.5, 0.2), False),  # a real decline, 4 → 5 → 2 of 10
        ((0.65, 0.67, 0.66), True),  # seed example 3: fluctuating around the same value
    ],
)
def test_false_improvement_is_not_a_steady_climb(qs, fires):
    m = mode(qs, "false_improvement")
    assert m.active is fires
    assert "slope_last_three" in m.figures and "variance_last_three" in m.figures  # the figures shown


def test_plateau_is_flat():
    """Before: 0.40 → 0.50 → 0.62 (variance 0.0081 < 0.01) was a plateau beside a slope of +0.11."""
    t = trend_analysis(pts(0.40, 0.50, 0.62), remaining=5)
    assert not t["is_plateauing"] and t["slope_last_three"] == pytest.approx(0.11)
    assert trend_analysis(pts(0.62, 0.63, 0.62), remaining=5)["is_plateauing"]


def test_a_gain_of_exactly_0_1_is_not_below_0_1():
    burn = {m.id: m for m in failure_modes(pts(0.5, 0.6), token_budget=100, tokens_used=90)}["budget_burn"]
    assert not burn.active  # 0.6 - 0.5 = 0.09999999999999998
    assert budget_matrix(5, 0.85 - 0.75, None)[0] == "REFINE"  # a gap of exactly 0.1 is medium


# --------------------------------------------------------------------------- point 12


def test_advise_and_loops_agree_on_convergence(tmp_path):
    """Quality 0.9 with 2 improvements remaining is not converged: before, advise said ACCEPT."""
    convergence(tmp_path, [(0.8, 4), (0.9, 2)])
    [state] = discover_loops(tmp_path)
    assert state.route == "continue" and state.stop_rule.outcome is None
    advice = advise_loop_state(state)
    assert advice.action != "ACCEPT" and advice.gate_choice == "continue"


# --------------------------------------------------------------------------- seed behaviours


def test_improvement_assessment_follows_the_detector():
    triggers = [
        Trigger("validation_failure", "a", 0.8),
        Trigger("low_confidence", "b", 0.4),
        Trigger("requirement_unmet", "c", 0.6),
    ]
    a = improvement_assessment([0.5, 0.6], triggers, remaining=3)
    assert (a["likelihood"], a["expectedGain"], a["diminishingReturns"], a["recommendation"]) == (
        1.0,
        0.42,
        False,
        "iterate",
    )
    flat = improvement_assessment([0.65, 0.67, 0.66], triggers, remaining=3)
    assert flat["diminishingReturns"] and flat["likelihood"] == 0.5 and flat["recommendation"] == "escalate"
    assert improvement_assessment([0.5], triggers, remaining=0)["recommendation"] == "accept"
    unfixable = [Trigger("validation_failure", "a", 0.9, False)] * 3 + [Trigger("x", "b", 0.9)]
    assert improvement_assessment([0.5], unfixable, remaining=3)["recommendation"] == "escalate"  # fixability 0.25


@pytest.mark.parametrize(
    "trigger, action",
    [
        (
            {"type": "low_confidence", "severity": 0.3, "fixable": True, "details": "missing evidence for claim 2"},
            "EXPAND",
        ),
        (
            {"type": "low_confidence", "severity": 0.3, "fixable": True, "details": "factual uncertainty on dates"},
            "RETRY",
        ),
        ({"type": "hallucination_detected", "severity": 1.0, "fixable": True, "claims": ["the API has v3"]}, "RETRY"),
        (
            {
                "type": "hallucination_detected",
                "severity": 0.7,
                "fixable": True,
                "details": "systemic invention of sources",
            },
            "REFINE",
        ),
    ],
)
def test_the_confidence_and_hallucination_branches(tmp_path, trigger, action):
    state = dag.read_report(decision(tmp_path, [trigger]), tmp_path)
    [t] = state.details["triggers"]
    tree = strategy_tree([], [Trigger(t["type"], "k", t["severity"], t["fixable"], cause=t["cause"])], 5, 2, "stable")
    assert tree.action == action


# --------------------------------------------------------------------------- the gate


def test_dag_escalate_gate_records_in_the_report_and_clears_the_inbox(tmp_path):
    path = decision(tmp_path, [validation("TYPE_MISMATCH")] * 3)
    before = path.read_bytes()
    ev = gates.gather("dag-escalate", tmp_path)
    assert ev.workflow_prompt.startswith("docs-task: ESCALATE to a person — fixability 0.00 is under 0.3")
    assert dict(ev.figures)["trigger 1"] == "validation_failure severity 0.7, not fixable (written fixable: True)"
    gates.record(ev, "retry", "drop the typed field; emit strings as the schema says", user="alice")
    assert path.read_bytes().startswith(before)  # appended, every earlier byte kept
    data = yaml.safe_load(path.read_text())
    assert data["humanDecisions"][0]["answer"] == "retry" and data["humanDecisions"][0]["decidedBy"] == "alice"
    [state] = discover_loops(tmp_path)
    assert not state.waiting_for_human and "answered retry by alice" in state.reason
    # A second answer extends the list (no duplicate key).
    gates.record(gates.gather("dag-escalate", path), "abort", "the schema cannot express the output", user="bob")
    assert [d["answer"] for d in yaml.safe_load(path.read_text())["humanDecisions"]] == ["retry", "abort"]
    assert (tmp_path / "dag" / "auto-decisions.md").read_text().count("## Decision") == 2


def test_dag_escalate_from_the_environment_and_an_answers_file(tmp_path, monkeypatch, capsys):
    decision(tmp_path / "a", [validation("TYPE_MISMATCH")] * 3)
    monkeypatch.setenv("SCARS_ANSWER_DAG_ESCALATE", "take-over")
    assert cli.main(["gate", "dag-escalate", str(tmp_path / "a"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["answer"] == "take-over"
    monkeypatch.delenv("SCARS_ANSWER_DAG_ESCALATE")
    decision(tmp_path / "b", [validation("TYPE_MISMATCH")] * 3)
    answers = tmp_path / "answers.yaml"
    answers.write_text("dag-escalate: {answer: accept, reason: the two typed fields are documented as strings}\n")
    assert cli.main(["gate", "dag-escalate", str(tmp_path / "b"), "--answers", str(answers)]) == 0

"""Contract: for every loop kind, `scars loops --json` and `scars gate … --json` agree.

The gates take their budgets, limits, thresholds and stop rules from the loop readers
(scars.core.loops); `scars gate … --json` reports the loop it stands in (``loop_state``, and a
bkit feature's sprint as ``sprint_state``) and its figures say the same. Each state below carries an
override of the loop's default: Mechanist `max_iterations`, ARIS `max_rounds`, loop-spec
`iterate.maxIterations`, `bkit.config.json` `pdca` settings, a sprint's `config`, samsara's
`budget.max_rounds`, a DAG report's own goal. DAG reports have no gate: their budget and trend
are compared with `scars advise --json`, which runs the same convergence monitor.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scars.core import gates
from scars.tui.cli.main import main
from tests.factories import bkit_project, loop_spec_feature, mechanist_state, samsara_feature

BUDGET_KEYS = ("used", "limit", "left")


def _json(capsys, *args: str) -> dict:
    assert main(list(args)) == 0, capsys.readouterr()
    return json.loads(capsys.readouterr().out)


def _loop(capsys, root: Path, kind: str) -> dict:
    listing = _json(capsys, "loops", str(root), "--json")
    (state,) = [s for s in listing["loops"] if s["kind"] == kind]
    return state


def _agree(loop: dict, reported: dict) -> None:
    assert reported["kind"] == loop["kind"] and reported["name"] == loop["name"]
    assert {k: reported["budget"][k] for k in BUDGET_KEYS} == {k: loop["budget"][k] for k in BUDGET_KEYS}
    assert reported["stop_rule"] == loop["stop_rule"]


def _figure(gate_id: str, path: Path, label: str, **options) -> str:
    return dict(gates.gather(gate_id, path, **options).figures)[label]


def test_mechanist_max_iterations_in_the_state(tmp_path, capsys):
    stage = mechanist_state(tmp_path, score=4, verdict="not ready", consumed=6)
    state = json.loads((stage / "REVIEW_STATE.json").read_text())
    state["max_iterations"] = 8
    (stage / "REVIEW_STATE.json").write_text(json.dumps(state, indent=2) + "\n")
    loop = _loop(capsys, tmp_path, "mechanist")
    assert {k: loop["budget"][k] for k in BUDGET_KEYS} == {"used": 6, "limit": 8, "left": 2}
    assert _figure("review-continue", tmp_path, "iterations consumed") == "6 of 8 (2 left)"
    assert not loop["waiting_for_human"]  # 2 iterations left: nobody is needed yet
    gate = _json(capsys, "gate", "review-continue", str(tmp_path), "--answer", "continue", "--json")
    _agree(loop, gate["loop_state"])


@pytest.mark.parametrize("limit, left", [(6, 1), (0, 0)])
def test_aris_max_rounds_in_the_state(tmp_path, capsys, limit, left):
    stage = tmp_path / "review-stage"
    stage.mkdir()
    state = {
        "round": min(5, limit),
        "max_rounds": limit,
        "status": "in_progress",
        "last_score": 5,
        "last_verdict": "almost",
    }
    (stage / "REVIEW_STATE.json").write_text(json.dumps(state) + "\n")
    loop = _loop(capsys, tmp_path, "aris")
    assert (loop["budget"]["limit"], loop["budget"]["left"]) == (limit, left)  # 0 is a configured limit
    used = state["round"]
    assert _figure("review-continue", tmp_path, "rounds") == f"{used} of {limit} ({left} left)"
    answer = ["--answer", "continue"] if left else ["--answer", "stop", "--reason", "the round budget is spent"]
    gate = _json(capsys, "gate", "review-continue", str(tmp_path), *answer, "--json")
    _agree(loop, gate["loop_state"])


@pytest.mark.parametrize("max_iterations, limit", [(4, 4), (500, 10)])
def test_loop_spec_max_iterations_in_feature_json(tmp_path, capsys, max_iterations, limit):
    fdir = loop_spec_feature(tmp_path)
    data = json.loads((fdir / "feature.json").read_text())
    data["iterate"]["maxIterations"] = max_iterations  # 500 is outside 1..100: loop-spec uses 10
    data["iterate"]["used"] = 3
    (fdir / "feature.json").write_text(json.dumps(data, indent=2) + "\n")
    loop = _loop(capsys, tmp_path, "loop-spec")
    assert (loop["budget"]["used"], loop["budget"]["limit"]) == (3, limit)
    assert _figure("spec", fdir, "iterations") == f"3 of {limit} used"
    gate = _json(capsys, "gate", "spec", str(fdir), "--answer", "stop", "--json")
    _agree(loop, gate["loop_state"])


def test_bkit_feature_and_its_sprint_with_configured_limits(tmp_path, capsys):
    bkit_project(tmp_path, rate=86, count=4, history=(80, 84, 86))
    (tmp_path / "bkit.config.json").write_text(
        json.dumps({"pdca": {"matchRateThreshold": 85}, "guardrails": {"loopBreaker": {"maxPdcaIterations": 4}}})
    )
    sprint_file = tmp_path / ".bkit" / "state" / "sprints" / "s1.json"
    sprint = json.loads(sprint_file.read_text())
    sprint["config"] = {"maxIterations": 3, "matchRateTarget": 95, "matchRateMinAcceptable": 85}
    sprint_file.write_text(json.dumps(sprint))
    feature = _loop(capsys, tmp_path, "bkit")
    assert {k: feature["budget"][k] for k in BUDGET_KEYS} == {"used": 4, "limit": 4, "left": 0}
    assert feature["stop_rule"]["met"] is True and feature["stop_rule"]["outcome"] == "success"  # 86 ≥ 85
    sprint_loop = _loop(capsys, tmp_path, "bkit-sprint")
    assert {k: sprint_loop["budget"][k] for k in BUDGET_KEYS} == {"used": 3, "limit": 3, "left": 0}
    assert _figure("pdca-continue", tmp_path, "iterations").startswith("4 of max 4 (guardrails.loopBreaker")
    assert _figure("pdca-continue", tmp_path, "Match Rate") == "86% (threshold 85%): pass"
    gate = _json(
        capsys, "gate", "pdca-continue", str(tmp_path), "--answer", "stop", "--reason", "86% passes 85%", "--json"
    )
    _agree(feature, gate["loop_state"])
    _agree(sprint_loop, gate["sprint_state"])


def test_samsara_max_rounds_in_the_iteration_log(tmp_path, capsys):
    feature_dir = samsara_feature(tmp_path)
    (feature_dir / "iteration-log.yaml").write_text(
        "feature: demo\nsignal_lost_initial: 6\nbudget:\n  max_rounds: 5\n  reviewer_retry_limit: 2\n"
        "rounds:\n  - round: 1\n    signal_lost_before: 6\n    signal_lost_after: 5\n    decision: continue\n"
        '    decision_reason: "one more"\n'
    )
    loop = _loop(capsys, tmp_path, "samsara")
    assert {k: loop["budget"][k] for k in BUDGET_KEYS} == {"used": 1, "limit": 5, "left": 4}
    gate = _json(capsys, "gate", "entry", str(feature_dir), "--answer", "enter", "--json")
    _agree(loop, gate["loop_state"])


@pytest.mark.parametrize("limit, left", [(7, 4), (0, 0)])
def test_dag_report_goal_in_loops_and_advise(tmp_path, capsys, limit, left):
    report = tmp_path / "dag" / "convergence.yaml"
    report.parent.mkdir()
    report.write_text(
        "convergenceReport:\n  taskId: summarise\n  currentIteration: 3\n"
        f"  goal: {{targetQuality: 0.9, acceptableQuality: 0.6, maxIterations: {limit}}}\n"
        "  qualityHistory:\n"
        "    - {iteration: 1, qualityScore: 0.5, improvementsRemaining: 4}\n"
        "    - {iteration: 2, qualityScore: 0.6, improvementsRemaining: 3}\n"
        "    - {iteration: 3, qualityScore: 0.7, improvementsRemaining: 2}\n"
    )
    loop = _loop(capsys, tmp_path, "dag-convergence")
    assert {k: loop["budget"][k] for k in BUDGET_KEYS} == {"used": 3, "limit": limit, "left": left}
    advice = _json(capsys, "advise", str(tmp_path), "--json")["advice"]
    (dag,) = [a for a in advice if a["source"] == "dag-convergence"]
    assert dag["budget"]["max_iterations"] == loop["budget"]["limit"]
    assert dag["budget"]["remaining_iterations"] == loop["budget"]["left"]
    trend = loop["details"]["trend"]
    for key in ("direction", "slope", "acceleration", "is_plateauing", "predicted_convergence_iteration", "achievable"):
        assert dag["trend"][key] == trend[key], key
    monitor = next(r for r in dag["recommendations"] if r["rule"] == "convergence_monitor")
    assert re.sub(r"^Convergence monitor: |\.$", "", monitor["message"]) in " ".join(loop["stop_rule"]["reasons"])

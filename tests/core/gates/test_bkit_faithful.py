"""bkit's gates write only what bkit accepts (issue 15, points 5, 6, 8, 12; the max-iterations and
sprint gates). bkit's own code checks the same states in tests/oracles/test_oracle_bkit.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scars.core import gates
from scars.core.errors import DecisionRefused
from scars.core.loops import discover_loops
from scars.core.loops.bkit import reader as bkit
from scars.tui.cli import main as cli
from tests.factories import bkit_project, clean_env

USER = "alice"


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)


def feature(root: Path) -> dict:
    return json.loads((root / ".bkit/state/pdca-status.json").read_text())["features"]["login"]


@pytest.mark.parametrize("count, refused", [(4, True), (5, False)])
def test_partial_is_refused_below_the_limit(tmp_path, count, refused):
    """Before: partial wrote phase report from anywhere (act → report is no bkit transition)."""
    bkit_project(tmp_path, count=count)
    ev = gates.gather("pdca-continue", tmp_path)
    assert ("partial" in ev.refused) is refused
    if refused:
        assert "guardMaxIterReached" in ev.refused["partial"]


def test_partial_writes_getphasenumber_and_keeps_the_iterators_status(tmp_path):
    """Before: phase report kept phaseNumber 5 and lastIterationStatus became `partial`."""
    sf = bkit_project(tmp_path, count=5)
    data = json.loads(sf.read_text())
    data["features"]["login"].update(phase="act", phaseNumber=5)
    sf.write_text(json.dumps(data, indent=2))
    res = gates.record(gates.gather("pdca-continue", tmp_path), "partial", "two UX empty states remain", user=USER)
    f = feature(tmp_path)
    assert (f["phase"], f["phaseNumber"], f["lastIterationStatus"]) == ("report", 7, "completed")
    assert res.extra["transitions"] == ["ANALYZE_DONE (act → check)", "REPORT_DONE (check → report)"]
    [state] = [s for s in discover_loops(tmp_path) if s.kind == "bkit"]
    assert not state.waiting_for_human and state.route == "done"  # point 6: the inbox clears


def test_stop_is_abandon_not_a_status_bkit_never_writes(tmp_path):
    bkit_project(tmp_path, count=2)
    gates.record(gates.gather("pdca-continue", tmp_path), "stop", "the login redesign replaces it", user=USER)
    f = feature(tmp_path)
    assert (f["phase"], f["phaseNumber"], f["archivedReason"]) == ("archived", 8, "abandoned")
    assert f["lastIterationStatus"] == "completed"  # never `stopped`


def test_an_unknown_last_iteration_status_is_reported(tmp_path):
    sf = bkit_project(tmp_path)
    data = json.loads(sf.read_text())
    data["features"]["login"]["lastIterationStatus"] = "stopped"  # what earlier scars versions wrote
    sf.write_text(json.dumps(data))
    [state] = bkit.read_status(sf, tmp_path)
    assert any("not a value bkit's iterator writes" in p.message for p in state.parse_failures)


def test_the_history_stays_a_ring_of_100(tmp_path):
    sf = bkit_project(tmp_path, count=5)
    data = json.loads(sf.read_text())
    data["history"] = [{"timestamp": "t", "feature": "x", "phase": "do", "action": f"a{i}"} for i in range(100)]
    sf.write_text(json.dumps(data))
    gates.record(gates.gather("pdca-continue", tmp_path), "partial", "two UX empty states remain", user=USER)
    history = json.loads(sf.read_text())["history"]
    assert len(history) == 100 and history[-1]["action"] == "human_gate" and history[0]["action"] == "a2"


# --------------------------------------------------------------------------- max iterations


def test_the_max_iterations_question(tmp_path):
    bkit_project(tmp_path, count=5)
    [state] = [s for s in discover_loops(tmp_path) if s.kind == "bkit"]
    assert state.waiting_for_human and "manual fix, complete as-is, update design" in state.reason
    ev = gates.gather("pdca-max-iterations", tmp_path)
    assert ev.workflow_prompt == "Maximum iterations reached (82%). How to proceed? (5 of 5 iterations)"
    assert [a.label for a in ev.gate.answers] == ["Manual fix", "Complete as-is", "Update design", "Stop"]
    assert ev.default == "manual-fix" and not ev.refused
    gates.record(ev, "manual-fix", None, user=USER)
    [state] = [s for s in discover_loops(tmp_path) if s.kind == "bkit"]
    assert not state.waiting_for_human and "answered manual-fix" in state.reason
    # A new analysis (another rate) makes the answer stale: waiting again.
    sf = tmp_path / ".bkit/state/pdca-status.json"
    data = json.loads(sf.read_text())
    data["features"]["login"]["matchRate"] = 84
    sf.write_text(json.dumps(data))
    [state] = [s for s in discover_loops(tmp_path) if s.kind == "bkit"]
    assert state.waiting_for_human


@pytest.mark.parametrize("count, refused", [(4, True), (5, False)])
def test_complete_as_is_only_at_the_limit(tmp_path, count, refused):
    bkit_project(tmp_path, count=count)
    assert ("accept" in gates.gather("pdca-max-iterations", tmp_path).refused) is refused


def test_max_iterations_from_every_front_end(tmp_path, capsys, monkeypatch):
    bkit_project(tmp_path / "a", count=5)
    argv = [
        "gate",
        "pdca-max-iterations",
        str(tmp_path / "a"),
        "--answer",
        "u",
        "--reason",
        "the design names a dropped field",
    ]
    assert cli.main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["answer"] == "update-design"
    bkit_project(tmp_path / "b", count=5)
    monkeypatch.setenv("SCARS_ANSWER_PDCA_MAX_ITERATIONS", "accept")
    monkeypatch.setenv("SCARS_REASON_PDCA_MAX_ITERATIONS", "ship with the two states flagged")
    assert cli.main(["gate", "pdca-max-iterations", str(tmp_path / "b"), "--json"]) == 0
    assert feature(tmp_path / "b")["phase"] == "report"


# --------------------------------------------------------------------------- legacy file


def test_a_legacy_status_beside_the_current_one_is_reported(tmp_path):
    """Before: docs/.pdca-status.json was ignored without a word when both existed."""
    bkit_project(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / ".pdca-status.json").write_text(json.dumps({"features": {}}))
    [state] = [s for s in discover_loops(tmp_path) if s.kind == "bkit"]
    assert any(p.file == "docs/.pdca-status.json" and "not read" in p.message for p in state.parse_failures)


def many_features(path: Path, n: int) -> None:
    """A status file of ``n`` features in check, 72 %, at the limit (5 of 5): each would wait."""
    features = {f"f{i:02d}": {"phase": "check", "matchRate": 72, "iterationCount": 5} for i in range(n)}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"features": features}), encoding="utf-8")


def test_the_legacy_notice_is_said_once_for_a_file_of_many_features(tmp_path):
    """Before: "the legacy status file is not read" was repeated with each of the 42 features."""
    many_features(tmp_path / ".bkit/state/pdca-status.json", 42)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / ".pdca-status.json").write_text(json.dumps({"features": {}}))
    states = [s for s in discover_loops(tmp_path) if s.kind == "bkit"]
    assert len(states) == 42
    notices = [p for s in states for p in s.parse_failures if "not read" in p.message]
    assert len(notices) == 1
    # the gate of a feature other than the first still says it (the file's problems are its too)
    ev = gates.gather("pdca-max-iterations", tmp_path, feature="f41")
    assert sum("legacy status file is not read" in w for w in ev.warnings) == 1


def test_a_v1_legacy_file_is_shown_marked_and_never_written(tmp_path, capsys):
    """bkit v1.5's docs/.pdca-status.json (v1.0 shape: currentFeature, no phaseNumber), which the
    current bkit neither reads nor migrates: shown, marked, waiting for nobody, no gate."""
    legacy = tmp_path / "docs" / ".pdca-status.json"
    legacy.parent.mkdir()
    legacy.write_text(
        json.dumps(
            {
                "version": "1.0",
                "currentFeature": "login",
                "features": {
                    "login": {"phase": "check", "matchRate": 72, "iterationCount": 5},
                    "signup": {"phase": "act", "matchRate": 80, "iterationCount": 1},
                },
            }
        )
    )
    before = legacy.read_bytes()
    states = [s for s in discover_loops(tmp_path) if s.kind == "bkit"]
    assert {s.name for s in states} == {"login", "signup"}
    assert all(s.details["format"] == bkit.LEGACY_FORMAT and not s.waiting_for_human for s in states)
    # at the limit below the threshold a current file waits for a person; this one does not
    assert next(s for s in states if s.name == "login").stop_rule.outcome == "failure"
    assert cli.main(["loops", str(tmp_path), "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert [loop["gate"] for loop in obj["loops"]] == [None, None]
    assert obj["waiting"] == 0
    assert cli.main(["loops", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.count(bkit.LEGACY_NOTICE) == 1 and out.count(bkit.LEGACY_FORMAT + ", read-only") == 2
    for gate in ("pdca-continue", "pdca-max-iterations"):
        assert cli.main(["gate", gate, str(tmp_path), "--bkit-feature", "login", "--answer", "accept"]) == 2
        assert "neither reads nor migrates" in capsys.readouterr().err
    assert legacy.read_bytes() == before and not (tmp_path / "docs" / "auto-decisions.md").exists()


# --------------------------------------------------------------------------- sprints (point 8)


def sprint(root: Path, **data) -> Path:
    path = root / ".bkit/state/sprints/s1.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    base = {"id": "s1", "phase": "iterate", "status": "active", "features": ["login"], "iterateHistory": []}
    base.update(data)
    path.write_text(json.dumps(base, indent=2))
    return path


def test_a_paused_sprint_is_waiting_with_its_trigger_and_actions(tmp_path):
    pause = {"pausedAt": "2026-03-01T00:00:00Z", "trigger": "PHASE_TIMEOUT", "severity": "MEDIUM"}
    pause |= {
        "message": "Phase design elapsed > 4h timeout",
        "userActions": list(bkit.AUTO_PAUSE_ACTIONS["PHASE_TIMEOUT"]),
    }
    path = sprint(
        tmp_path, phase="design", status="paused", autoPause={"lastTrigger": "PHASE_TIMEOUT", "pauseHistory": [pause]}
    )
    state = bkit.read_sprint(path, tmp_path)
    assert state.waiting_for_human and state.route == "paused"
    assert state.reason.startswith("auto-paused by PHASE_TIMEOUT: Phase design elapsed > 4h timeout")
    # A `blocked` key (never persisted by bkit) no longer decides anything.
    path = sprint(tmp_path, blocked=True)
    assert not bkit.read_sprint(path, tmp_path).waiting_for_human


@pytest.mark.parametrize("tokens, fires", [(1_000_000, False), (1_000_001, True)])
def test_budget_exceeded_boundary(tmp_path, tokens, fires):
    path = sprint(tmp_path, kpi={"cumulativeTokens": tokens})
    state = bkit.read_sprint(path, tmp_path)
    assert bool(state.details["triggers_firing"]) is fires and state.waiting_for_human is fires


def test_sprint_answers_follow_the_trigger(tmp_path):
    pause = {"trigger": "BUDGET_EXCEEDED", "message": "Cumulative tokens 1500000 > budget 1000000"}
    pause["userActions"] = list(bkit.AUTO_PAUSE_ACTIONS["BUDGET_EXCEEDED"])
    sprint(tmp_path, status="paused", kpi={"cumulativeTokens": 1_500_000}, autoPause={"pauseHistory": [pause]})
    ev = gates.gather("sprint-pause", tmp_path)
    assert set(ev.refused) >= {"fix-resume", "forward-fix", "carry-over", "force-advance", "extend-timeout"}
    assert ev.refused["increase-budget"] == "give the new tokens with --value N"
    assert "abort" not in ev.refused  # "abort with partial report" / "archive as-is"
    with pytest.raises(DecisionRefused):
        gates.record(ev, "fix-resume", "the tokens were miscounted", user=USER)


def test_sprint_gate_value_from_the_command_line_and_an_answers_file(tmp_path, capsys):
    pause = {"trigger": "BUDGET_EXCEEDED", "userActions": list(bkit.AUTO_PAUSE_ACTIONS["BUDGET_EXCEEDED"])}
    for name in ("a", "b"):
        sprint(
            tmp_path / name, status="paused", kpi={"cumulativeTokens": 1_500_000}, autoPause={"pauseHistory": [pause]}
        )
    argv = ["gate", "sprint-pause", str(tmp_path / "a"), "--answer", "increase-budget", "--value", "2000000"]
    assert cli.main([*argv, "--reason", "the migration needs half a million more", "--json"]) == 0
    data = json.loads((tmp_path / "a/.bkit/state/sprints/s1.json").read_text())
    assert (data["config"]["budget"], data["status"]) == (2_000_000, "active")
    answers = tmp_path / "answers.yaml"
    answers.write_text("sprint-pause: {answer: increase-budget, value: 1800000, reason: one more feature fits}\n")
    capsys.readouterr()
    assert cli.main(["gate", "sprint-pause", str(tmp_path / "b"), "--answers", str(answers)]) == 0
    assert json.loads((tmp_path / "b/.bkit/state/sprints/s1.json").read_text())["config"]["budget"] == 1_800_000


@pytest.mark.parametrize("number", ["1e999", "-1e999"])
def test_a_number_json_cannot_hold_is_never_written_back_as_infinity(tmp_path, number):
    """Issue 27: a state value `1e999` (read as infinity) was written back as `Infinity`, which is
    not JSON: bkit's node then failed on its own state file. The record is refused, the file kept."""
    state = bkit_project(tmp_path)
    text = state.read_text().replace('"history": []', f'"history": [], "budgetMs": {number}')
    state.write_text(text)

    def loop_files() -> dict:  # bkit's own files (scars' lock under .scars/ is its own bookkeeping)
        return {p: p.read_bytes() for p in state.parent.rglob("*") if p.is_file() and ".scars" not in p.parts}

    before = loop_files()
    with pytest.raises(DecisionRefused, match=r"budgetMs.*not a finite number.*nothing was written"):
        gates.record(gates.gather("pdca-continue", tmp_path), "stop", "the login redesign replaces it", user=USER)
    assert loop_files() == before
    assert (
        not (tmp_path / ".bkit" / "auto-decisions.md").exists()
        or "Infinity" not in (tmp_path / ".bkit" / "auto-decisions.md").read_text()
    )


def test_a_finite_large_number_is_written_back_as_it_was_read(tmp_path):
    """The other side of the boundary: the largest finite double survives a record unchanged."""
    state = bkit_project(tmp_path)
    state.write_text(state.read_text().replace('"history": []', '"history": [], "budgetMs": 1.7976931348623157e308'))
    gates.record(gates.gather("pdca-continue", tmp_path), "stop", "the login redesign replaces it", user=USER)
    assert json.loads(state.read_text())["budgetMs"] == 1.7976931348623157e308
    assert "Infinity" not in state.read_text()

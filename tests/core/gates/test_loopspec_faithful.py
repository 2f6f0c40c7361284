"""loop-spec's gates as the seed words them (issue 15, points 2–4; the escalate route, the spec
freeze and the harvest preview). The engine itself is run in tests/oracles/test_oracle_loopspec.py."""

from __future__ import annotations

import json

import pytest

from scars.core import gates
from scars.core.errors import DecisionRefused
from scars.core.loops import discover_loops
from scars.core.loops.loopspec.reader import posix_cksum, read_feature
from tests.factories import SPEC_GAP, clean_env, loop_spec_feature

USER = "alice"


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)


def edit(fdir, **changes):
    path = fdir / "feature.json"
    data = json.loads(path.read_text())
    for key, value in changes.items():
        if key == "iterate":
            data["iterate"].update(value)
        else:
            data[key] = value
    path.write_text(json.dumps(data, indent=2) + "\n")


def test_reopen_the_loop_asks_for_needs_no_reason(tmp_path):
    fdir = loop_spec_feature(tmp_path)
    ev = gates.gather("spec", fdir)
    assert "reopen" not in ev.reason_required
    assert "completedPhases loses discuss, plan, execute, verify" in dict(ev.figures)["reopen undoes"]


@pytest.mark.parametrize(
    "changes",
    [
        {"iterate": {"feedback": None, "lastVerdict": None, "lastRoute": None}},  # no gap recorded
        {
            "iterate": {
                "lastVerdict": {"converged": True, "deterministic_gate_passed": True, "summary": "ok"},
                "feedback": None,
                "lastRoute": "deliver",
            }
        },  # converged
        {"iterate": {"feedback": {**SPEC_GAP, "type": "execute"}, "lastRoute": "execute"}},  # not a spec gap
    ],
)
def test_a_rewind_the_loop_does_not_call_for_needs_a_reason(tmp_path, changes):
    """Before: reopen was accepted with no reason whatever the state."""
    fdir = loop_spec_feature(tmp_path)
    edit(fdir, **changes)
    ev = gates.gather("spec", fdir)
    assert "reopen" in ev.reason_required
    with pytest.raises(DecisionRefused, match="needs a reason"):
        gates.record(ev, "reopen", None, user=USER)
    res = gates.record(ev, "reopen", "the goal itself was wrong: devices sync over LAN only", user=USER)
    text = (fdir / "auto-decisions.md").read_text()
    assert "reopen undoes: completedPhases loses discuss, plan, execute, verify" in text
    assert res.answer == "reopen"


def test_reopen_retires_the_spec_freeze_and_the_intent(tmp_path):
    fdir = loop_spec_feature(tmp_path)
    approval = {"approvedAt": "2026-08-08T15:00:00Z", "goal": "sync"}
    edit(fdir, specApproval=approval, specApprovalHistory=[{"approvedAt": "2026-08-01T00:00:00Z"}], specIntentSeen=True)
    ev = gates.gather("spec", fdir)
    assert dict(ev.figures)["spec freeze"].startswith("specApproval held")
    assert "retired into specApprovalHistory" in dict(ev.figures)["reopen undoes"]
    gates.record(ev, "reopen", None, user=USER)
    data = json.loads((fdir / "feature.json").read_text())
    assert data["specApproval"] is None and data["specApprovalHistory"][-1] == approval
    assert len(data["specApprovalHistory"]) == 2 and data["specIntentSeen"] is False
    assert data["currentPhase"] == "discuss" and data["completedPhases"] == ["spec"]


def test_ship_records_every_open_gap_as_harvest_would(tmp_path):
    fdir = loop_spec_feature(tmp_path)
    second = {"type": "execute", "description": "conflict UI missing", "fix_first": "add the conflict dialog"}
    edit(
        fdir,
        iterate={
            "lastVerdict": {
                **json.loads((fdir / "feature.json").read_text())["iterate"]["lastVerdict"],
                "remaining_gaps": [second],
            }
        },
    )
    res = gates.record(gates.gather("spec", fdir), "ship", "offline and conflicts are v2 scope", user=USER)
    data = json.loads((fdir / "feature.json").read_text())
    assert data["warnings"][1:] == [
        f"iterate-budget-spent: {SPEC_GAP['description']} — fix first: {SPEC_GAP['fix_first']}",
        "iterate-budget-spent: conflict UI missing — fix first: add the conflict dialog",
    ]
    assert res.extra["warnings_added"] == data["warnings"][1:]
    backlog = (tmp_path / ".loop-spec" / "BACKLOG.md").read_text()
    assert backlog.startswith("# BACKLOG.md\n\nDeferred work harvested by loop-spec:")  # backlog.sh's header
    assert backlog.count("iterate-gap") == 2
    state = read_feature(fdir / "feature.json")
    assert state.stop_rule.outcome == "delivered_with_gaps" and state.status == "delivered with gaps"
    assert not state.waiting_for_human


def test_the_ledger_record_is_the_engines_shape(tmp_path):
    fdir = loop_spec_feature(tmp_path)
    (fdir / "graph-pause.json").write_text(json.dumps({"paused": True, "node": "human.iterate-spec-approval"}))
    gates.record(gates.gather("spec", fdir), "ship", "offline mode is v2 scope", user=USER)
    assert not (fdir / "graph-pause.json").exists()
    record = json.loads((fdir / "graph-checkpoints.jsonl").read_text())
    assert list(record) == ["node", "stateHash", "gitSha", "ts", "effort", "edge"]
    assert record["node"] == "iterate" and record["stateHash"] == posix_cksum((fdir / "feature.json").read_bytes())
    assert record["edge"] == "human.iterate-spec-approval:ship (scars gate, decision-001)"


# --------------------------------------------------------------------------- escalate


def escalated(tmp_path, **gap):
    fdir = loop_spec_feature(tmp_path, gap={**SPEC_GAP, "type": "execute", "needs_operator": True, **gap})
    edit(fdir, iterate={"lastRoute": "escalate"})
    return fdir


def test_the_escalate_route_is_a_gate(tmp_path):
    fdir = escalated(tmp_path)
    [state] = discover_loops(tmp_path)
    assert state.waiting_for_human and state.route == "escalate"
    ev = gates.gather("escalate", fdir)
    assert ev.workflow_prompt.startswith("ITERATE escalated: the gap needs an operator. Fix first: define offline")
    assert ev.default == "stop" and [a.value for a in ev.gate.answers] == ["resume", "ship", "stop"]
    with pytest.raises(DecisionRefused, match="needs a reason"):
        gates.record(ev, "resume", None, user=USER)
    gates.record(ev, "resume", "the operator unlocked the cloud credential", user=USER)
    data = json.loads((fdir / "feature.json").read_text())
    assert data["iterate"]["feedback"]["needs_operator"] is False and data["iterate"]["lastRoute"] == "execute"
    assert not read_feature(fdir / "feature.json").waiting_for_human


def test_escalate_stop_hands_back_and_clears_the_inbox(tmp_path):
    fdir = escalated(tmp_path)
    gates.record(gates.gather("escalate", fdir), "stop", None, user=USER)
    state = read_feature(fdir / "feature.json")
    assert not state.waiting_for_human and state.status == "handed back"


def test_escalate_answers_from_the_environment_and_answers_files(tmp_path, monkeypatch, capsys):
    from scars.tui.cli import main as cli

    fdir = escalated(tmp_path / "a")
    monkeypatch.setenv("SCARS_ANSWER_ESCALATE", "ship")
    monkeypatch.setenv("SCARS_REASON_ESCALATE", "the credential stays locked; delivered without sync")
    assert cli.main(["gate", "escalate", str(fdir), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["source"] == "environment SCARS_ANSWER_ESCALATE"
    monkeypatch.delenv("SCARS_ANSWER_ESCALATE")
    fdir = escalated(tmp_path / "b")
    answers = tmp_path / "answers.yaml"
    answers.write_text("escalate: {answer: stop}\n")
    assert cli.main(["gate", "escalate", str(fdir), "--answers", str(answers)]) == 0


# --------------------------------------------------------------------------- harvest preview


def test_the_harvest_preview_is_shown_when_the_limit_is_spent(tmp_path):
    fdir = loop_spec_feature(tmp_path)
    edit(fdir, iterate={"used": 10, "confirmationUsed": True, "lastRoute": "harvest"})
    state = read_feature(fdir / "feature.json")
    assert state.details["harvest_preview"] == [
        f"iterate-budget-spent: {SPEC_GAP['description']} — fix first: {SPEC_GAP['fix_first']}"
    ]
    assert any(r.startswith("harvest would write: iterate-budget-spent:") for r in state.stop_rule.reasons)
    # The same gap a second time: the terminal rule.
    from scars.core.loops.loopspec.reader import gap_id

    edit(fdir, backlogEntryId=gap_id(SPEC_GAP["fix_first"]))
    state = read_feature(fdir / "feature.json")
    assert state.details["harvest_terminal"] and state.details["harvest_preview"][0].startswith("iterate-terminal:")
    # Rounds left: nothing to preview.
    edit(fdir, iterate={"used": 3, "confirmationUsed": False, "lastRoute": "spec"})
    assert read_feature(fdir / "feature.json").details["harvest_preview"] == []

"""Every gate answered without a terminal from each source: --answer, SCARS_ANSWER_<GATE>, --answers FILE."""

from __future__ import annotations

import json

import pytest
import yaml

from scars.core.formats.auto_decisions import parse_auto_decisions
from scars.core.gates.catalog import GATES
from scars.core.samsara.session import FeatureSession
from scars.tui.cli import main as cli
from tests.factories import bkit_project, clean_env, item_id, loop_spec_feature, mechanist_state, samsara_feature


def _samsara(tmp_path, *, round_open=True, flat_rounds=0, fix=False):
    f = samsara_feature(tmp_path, auto=True)  # auto mode: samsara gates append their entries
    retry = item_id(f, "Retry count is hard-coded to 3")
    with FeatureSession.open(f, user="setup") as s:
        for _ in range(flat_rounds):
            s.start_round()
            s.close_round("continue", "still looking for the root cause")
        if round_open:
            s.start_round()
        if fix:
            s.decide(retry, "fix")
    return f, f, {"item": retry}


def _setup(gate, tmp_path):
    if gate == "entry":
        return _samsara(tmp_path, round_open=False)
    if gate == "round-continue":
        return _samsara(tmp_path)
    if gate == "safety-valve":
        return _samsara(tmp_path, flat_rounds=1)
    if gate == "blocked-fix":
        return _samsara(tmp_path, fix=True)
    if gate == "spec":
        d = loop_spec_feature(tmp_path)
        return d, d, {}
    if gate == "escalate":
        gap = {"type": "execute", "description": "the cloud credential is locked", "fix_first": "unlock it"}
        d = loop_spec_feature(tmp_path, gap={**gap, "needs_operator": True})
        data = json.loads((d / "feature.json").read_text())
        data["iterate"]["lastRoute"] = "escalate"
        (d / "feature.json").write_text(json.dumps(data))
        return d, d, {}
    if gate == "review-continue":
        stage = mechanist_state(tmp_path, score=5, verdict="not ready")
        return stage, stage, {}
    if gate == "sprint-pause":
        sprint = tmp_path / ".bkit" / "state" / "sprints" / "s1.json"
        sprint.parent.mkdir(parents=True)
        pause = {"trigger": "ITERATION_EXHAUSTED", "userActions": ["forward fix", "carry to next sprint", "abort"]}
        sprint.write_text(
            json.dumps({"id": "s1", "phase": "iterate", "status": "paused", "autoPause": {"pauseHistory": [pause]}})
        )
        return tmp_path, sprint.parent.parent, {}
    if gate == "dag-escalate":
        report = tmp_path / "dag" / "decision.yaml"
        report.parent.mkdir(parents=True)
        trigger = {"type": "validation_failure", "severity": 0.7, "code": "TYPE_MISMATCH", "fixable": True}
        report.write_text(
            yaml.safe_dump(
                {"iterationDecision": {"taskId": "t", "decision": {"needsIteration": True}, "triggers": [trigger]}}
            )
        )
        return tmp_path, report.parent, {}
    d = bkit_project(tmp_path, count=5)  # at bkit's limit: the forced report (PARTIAL) is a transition it has
    return tmp_path, d.parent, {}


CASES = {
    "entry": ("skip", "the cache feature next week fixes the shared key"),
    "round-continue": ("stop", "nothing actionable is left this round"),
    "safety-valve": ("stop", "flat twice: stop as the valve suggests"),
    "blocked-fix": ("defer", "the vendor sandbox is down until March"),
    "spec": ("ship", "offline sync is v2 scope and on the backlog"),
    "review-continue": ("stop", "the reviewer keeps asking for a new dataset"),
    "pdca-continue": ("partial", "two UX empty states are left; tracked in the report"),
    "escalate": ("ship", "the credential stays locked; delivered without cloud sync"),
    "pdca-max-iterations": ("accept", "generate the report with the two empty states flagged"),
    "sprint-pause": ("carry-over", "84% is what this sprint reaches; login moves on"),
    "dag-escalate": ("retry", "emit the field as a string, as the schema says"),
}


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)


@pytest.mark.parametrize("source", ["flag", "env", "file"])
@pytest.mark.parametrize("gate", list(CASES))
def test_every_gate_from_every_source(gate, source, tmp_path, monkeypatch, capsys):
    path, decisions_dir, extra = _setup(gate, tmp_path / "w")
    answer, reason = CASES[gate]
    argv = ["gate", gate, str(path), "--json"]
    if extra.get("item") and source != "file":
        argv += ["--item", extra["item"]]
    if source == "flag":
        argv += ["--answer", answer, "--reason", reason]
    elif source == "env":
        var = "SCARS_ANSWER_" + gate.upper().replace("-", "_")
        monkeypatch.setenv(var, answer)
        monkeypatch.setenv(var.replace("ANSWER", "REASON"), reason)
    else:
        entry = {"answer": answer, "reason": reason, **extra}
        f = tmp_path / "answers.yaml"
        f.write_text(yaml.safe_dump({gate: entry}))
        argv += ["--answers", str(f)]
    code = cli.main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    obj = json.loads(out)
    assert (obj["gate"], obj["answer"], obj["reason"], obj["decided_by"]) == (gate, answer, reason, "alice")
    entries = parse_auto_decisions((decisions_dir / "auto-decisions.md").read_text(encoding="utf-8"))
    # the entry id of the decision point; a blocked fix follows the round's triage entry (the fix decision)
    assert [e.gate_id for e in entries] == (["triage"] if gate == "blocked-fix" else []) + [GATES[gate].entry_id]
    assert entries[-1].fields["decision"] == obj["decision"]
    assert not any(e.problems for e in entries)

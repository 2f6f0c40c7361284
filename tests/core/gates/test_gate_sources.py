"""Every gate answered without a terminal from each source: --answer, SCARS_ANSWER_<GATE>, --answers FILE."""

from __future__ import annotations

import json

import pytest
import yaml

from scars.core.formats.auto_decisions import parse_auto_decisions
from scars.core.loops.registry import GATES
from scars.tui.cli import main as cli
from tests.factories import GATE_ANSWERS, clean_env, gate_state


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)


@pytest.mark.parametrize("source", ["flag", "env", "file"])
@pytest.mark.parametrize("gate", list(GATE_ANSWERS))
def test_every_gate_from_every_source(gate, source, tmp_path, monkeypatch, capsys):
    path, decisions_dir, extra = gate_state(gate, tmp_path / "w")
    answer, reason = GATE_ANSWERS[gate]
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

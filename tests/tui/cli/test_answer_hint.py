"""The command `scars gate` prints at exit 3 ("Answer it with:") answers that very gate when run
as printed: on what the gate selected (the bkit feature, the item, the sprint's file), with an
answer the gate takes there, and with ``--reason`` exactly where that answer needs one. Before:
it dropped ``--bkit-feature`` (run as printed it targeted the primary feature) and suggested the
gate's first answer even where it was refused or needed a reason (exit 4)."""

from __future__ import annotations

import json
import shlex

import pytest

from scars.core.formats.auto_decisions import parse_auto_decisions
from tests.factories import GATE_ANSWERS, bkit_project, clean_env, gate_state, mechanist_state, run_cli

REASON = "the figures on screen settle it for this round"


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)


def printed_command(err: str) -> list[str]:
    """The words of the command under "Answer it with:", without its "(answers: …)" note."""
    line = err.split("Answer it with:\n", 1)[1].splitlines()[0].strip()
    command = line.rsplit(" (answers: ", 1)[0]
    words = shlex.split(command)
    assert words[:2] == ["scars", "gate"], line
    return words[1:]


def run_as_printed(argv: list[str], capsys) -> tuple[list[str], int, str]:
    code, _out, err = run_cli(argv, capsys)
    assert code == 3, err
    words = printed_command(err)
    code, _out, err = run_cli(words, capsys)
    return words, code, err


def entries(decisions_dir) -> list:
    path = decisions_dir / "auto-decisions.md"
    return parse_auto_decisions(path.read_text(encoding="utf-8")) if path.exists() else []


@pytest.mark.parametrize("gate", list(GATE_ANSWERS))
def test_every_printed_command_runs_as_printed(gate, tmp_path, capsys):
    path, decisions_dir, extra = gate_state(gate, tmp_path / "w")
    argv = ["gate", gate, str(path)] + (["--item", extra["item"]] if extra.get("item") else [])
    words, code, err = run_as_printed(argv, capsys)
    if "--reason" in words:
        # it said a reason is needed, and WHY (its placeholder) is refused as one: nothing else
        assert code == 4 and "needs a reason" in err, err
        assert entries(decisions_dir) == []
        words[words.index("--reason") + 1] = REASON
        code, _out, err = run_cli(words, capsys)
    assert code == 0, (words, err)
    assert entries(decisions_dir), "the printed command recorded nothing"


def test_the_printed_command_keeps_the_bkit_feature_asked_about(tmp_path, capsys):
    status = bkit_project(tmp_path, count=5)
    data = json.loads(status.read_text())
    data["features"]["signup"] = {**data["features"]["login"], "matchRate": 64}
    status.write_text(json.dumps(data))
    words, code, err = run_as_printed(
        ["gate", "pdca-max-iterations", str(tmp_path), "--bkit-feature", "signup"], capsys
    )
    assert words[words.index("--bkit-feature") + 1] == "signup"
    assert code == 0, err
    history = json.loads(status.read_text())["history"]
    assert [h["feature"] for h in history if h.get("gate")] == ["signup"]


def test_the_printed_command_names_the_feature_the_gate_picked(tmp_path, capsys):
    bkit_project(tmp_path, count=5)  # one active feature: picked without --bkit-feature
    words, code, _err = run_as_printed(["gate", "pdca-continue", str(tmp_path)], capsys)
    assert words[words.index("--bkit-feature") + 1] == "login"


def test_a_refused_answer_is_never_the_printed_one(tmp_path, capsys):
    """Below bkit's limit `accept` (the max-iterations gate's forced report) is refused."""
    bkit_project(tmp_path, count=4)
    code, _out, err = run_cli(["gate", "pdca-max-iterations", str(tmp_path)], capsys)
    assert code == 3
    words = printed_command(err)
    answer = words[words.index("--answer") + 1]
    assert answer != "accept"
    note = err.split("Answer it with:\n", 1)[1].splitlines()[0]
    assert "refused here: " in note and "accept" in note.split("refused here: ", 1)[1]


def test_a_reason_is_printed_where_the_evidence_needs_one(tmp_path, capsys):
    """After the stall guard continue needs a reason here (never in the catalog)."""
    stage = mechanist_state(tmp_path, score=5, verdict="not ready")
    state = json.loads((stage / "REVIEW_STATE.json").read_text())
    state["consecutive_noop_count"] = 2
    (stage / "REVIEW_STATE.json").write_text(json.dumps(state))
    code, _out, err = run_cli(["gate", "review-continue", str(stage)], capsys)
    assert code == 3
    note = err.split("Answer it with:\n", 1)[1].splitlines()[0]
    assert "--reason needed for continue" in note
    needed = note.split("--reason needed for ", 1)[1].split(";", 1)[0].split(", ")
    words = printed_command(err)
    answer = words[words.index("--answer") + 1]
    assert ("--reason" in words) == (answer in needed)

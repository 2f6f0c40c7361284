"""`scars gate` from a script and at a terminal: flags, variables, answers files, exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from scars.core.storage.lock import FeatureLock
from scars.tui.cli import main as cli
from scars.tui.cli.commands import gate as gate_cmd
from tests.factories import (
    bkit_project,
    clean_env,
    loop_spec_feature,
    mechanist_state,
    samsara_feature,
    tree_hashes,
)


def _run(argv, capsys):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)


def test_no_tty_and_no_answer_exits_3_at_once_naming_the_command(tmp_path):
    fdir = loop_spec_feature(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCARS_ANSWER_", "LOOP_SPEC_"))}
    # A gate that waited for input would hit the timeout (TimeoutExpired fails the test).
    proc = subprocess.run(
        [sys.executable, "-m", "scars.tui", "gate", "spec", str(fdir)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=10,
        env=env,
    )
    assert proc.returncode == 3
    assert f"scars gate spec {fdir} --answer reopen" in proc.stderr
    assert "SCARS_ANSWER_SPEC" in proc.stderr
    assert not (fdir / "auto-decisions.md").exists()


def test_no_tty_path_never_imports_questionary(tmp_path):
    fdir = loop_spec_feature(tmp_path)
    code = (
        "import sys; from scars.tui.cli import main as cli; rc = cli.main(['gate', 'spec', sys.argv[1]]);"
        "print('questionary' in sys.modules, 'prompt_toolkit' in sys.modules, rc)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(fdir)], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=10
    )
    assert proc.stdout.split() == ["False", "False", "3"]


def test_answer_flag_records_and_prints_one_json_object(tmp_path, capsys):
    fdir = loop_spec_feature(tmp_path)
    code, out, _ = _run(
        [
            "gate",
            "spec",
            str(fdir),
            "--answer",
            "ship",
            "--reason",
            "offline sync is v2 scope; backlog entry keeps it",
            "--json",
        ],
        capsys,
    )
    assert code == 0
    obj = json.loads(out)
    assert {k: obj[k] for k in ("gate", "answer", "decision", "reason", "decided_by")} == {
        "gate": "spec",
        "answer": "ship",
        "decision": "accept_gap",
        "reason": "offline sync is v2 scope; backlog entry keeps it",
        "decided_by": "alice",
    }
    assert obj["recorded"][0] == ".loop-spec/features/sync/auto-decisions.md"
    assert ".loop-spec/BACKLOG.md" in obj["recorded"]


def test_human_line_without_json(tmp_path, capsys):
    stage = mechanist_state(tmp_path, score=5, verdict="not ready")
    code, out, _ = _run(["gate", "review-continue", str(stage), "--answer", "a"], capsys)
    assert code == 0
    assert out.startswith(
        "gate review-continue: continue → proceed (by alice); recorded: review-stage/auto-decisions.md"
    )


def test_invalid_answer_exits_4_listing_the_valid_ones_and_records_nothing(tmp_path, capsys):
    fdir = loop_spec_feature(tmp_path)
    before = tree_hashes(tmp_path)
    code, out, err = _run(["gate", "spec", str(fdir), "--answer", "maybe", "--json"], capsys)
    assert code == 4
    assert "valid answers: reopen (r), ship (s), stop (h)" in err
    assert json.loads(out)["exit_code"] == 4
    assert tree_hashes(tmp_path) == before


def test_generic_reason_exits_4(tmp_path, capsys):
    sf = bkit_project(tmp_path, count=5)
    code, _, err = _run(
        ["gate", "pdca-continue", str(tmp_path), "--answer", "partial", "--reason", "looks good"], capsys
    )
    assert code == 4 and "generic" in err
    assert json.loads(sf.read_text())["features"]["login"]["phase"] == "check"


def test_environment_variable_answers_with_its_reason(tmp_path, capsys, monkeypatch):
    sf = bkit_project(tmp_path)
    monkeypatch.setenv("SCARS_ANSWER_PDCA_CONTINUE", "stop")
    monkeypatch.setenv("SCARS_REASON_PDCA_CONTINUE", "the design doc changed; re-plan before iterating")
    code, out, _ = _run(["gate", "pdca-continue", str(tmp_path), "--json"], capsys)
    assert code == 0
    obj = json.loads(out)
    assert obj["answer"] == "stop" and obj["reason"] == "the design doc changed; re-plan before iterating"
    assert obj["source"] == "environment SCARS_ANSWER_PDCA_CONTINUE"
    # bkit's ABANDON: archived (the iterator's lastIterationStatus is never written).
    f = json.loads(sf.read_text())["features"]["login"]
    assert (f["phase"], f["archivedReason"], f["lastIterationStatus"]) == ("archived", "abandoned", "completed")
    text = (sf.parent / "auto-decisions.md").read_text()
    assert "the design doc changed; re-plan before iterating" in text


def test_loop_spec_non_interactive_defaults_to_reopen(tmp_path, capsys, monkeypatch):
    fdir = loop_spec_feature(tmp_path)
    monkeypatch.setenv("LOOP_SPEC_NON_INTERACTIVE", "1")
    code, out, _ = _run(["gate", "spec", str(fdir), "--json"], capsys)
    assert code == 0 and json.loads(out)["answer"] == "reopen"
    assert json.loads((fdir / "feature.json").read_text())["currentPhase"] == "discuss"


def test_loop_spec_answer_ship_and_anything_else_exits_2(tmp_path, capsys, monkeypatch):
    fdir = loop_spec_feature(tmp_path)
    monkeypatch.setenv("LOOP_SPEC_NON_INTERACTIVE", "1")
    monkeypatch.setenv("LOOP_SPEC_ANSWER_ITERATE_SPEC", "stop")
    before = tree_hashes(tmp_path)
    code, _, err = _run(["gate", "spec", str(fdir)], capsys)
    assert code == 2 and "must be reopen (default) or ship" in err
    assert tree_hashes(tmp_path) == before
    monkeypatch.setenv("LOOP_SPEC_ANSWER_ITERATE_SPEC", "ship")
    code, out, _ = _run(["gate", "spec", str(fdir), "--json"], capsys)
    assert code == 0 and json.loads(out)["answer"] == "ship"
    data = json.loads((fdir / "feature.json").read_text())
    assert data["currentPhase"] == "deliver" and data["warnings"][-1].startswith("iterate-budget-spent:")


def test_lock_held_exits_5(tmp_path, capsys):
    fdir = loop_spec_feature(tmp_path)
    with FeatureLock(fdir, user="bob"):
        code, _, err = _run(["gate", "spec", str(fdir), "--answer", "reopen"], capsys)
    assert code == 5 and "bob" in err


def test_missing_path_exits_2(tmp_path, capsys):
    code, _, err = _run(["gate", "spec", str(tmp_path / "missing"), "--answer", "reopen"], capsys)
    assert code == 2 and "does not exist" in err


def test_answers_file_for_another_loop(tmp_path, capsys):
    fdir = loop_spec_feature(tmp_path)
    f = tmp_path / "answers.yaml"
    f.write_text("spec: {answer: ship, reason: offline sync is v2 scope and on the backlog}\n")
    code, out, _ = _run(["gate", "spec", str(fdir), "--answers", str(f), "--json"], capsys)
    assert code == 0 and json.loads(out)["answer"] == "ship"
    assert json.loads((fdir / "feature.json").read_text())["currentPhase"] == "deliver"


@pytest.mark.parametrize(
    "content",
    [
        "spec: ship\n",  # ship needs a reason
        "spec: [1, 2\n",  # not YAML
        "spec: reopen\nround-continue: stop\n",  # a samsara gate in a loop-spec file
        "ks-0123456789: fix\nspec: reopen\n",  # item decisions only for samsara
        "speck: reopen\n",  # unknown key
        "- spec\n",  # not a mapping
        "review-continue: continue\n",  # no answer for the named gate
    ],
)
def test_an_invalid_answers_file_changes_no_file(tmp_path, capsys, content):
    fdir = loop_spec_feature(tmp_path / "p")
    f = tmp_path / "answers.yaml"
    f.write_text(content)
    before = tree_hashes(tmp_path)
    code, _, err = _run(["gate", "spec", str(fdir), "--answers", str(f)], capsys)
    assert code == 4, err
    assert "nothing was recorded" in err
    assert tree_hashes(tmp_path) == before


# ---------------------------------------------------------------- at a terminal (pipe input)


def _interactive(monkeypatch, keys: str, argv, capsys):
    monkeypatch.setattr(gate_cmd, "_is_interactive", lambda: True)
    with create_pipe_input() as inp:
        inp.send_text(keys)
        with create_app_session(input=inp, output=DummyOutput()):
            code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_terminal_spec_single_key_then_enter(tmp_path, monkeypatch, capsys):
    fdir = loop_spec_feature(tmp_path)
    code, out, _ = _interactive(monkeypatch, "h\r", ["gate", "spec", str(fdir), "--json"], capsys)
    assert code == 0
    assert json.loads(out.strip().splitlines()[-1])["answer"] == "stop"
    assert "ITERATE judges the goal still unmet" in out  # the evidence was printed first


def test_terminal_reason_refuses_generic_and_asks_again(tmp_path, monkeypatch, capsys):
    fdir = loop_spec_feature(tmp_path)
    keys = "s\r" + "ok\r" + "\x7f\x7f" + "offline mode waits for v2\r"
    code, out, _ = _interactive(monkeypatch, keys, ["gate", "spec", str(fdir), "--json"], capsys)
    assert code == 0
    obj = json.loads(out.strip().splitlines()[-1])
    assert (obj["answer"], obj["reason"]) == ("ship", "offline mode waits for v2")


def test_terminal_refused_reason_is_not_kept_for_the_next_try(tmp_path, monkeypatch, capsys):
    """Issue 16: the refused "ok" stayed in the field, so the next reason was recorded as "ok…"."""
    fdir = loop_spec_feature(tmp_path)
    keys = "s\r" + "ok\r" + "offline mode waits for v2\r"
    code, out, _ = _interactive(monkeypatch, keys, ["gate", "spec", str(fdir), "--json"], capsys)
    assert code == 0
    assert json.loads(out.strip().splitlines()[-1])["reason"] == "offline mode waits for v2"
    assert "type the reason again" in out


def test_terminal_choices_name_their_letter_once_with_what_they_do(tmp_path, monkeypatch, capsys):
    """Issue 16: "a) (A) enter iteration …index.ya…" — the letter twice, the consequence cut."""
    fdir = samsara_feature(tmp_path)
    code, out, _ = _interactive(monkeypatch, "a\r", ["gate", "entry", str(fdir), "--json"], capsys)
    assert code == 0
    assert not re.search(r"\ba\s+\(A\)", out)  # the letter once
    flat = " ".join(out.split())
    assert "a enter iteration — enter samsara:iteration; remove any iteration_skip_record from index.yaml" in flat
    assert "b skip to validate-and-ship — write iteration_skip_record into index.yaml" in flat


def test_terminal_arrow_keys_pick_the_default_and_next(tmp_path, monkeypatch, capsys):
    bkit_project(tmp_path, count=5)  # at the limit: iterate is refused, the default is partial
    down = "\x1b[B"
    code, out, _ = _interactive(
        monkeypatch,
        down + "\r" + "the login redesign replaces this feature\r",
        ["gate", "pdca-continue", str(tmp_path), "--json"],
        capsys,
    )
    assert code == 0 and json.loads(out.strip().splitlines()[-1])["answer"] == "stop"


def test_terminal_interrupt_exits_130_and_records_nothing(tmp_path, monkeypatch, capsys):
    stage = mechanist_state(tmp_path)
    before = tree_hashes(tmp_path)
    code, _, err = _interactive(monkeypatch, "\x03", ["gate", "review-continue", str(stage)], capsys)
    assert code == 130
    assert tree_hashes(tmp_path) == before


def test_terminal_untrusted_text_is_shown_inert(tmp_path, monkeypatch, capsys):
    gap = {"type": "spec", "description": "evil \x1b]52;c;cGF5bG9hZA==\x07 [bold]x[/bold]", "fix_first": "f"}
    fdir = loop_spec_feature(tmp_path, gap=gap)
    code, out, _ = _interactive(monkeypatch, "r\r", ["gate", "spec", str(fdir)], capsys)
    assert code == 0
    assert "\x1b]52" not in out and "\x07" not in out
    assert "␛]52;c;cGF5bG9hZA==␇ [bold]x[/bold]" in out


def test_terminal_review_continue_one_key(tmp_path, monkeypatch, capsys):
    stage = mechanist_state(tmp_path, score=5, verdict="not ready")
    code, out, _ = _interactive(monkeypatch, "a\r", ["gate", "review-continue", str(stage), "--json"], capsys)
    assert code == 0
    assert json.loads(out.strip().splitlines()[-1])["answer"] == "continue"
    assert "STOP rule" in out


def test_the_blocked_fix_hint_names_the_item_asked_about(tmp_path, capsys):
    """Issue 16: the exit-3 hint printed `--item ITEM_ID` where the item was given."""
    from scars.core.gatekit.catalog import answers_hint
    from scars.core.loops.registry import get_gate

    gate = get_gate("blocked-fix")
    assert "--item ks-0123456789 --answer retry" in answers_hint(gate, "changes/x", "ks-0123456789")
    assert "--item ITEM_ID" in answers_hint(gate, "changes/x")

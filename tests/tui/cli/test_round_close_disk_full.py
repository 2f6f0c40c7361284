"""Round close on a full disk (issue 27): the round is in the journal before auto-decisions.md and
iteration-log.yaml are written, so a write that fails after the journal must not say "nothing was
recorded" (exit 1): it says which files hold the round and which do not, exits 8 (README, Exit
codes), and `scars round flush` writes the rest. The write fails (OSError ENOSPC inside the
durable layer) at each of the three files in turn, and at both files after the journal (what
about 20 KB of free disk does)."""

from __future__ import annotations

import errno
import json
import os
import re

import pytest

from scars.core.formats.auto_decisions import parse_auto_decisions
from scars.core.formats.iteration_log import read_iteration_log
from scars.core.storage import durable
from scars.core.storage.journal import journal_path, read_journal
from tests.factories import run_cli
from tests.hostile.faults import make_fault_feature

JOURNAL, AD, LOG = "journal.jsonl", "auto-decisions.md", "iteration-log.yaml"


def no_space_in(monkeypatch, *names: str) -> None:
    """Every durable write of a file named in ``names`` fails as a full disk fails it (os.write
    raises ENOSPC inside the durable layer: its cut-back and cleanup run as they would)."""

    def full(fd, data):  # os.write's
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def wrap(real):
        def write(where, *args, **kwargs):
            if where.name not in names:
                return real(where, *args, **kwargs)
            with pytest.MonkeyPatch.context() as m:
                m.setattr(os, "write", full)
                return real(where, *args, **kwargs)

        return write

    monkeypatch.setattr(durable, "_append_at", wrap(durable._append_at))
    monkeypatch.setattr(durable, "_atomic_write_at", wrap(durable._atomic_write_at))


def round_closes(feature) -> list[int]:
    return [r["round"] for r in read_journal(journal_path(feature)).records if r.get("type") == "round_close"]


def logged_rounds(feature) -> list[int]:
    return [r.round for r in read_iteration_log(feature / LOG).rounds]


def round_entries(feature) -> int:
    """The round decision entries auto-decisions.md holds (round 2's gate is the safety valve's:
    the fault feature stagnates)."""
    path = feature / AD
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    return sum(e.gate_id in ("round-continue", "safety-valve") for e in parse_auto_decisions(text))


CLOSE = ["round", "close", "--decision", "stop", "--reason", "nothing left worth a round"]


@pytest.mark.parametrize("auto", [True, False], ids=["auto", "human"])
@pytest.mark.parametrize("failing", [(JOURNAL,), (AD,), (LOG,), (AD, LOG)], ids="+".join)
def test_round_close_says_which_files_hold_the_round(failing, auto, tmp_path, monkeypatch, capsys):
    feature = make_fault_feature(tmp_path / "repo", items=4, auto=auto)
    assert run_cli(["round", "start", "--feature", str(feature)], capsys)[0] == 0
    log_before = (feature / LOG).read_bytes()
    with monkeypatch.context() as m:
        no_space_in(m, *failing)
        code, out, err = run_cli([*CLOSE, "--feature", str(feature)], capsys)
    ad_due = auto  # a human-mode close writes no auto-decisions.md entry: not named
    if failing == (AD,) and not ad_due:  # no file it goes to failed
        assert code == 0 and out.startswith("round 2 closed (stop)") and logged_rounds(feature) == [1, 2]
        return
    assert out == ""
    if failing == (JOURNAL,):  # nothing was recorded, and it is true
        assert code == 1
        assert "the disk is full; nothing was recorded" in err
        assert round_closes(feature) == [] and (feature / LOG).read_bytes() == log_before
        assert round_entries(feature) == 0
        assert run_cli(["round", "status", "--feature", str(feature), "--json"], capsys)[0] == 0
        assert run_cli([*CLOSE, "--feature", str(feature)], capsys)[0] == 0  # the round is still open
        assert logged_rounds(feature) == [1, 2]
        return
    assert code == 8, err
    assert "nothing was recorded" not in err
    assert "round 2 (stop): recorded in the journal (.scars/journal.jsonl written)" in err
    assert round_closes(feature) == [2]  # what the message says
    for name in (AD, LOG):
        if name in failing and (name != AD or ad_due):
            assert f"{name} NOT written (the disk is full)" in err
        elif name != AD or ad_due:
            assert f"{name} written" in err and f"{name} NOT" not in err
        else:
            assert name not in err
    assert (logged_rounds(feature) == [1, 2]) is (LOG not in failing)
    assert round_entries(feature) == (1 if ad_due and AD not in failing else 0)
    assert (LOG in failing) is ((feature / LOG).read_bytes() == log_before)  # a failed replace kept it whole
    # How to finish, said with the command to copy: `scars round flush` writes what the journal holds.
    said = re.search(r"`(scars round flush --feature \S+)`", err)
    assert said and said.group(1) == f"scars round flush --feature {feature}"
    code, out, _ = run_cli(["round", "flush", "--feature", str(feature), "--json"], capsys)
    assert code == 0
    done = json.loads(out)
    assert done["written"] == ([2] if LOG in failing else [])
    assert done["entries_written"] == (1 if ad_due and AD in failing else 0)
    assert logged_rounds(feature) == [1, 2] and round_closes(feature) == [2]
    assert round_entries(feature) == (1 if ad_due else 0)
    assert run_cli(["round", "flush", "--feature", str(feature)], capsys)[1] == (
        "iteration-log.yaml and auto-decisions.md are up to date\n"
    )


@pytest.mark.parametrize("failing", [(AD,), (LOG,), (AD, LOG)], ids="+".join)
def test_a_flush_on_a_still_full_disk_says_so_and_exits_8(failing, tmp_path, monkeypatch, capsys):
    feature = make_fault_feature(tmp_path / "repo", items=4, auto=True)
    assert run_cli(["round", "start", "--feature", str(feature)], capsys)[0] == 0
    no_space_in(monkeypatch, *failing)
    assert run_cli([*CLOSE, "--feature", str(feature)], capsys)[0] == 8
    code, out, err = run_cli(["round", "flush", "--feature", str(feature)], capsys)
    assert (code, out) == (8, "")
    assert f"{failing[-1]} NOT written (the disk is full)" in err and "recorded in the journal" in err
    assert "round 2: " in err if LOG in failing else "an auto-decisions.md entry: " in err
    monkeypatch.undo()
    code, out, _ = run_cli(["round", "flush", "--feature", str(feature)], capsys)
    said = {
        (AD,): "wrote 1 auto-decisions.md entry\n",
        (LOG,): "wrote round(s) 2 to iteration-log.yaml\n",
        (AD, LOG): "wrote round(s) 2 to iteration-log.yaml; wrote 1 auto-decisions.md entry\n",
    }
    assert (code, out) == (0, said[failing])


def test_every_exit_code_is_in_the_docs_and_the_help():
    """The codes the errors carry are the codes the Exit codes table (docs/commands.md) and `scars
    --help` list."""
    from pathlib import Path

    import scars.core.gates  # loads every error class
    import scars.core.storage.intent  # noqa: F401
    from scars.core.errors import ScarsError
    from scars.tui.cli.main import EPILOG

    def every(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from every(sub)

    codes = {ScarsError.exit_code} | {c.exit_code for c in every(ScarsError)}
    assert 8 in codes
    page = (Path(__file__).parents[3] / "docs" / "commands.md").read_text(encoding="utf-8")
    table = page.split("\n## Exit codes\n\n", 1)[1].split("\n\n", 1)[0]
    assert codes <= {int(c) for c in re.findall(r"^\| (\d+) \|", table, re.M)}
    assert codes - {1} <= {int(c) for c in re.findall(r"(\d+) [a-z]", EPILOG)}

"""A hostile repository: every path scars reads or writes is a symlink into a canary tree outside it.

Issue 27 §1. A clone someone else prepared may hold symlinks in place of the files and folders
scars writes (``feature.json.bak`` linked to a shell start-up file, ``.scars/`` linked to a folder of
the user's). Each case below builds a repository whose one path — a file or a folder of samsara,
loop-spec, ARIS / Mechanist, bkit, the DAG loop or the requests inbox — is a symlink to a copy of
what scars expects, kept in a canary tree outside the repository, and runs the command or gate
that reads or writes it (``scars decide``, ``round close``, ``gate … --answer``, ``gate --wait``,
``requests apply``, ``status``, ``loops``). Then:

* no byte outside the repository changed: the canary tree (and the folder holding the
  repository) is hashed before and after — type, mode, size, mtime, content or link target of
  every entry;
* nothing under the canary tree was even opened or listed (Python's audit events,
  ``tests/hostile/opened.py``): the writers read before they write (the journal's records, the
  file a plan replaces, a temporary file's folder), and those reads obey the read rule too;
* a write is refused with exit code 6 (README, Exit codes) and a message that names the link and
  says it leads outside the repository; a read of a folder leading out is a parse failure said
  so, and the canary's own text is never shown.

Every case failed before the write rule (``storage/confine``): the command followed the link.
(Paths that were already safe are not cases here: ``.scars/.gitignore`` was created ``O_EXCL`` and
never written through a link, and ``triage --read-only`` opens no lock.)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from scars.core.samsara.feature import read_feature
from tests.factories import run_cli
from tests.hostile.opened import watching
from tests.hostile.repos import (
    CANARY_TEXT,
    OUTSIDE,
    REASON,
    World,
    bkit,
    dag,
    dag_retry,
    decide,
    link_out,
    loopspec,
    review,
    round_close,
    samsara,
    ship,
    snapshot,
)


@dataclass
class Case:
    name: str
    build: Callable[[World], Path]  # the loop's folder (or file)
    link: Callable[[World, Path], Path]  # the path turned into a link out
    argv: Callable[[World, Path], list[str]]
    codes: tuple[int, ...] = (OUTSIDE,)
    prepare: Callable[[World, Path], list[list[str]]] = lambda w, base: []  # run before the link is made


def _rel(*parts: str) -> Callable[[World, Path], Path]:
    return lambda w, base: base.joinpath(*parts)


CASES = [
    # samsara: the journal, the lock, its folder, .gitignore, the logs, a round close
    Case("samsara .scars/ folder", samsara, _rel(".scars"), decide),
    Case("samsara .scars/journal.jsonl", samsara, _rel(".scars", "journal.jsonl"), decide),
    Case("samsara .scars/lock", samsara, _rel(".scars", "lock"), decide),
    Case(
        "samsara iteration-log.yaml (round close)",
        samsara,
        _rel("iteration-log.yaml"),
        round_close,
        prepare=lambda w, f: [["round", "start", "--feature", str(f)], decide(w, f)],
    ),
    Case(
        "samsara auto-decisions.md (auto-mode gate)",
        lambda w: samsara(w, auto=True),
        _rel("auto-decisions.md"),
        lambda w, f: ["gate", "entry", str(f), "--answer", "enter", "--reason", "five items remain, triage them now"],
    ),
    Case("samsara the feature folder itself", samsara, lambda w, f: f, decide),
    Case("samsara changes/ folder", samsara, lambda w, f: w.repo / "changes", decide),
    # loop-spec: every file a ship writes, its folder's .scars/, the repository's BACKLOG.md
    Case("loop-spec feature.json.bak", loopspec, _rel("feature.json.bak"), lambda w, f: ship(f)),
    Case("loop-spec PROGRESS.md", loopspec, _rel("PROGRESS.md"), lambda w, f: ship(f)),
    Case("loop-spec graph-checkpoints.jsonl", loopspec, _rel("graph-checkpoints.jsonl"), lambda w, f: ship(f)),
    Case("loop-spec auto-decisions.md", loopspec, _rel("auto-decisions.md"), lambda w, f: ship(f)),
    Case("loop-spec BACKLOG.md", loopspec, lambda w, f: w.repo / ".loop-spec" / "BACKLOG.md", lambda w, f: ship(f)),
    Case("loop-spec .scars/ folder", loopspec, _rel(".scars"), lambda w, f: ship(f)),
    Case("loop-spec .scars/lock", loopspec, _rel(".scars", "lock"), lambda w, f: ship(f)),
    Case("loop-spec features/ folder", loopspec, lambda w, f: f.parent, lambda w, f: ship(f), (2, OUTSIDE)),
    # ARIS / Mechanist
    Case(
        "review auto-decisions.md",
        review,
        _rel("auto-decisions.md"),
        lambda w, s: ["gate", "review-continue", str(s / "REVIEW_STATE.json"), "--answer", "stop", "--reason", REASON],
    ),
    Case(
        "review .scars/ folder",
        review,
        _rel(".scars"),
        lambda w, s: ["gate", "review-continue", str(s / "REVIEW_STATE.json"), "--answer", "stop", "--reason", REASON],
    ),
    # bkit
    Case(
        "bkit auto-decisions.md",
        bkit,
        lambda w, sf: sf.parent / "auto-decisions.md",
        lambda w, sf: [
            "gate",
            "pdca-continue",
            str(sf),
            "--bkit-feature",
            "login",
            "--answer",
            "stop",
            "--reason",
            REASON,
        ],
    ),
    Case(
        "bkit .scars/ folder",
        bkit,
        lambda w, sf: sf.parent / ".scars",
        lambda w, sf: [
            "gate",
            "pdca-continue",
            str(sf),
            "--bkit-feature",
            "login",
            "--answer",
            "stop",
            "--reason",
            REASON,
        ],
    ),
    # the DAG loop
    Case("dag auto-decisions.md", dag, lambda w, r: r.parent / "auto-decisions.md", dag_retry),
    Case("dag .scars/ folder", dag, lambda w, r: r.parent / ".scars", dag_retry),
    # the requests inbox: a gate posted with --wait
    Case(
        "requests .scars/ folder of the root",
        loopspec,
        lambda w, f: w.repo / ".scars",
        lambda w, f: ["gate", "spec", str(f), "--wait", "--timeout", "0.1"],
    ),
    Case(
        "requests .scars/requests/ folder",
        loopspec,
        lambda w, f: _made(w.repo / ".scars" / "requests"),
        lambda w, f: ["gate", "spec", str(f), "--wait", "--timeout", "0.1"],
    ),
]


def _made(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_no_byte_outside_the_repository_changes_and_the_refusal_says_why(world: World, case: Case, capsys):
    base = case.build(world)
    argv = case.argv(world, base)  # computed before the link: an item id reads the feature
    for pre in case.prepare(world, base):
        code, out, err = run_cli(pre, capsys)
        assert code == 0, (pre, out, err)
    linked = case.link(world, base)
    target = link_out(linked, world.canary)
    before = snapshot(world.canary)
    around = {k: v for k, v in snapshot(world.tmp).items() if not k.startswith(("repo", "canary", "state"))}
    with watching(world.canary) as opened:
        code, out, err = run_cli(argv, capsys)
    assert opened == [], f"{case.name}: a file or folder outside the repository was opened: {opened}"
    assert snapshot(world.canary) == before, f"{case.name}: the canary tree changed ({code}: {err})"
    assert {k: v for k, v in snapshot(world.tmp).items() if not k.startswith(("repo", "canary", "state"))} == around
    assert code in case.codes, f"{case.name}: exit {code}\n{out}\n{err}"
    assert CANARY_TEXT not in out + err, f"{case.name}: the canary was read and shown"
    if code == OUTSIDE:
        message = " ".join(err.split())
        assert "outside the repository" in message and "nothing was" in message, message
        assert os.path.basename(str(linked)) in message or str(target.name) in message, message
    assert "Traceback" not in err


def test_reads_of_folders_leading_out_are_parse_failures_and_never_read(world: World, capsys):
    """A symlinked scar-reports/ and .samsara/ pointing outside (README: such paths are never opened):
    before, their files were read as the repository's own."""
    feature = samsara(world)
    (world.repo / ".samsara").mkdir()
    (world.repo / ".samsara" / "systemic-scars.yaml").write_text("entries: []\n", encoding="utf-8")
    link_out(feature / "scar-reports", world.canary)
    link_out(world.repo / ".samsara", world.canary)
    f = read_feature(feature)
    assert f.items == () and not f.reports
    failures = {p.file: p.message for p in f.parse_failures}
    assert "outside the repository" in failures["scar-reports/"]
    assert f.registry.state == "unreadable" and "outside the repository" in (f.registry.reason or "")
    before = snapshot(world.canary)
    code, out, err = run_cli(["status", str(feature)], capsys)
    assert code == 0 and CANARY_TEXT not in out and "Retry count" not in out
    assert "outside the repository" in out + err
    assert snapshot(world.canary) == before


def test_a_feature_folder_linked_out_is_never_read(world: World, capsys):
    """`scars status` of a feature folder that is a link out of its repository lists every file as
    a parse failure, reads none; `scars triage --read-only` and the session refuse it (exit 6)."""
    feature = samsara(world)
    link_out(feature, world.canary)
    before = snapshot(world.canary)
    code, out, err = run_cli(["status", str(feature)], capsys)
    assert code == 0 and "Retry count" not in out and CANARY_TEXT not in out
    assert "points outside the repository" in " ".join(out.split())
    code, out, err = run_cli(["round", "status", "--feature", str(feature)], capsys)
    assert code == OUTSIDE and "outside the repository" in " ".join(err.split()), (code, out, err)
    assert snapshot(world.canary) == before


def test_requests_apply_refuses_a_loop_file_linked_out_after_the_answer(world: World, capsys):
    """A request answered, then the loop's file turned into a link out before it is applied: the
    record path obeys the rule too (nothing written outside, exit 6)."""
    from scars.core.gates import requests as rq

    fdir = loopspec(world)
    code, out, err = run_cli(["gate", "spec", str(fdir), "--wait", "--timeout", "0.1"], capsys)
    assert code == 3, err
    rid = rq.list_requests(world.repo)[0][0].id
    code, out, err = run_cli(["answer", rid, "--answer", "ship", "--reason", REASON, "--path", str(world.repo)], capsys)
    assert code == 0, err
    link_out(fdir / "feature.json.bak", world.canary)
    before = snapshot(world.canary)
    code, out, err = run_cli(["requests", "apply", rid, "--path", str(world.repo)], capsys)
    assert snapshot(world.canary) == before
    assert code == OUTSIDE and "refused to write through" in " ".join((out + err).split()), (code, out, err)

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
* a write is refused with exit code 6 (README, Exit codes) and a message that names the link and
  says it leads outside the repository; a read of a folder leading out is a parse failure said
  so, and the canary's own text is never shown.

Every case failed before the write rule (``storage/confine``): the command followed the link.
(Paths that were already safe are not cases here: ``.scars/.gitignore`` was created ``O_EXCL`` and
never written through a link, and ``triage --read-only`` opens no lock.)
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from scars.core.samsara.feature import read_feature
from tests.factories import (
    bkit_project,
    clean_env,
    item_id,
    loop_spec_feature,
    mechanist_state,
    run_cli,
    samsara_feature,
)

REASON = "offline sync is v2 scope and on the backlog"
CANARY_TEXT = "CANARY-7f3e: a file outside the repository"
OUTSIDE = 6  # README, Exit codes: a write (or a folder given) leads outside the repository


def snapshot(top: Path) -> dict[str, tuple]:
    """Every entry under ``top`` (itself included): kind, mode, size, mtime_ns and the content's
    sha256 (a file) or the link's target (a symlink)."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        for name in [".", *dirnames, *filenames]:
            p = Path(dirpath) if name == "." else Path(dirpath) / name
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                what: object = os.readlink(p)
            elif stat.S_ISREG(st.st_mode):
                what = hashlib.sha256(p.read_bytes()).hexdigest()
            else:
                what = sorted(os.listdir(p)) if stat.S_ISDIR(st.st_mode) else None
            out[str(p.relative_to(top))] = (stat.S_IFMT(st.st_mode), st.st_mode, st.st_size, st.st_mtime_ns, what)
    return out


def link_out(path: Path, canary: Path) -> Path:
    """Move ``path`` (a file or a folder, or nothing yet) into the canary tree and leave a symlink to
    it in its place; the canary copy holds CANARY_TEXT so that a read of it would show. Next to a
    file, the temporary file a killed atomic write of it would have left (scars removes its own
    leftovers next to the files it writes: never through a link leading out)."""
    target = canary / f"{len(list(canary.iterdir())):02d}-{path.name.lstrip('.') or 'x'}"
    if path.is_dir():
        shutil.move(str(path), str(target))
        (target / "CANARY.md").write_text(CANARY_TEXT + "\n", encoding="utf-8")
    elif path.exists():
        shutil.move(str(path), str(target))
    else:
        target.write_text(CANARY_TEXT + "\n", encoding="utf-8")
    if not target.is_dir():  # what a killed atomic write would leave next to it: never scars' to remove
        (canary / f".{target.name}.k3Xq9_.tmp").write_text(CANARY_TEXT + "\n", encoding="utf-8")
    path.symlink_to(target, target_is_directory=target.is_dir())
    return target


@dataclass
class World:
    tmp: Path
    repo: Path
    canary: Path


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    clean_env(monkeypatch)
    monkeypatch.setenv("SCARS_STATE_DIR", str(tmp_path / "state"))
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    canary = tmp_path / "canary"
    canary.mkdir()
    (canary / "bashrc").write_text("# the user's shell start-up file\n", encoding="utf-8")
    (canary / "notes").mkdir()
    (canary / "notes" / "todo.md").write_text("- [ ] mine\n", encoding="utf-8")
    return World(tmp_path, repo, canary)


# -- the loops' repositories ---------------------------------------------------------------


def samsara(w: World, auto: bool = False) -> Path:
    feature = samsara_feature(w.repo, auto=auto)
    (feature / ".scars").mkdir(exist_ok=True)
    return feature


def _item(feature: Path) -> str:
    return item_id(feature, "Retry count is hard-coded to 3")


def decide(w: World, feature: Path) -> list[str]:
    return ["decide", _item(feature), "--fix", "--feature", str(feature)]


def round_close(w: World, feature: Path) -> list[str]:
    return ["round", "close", "--decision", "stop", "--reason", "all decided, shipping", "--feature", str(feature)]


def loopspec(w: World) -> Path:
    fdir = loop_spec_feature(w.repo)
    (fdir / "PROGRESS.md").write_text("# Progress\n", encoding="utf-8")
    (fdir / "graph-checkpoints.jsonl").write_text("", encoding="utf-8")
    (fdir / "feature.json.bak").write_text("{}\n", encoding="utf-8")
    (fdir / "auto-decisions.md").write_text("# Auto decisions\n", encoding="utf-8")
    (w.repo / ".loop-spec" / "BACKLOG.md").write_text("# BACKLOG.md\n", encoding="utf-8")
    (fdir / ".scars").mkdir()
    return fdir


def ship(fdir: Path) -> list[str]:
    return ["gate", "spec", str(fdir), "--answer", "ship", "--reason", REASON]


def review(w: World) -> Path:
    stage = mechanist_state(w.repo)
    (stage / "auto-decisions.md").write_text("# Auto decisions\n", encoding="utf-8")
    (stage / ".scars").mkdir()
    return stage


def bkit(w: World) -> Path:
    sf = bkit_project(w.repo)
    (sf.parent / ".scars").mkdir()
    (sf.parent / "auto-decisions.md").write_text("# Auto decisions\n", encoding="utf-8")
    return sf


def dag(w: World) -> Path:
    import yaml

    report = w.repo / "dag" / "decision.yaml"
    report.parent.mkdir(parents=True)
    trigger = {"type": "validation_failure", "severity": 0.7, "code": "TYPE_MISMATCH", "fixable": True}
    report.write_text(
        yaml.safe_dump(
            {"iterationDecision": {"taskId": "t", "decision": {"needsIteration": True}, "triggers": [trigger]}}
        )
    )
    (report.parent / "auto-decisions.md").write_text("# Auto decisions\n", encoding="utf-8")
    (report.parent / ".scars").mkdir()
    return report


def dag_retry(w: World, report: Path) -> list[str]:
    return [
        "gate",
        "dag-escalate",
        str(report),
        "--answer",
        "retry",
        "--reason",
        "emit the field as a string, as the schema says",
    ]


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
    code, out, err = run_cli(argv, capsys)
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

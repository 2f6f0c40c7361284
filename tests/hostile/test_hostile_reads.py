"""A hostile repository: a path scars *reads* is a symlink into a canary tree outside it.

Issue 27 §1 (reads). The README says a path that resolves outside the repository is never opened;
the write rule (``storage/confine``) refuses the writes, and these are the reads that went through
a link without the read rule (``storage/safe_read``: ``open_file``, ``list_dir``): the request
fingerprint, iteration-log.yaml's reload, the journal (read-only and before an append), the lock's
holder, watches.jsonl, auto-decisions.md before an append, a plan's read of the files it writes,
the DAG report's peek, loop-spec's checkpoint ledger, bkit's sprints folder, loop-spec's features
folder, the requests inbox, ``changes/``, the cache's listing of ``scar-reports/``, and the mark of
an interrupted record. Each case links one such path (a file or a folder) out, runs the command
that reads it, and checks that

* nothing under the canary tree was opened or listed (Python's audit events, ``opened.py``),
* no byte of it changed, and its text is never shown,
* the command ends as it should (the exit code; a refusal says "outside the repository").

Each case failed before its read went through the rule (the read followed the link), but
"loops: a DAG report": ``scars loops`` already skipped a linked report; it stays as the other side
of the DAG peek that ``gate dag-escalate`` did follow.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from scars.core.gates import requests as rq
from tests.factories import run_cli
from tests.hostile.opened import watching
from tests.hostile.repos import (
    CANARY_TEXT,
    OUTSIDE,
    World,
    bkit,
    dag,
    link_out,
    loopspec,
    samsara,
    snapshot,
)


def _journal(feature: Path) -> Path:
    """A journal and a lock in the feature's .scars/ (one decision), as a session leaves them."""
    (feature / ".scars" / "journal.jsonl").write_text("", encoding="utf-8")
    (feature / ".scars" / "lock").write_text("", encoding="utf-8")
    return feature


def samsara_used(w: World) -> Path:
    return _journal(samsara(w))


def _watches(w: World) -> Path:
    feature = samsara_used(w)
    (feature / ".scars" / "watches.jsonl").write_text("", encoding="utf-8")
    return feature


def _marked_spec(w: World) -> Path:
    """A loop-spec feature whose .scars/ holds the mark of a record under way (interrupted.json)."""
    fdir = loopspec(w)
    (fdir / ".scars" / "interrupted.json").write_text(
        json.dumps({"v": 1, "user": "alice", "host": "h", "intent": "/nowhere/x.json"}) + "\n", encoding="utf-8"
    )
    return fdir


def _ledger_spec(w: World) -> Path:
    fdir = loopspec(w)
    (fdir / "graph-checkpoints.jsonl").write_text('{"node": "verify"}\n', encoding="utf-8")
    return fdir


def _inbox(w: World) -> Path:
    fdir = loopspec(w)
    (w.repo / ".scars" / "requests").mkdir(parents=True)
    (w.repo / ".scars" / "requests" / "spec-aaaaaa.json").write_text("{}\n", encoding="utf-8")
    return fdir


def _the_fingerprint_says_why(w: World, base: Path) -> None:
    """The posted request's fingerprint names the linked file as not read (never its content)."""
    (req,), _problems = rq.list_requests(w.repo)
    unread = {k: v for k, v in req.fingerprint.items() if v.startswith("unreadable")}
    assert unread and all("outside the repository" in v for v in unread.values()), req.fingerprint


@dataclass
class Read:
    name: str
    build: Callable[[World], Path]
    link: Callable[[World, Path], Path]
    argv: Callable[[World, Path], list[str]]
    codes: tuple[int, ...] = (0,)
    says: str = ""  # what stdout + stderr says (whitespace folded)
    then: Callable[[World, Path], None] | None = None
    env: dict[str, str] | None = None


def _f(*parts: str) -> Callable[[World, Path], Path]:
    return lambda w, base: base.joinpath(*parts)


def _round_status(w: World, f: Path) -> list[str]:
    return ["round", "status", "--feature", str(f)]


def _wait_spec(w: World, f: Path) -> list[str]:
    return ["gate", "spec", str(f), "--wait", "--timeout", "0.1"]


READS = [
    # samsara, read-only: the journal, its folder (journal + lock holder), iteration-log.yaml
    Read("read-only session: .scars/journal.jsonl", samsara_used, _f(".scars", "journal.jsonl"), _round_status),
    Read("read-only session: .scars/ folder (journal, lock)", samsara_used, _f(".scars"), _round_status),
    Read("read-only session: iteration-log.yaml", samsara_used, _f("iteration-log.yaml"), _round_status),
    Read(
        "log verify: .scars/journal.jsonl",
        samsara_used,
        _f(".scars", "journal.jsonl"),
        lambda w, f: ["log", "verify", str(f)],
        (0, 1, 3),
    ),
    Read(
        "watch check: .scars/watches.jsonl",
        _watches,
        _f(".scars", "watches.jsonl"),
        lambda w, f: ["watch", "check", str(f), "--dry-run"],
        (0, 1, 3),
    ),
    # the writers read before they append: refused before a byte is read
    Read(
        "decide: .scars/journal.jsonl read before the append",
        samsara_used,
        _f(".scars", "journal.jsonl"),
        lambda w, f: ["decide", "x", "--fix", "--feature", str(f)],
        (OUTSIDE,),
        "outside the repository",
    ),
    # the request fingerprint of a posted --wait gate
    Read(
        "request fingerprint: loop-spec auto-decisions.md",
        loopspec,
        _f("auto-decisions.md"),
        _wait_spec,
        (3,),
        then=_the_fingerprint_says_why,
    ),
    Read(
        "request fingerprint: samsara scar-reports/ folder",
        samsara,
        _f("scar-reports"),
        lambda w, f: ["gate", "entry", str(f), "--wait", "--timeout", "0.1"],
        (3,),
    ),
    Read(
        "request fingerprint: samsara .scars/watches.jsonl",
        _watches,
        _f(".scars", "watches.jsonl"),
        lambda w, f: ["gate", "entry", str(f), "--wait", "--timeout", "0.1"],
        (3,),
        then=_the_fingerprint_says_why,
    ),
    # the other loops' readers
    Read("loops: a DAG report", dag, lambda w, r: r, lambda w, r: ["loops", str(w.repo)]),
    Read(
        "gate dag-escalate: a DAG report in its folder",
        dag,
        lambda w, r: r,
        lambda w, r: ["gate", "dag-escalate", str(r.parent), "--json"],
        (2,),
    ),
    Read(
        "gate dag-escalate: the report named",
        dag,
        lambda w, r: r,
        lambda w, r: ["gate", "dag-escalate", str(r), "--json"],
        (2,),
    ),
    Read(
        "loops: loop-spec graph-checkpoints.jsonl",
        _ledger_spec,
        _f("graph-checkpoints.jsonl"),
        lambda w, f: ["loops", str(w.repo)],
    ),
    Read(
        "gate sprint-pause: bkit sprints/ folder",
        bkit,
        lambda w, sf: sf.parent / "sprints",
        lambda w, sf: ["gate", "sprint-pause", str(w.repo), "--json"],
        (OUTSIDE,),
        "outside the repository",
    ),
    Read(
        "gate pdca-continue: bkit sprints/ folder",
        bkit,
        lambda w, sf: sf.parent / "sprints",
        lambda w, sf: ["gate", "pdca-continue", str(sf), "--bkit-feature", "login", "--json"],
        (0, 3),
    ),
    Read(
        "gate spec: .loop-spec/features/ folder",
        loopspec,
        lambda w, f: f.parent,
        lambda w, f: ["gate", "spec", str(w.repo), "--json"],
        (OUTSIDE,),
        "outside the repository",
    ),
    Read(
        "requests: the inbox folder",
        _inbox,
        lambda w, f: w.repo / ".scars" / "requests",
        lambda w, f: ["requests", str(w.repo), "--all"],
        (0,),
        "outside the repository",
    ),
    Read(
        "status of the repository: changes/ folder",
        samsara,
        lambda w, f: w.repo / "changes",
        lambda w, f: ["status", str(w.repo)],
        (OUTSIDE,),
        "outside the repository",
    ),
    Read(
        "status with the cache: scar-reports/ folder",
        samsara,
        _f("scar-reports"),
        lambda w, f: ["status", str(f)],
        env={"SCARS_NO_CACHE": ""},
    ),
    Read(
        "loops: the mark of an interrupted record in .scars/",
        _marked_spec,
        _f(".scars"),
        lambda w, f: ["loops", str(w.repo)],
    ),
]


@pytest.mark.parametrize("case", READS, ids=[c.name for c in READS])
def test_no_file_outside_the_repository_is_opened(world: World, case: Read, capsys, monkeypatch):
    base = case.build(world)
    argv = case.argv(world, base)
    for name, value in (case.env or {}).items():
        monkeypatch.setenv(name, value) if value else monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SCARS_CACHE_DIR", str(world.tmp / "cache"))
    target = link_out(case.link(world, base), world.canary)
    before = snapshot(world.canary)
    with watching(world.canary) as opened:
        code, out, err = run_cli(argv, capsys)
    assert opened == [], f"{case.name}: read outside the repository: {opened}"
    assert snapshot(world.canary) == before, f"{case.name}: the canary tree changed"
    assert code in case.codes, f"{case.name}: exit {code}\n{out}\n{err}"
    assert CANARY_TEXT not in out + err and "Traceback" not in err
    if case.says:
        assert case.says in " ".join((out + err).split()), (out, err)
    if case.then is not None:
        case.then(world, base)
    assert target.exists()

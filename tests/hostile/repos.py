"""The hostile repositories of tests/hostile: a repository of every loop (samsara, loop-spec, ARIS /
Mechanist, bkit, the DAG loop) whose paths a test turns into symlinks to a canary tree outside it,
and the snapshot of that tree (kind, mode, size, mtime, content or link target of every entry)
that proves no byte outside the repository changed. The ``world`` fixture (conftest.py) gives one."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.factories import (
    bkit_project,
    clean_env,
    item_id,
    loop_spec_feature,
    mechanist_state,
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


def make_world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
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

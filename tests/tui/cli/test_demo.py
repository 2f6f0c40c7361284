"""The bundled demo: realistic, every item form, and `scars demo` copies it safely."""

from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scars.core.samsara.feature import read_feature
from scars.tui.cli.commands.demo import FEATURE, copy_demo, demo_source


@pytest.fixture(scope="module")
def demo_feature():
    return read_feature(demo_source() / FEATURE)


def test_demo_holds_every_form_and_rule(demo_feature):
    f = demo_feature
    forms = {it.form for it in f.items} | {it.form for it in f.resolved}
    assert {"gen1", "gen2", "systemic_ref", "gen3", "lifecycle", "assumption"} <= forms
    assert f.registry.state == "present"
    assert any(it.registry_state == "found" for it in f.items)
    assert f.groups["deferred_from_level_1"] and f.groups["unaddressed"]
    assert f.cross_task_patterns and f.possible_patterns
    assert any(it.resolved for it in f.resolved)  # resolved in place
    assert any(it.verified is True for it in f.resolved)  # verified assumption excluded
    assert any(it.verified is False for it in f.items)
    assert any(it.status == "open" and it.scar_id for it in f.items)  # era D
    # one non-conforming report, listed with its line
    (pf,) = f.parse_failures
    assert pf.file == "scar-reports/task-4-scar.yaml" and pf.line
    assert f.entry.verdict == "unknown"
    # a finished earlier round in the era-B form, and the Evaluation Contract
    (r,) = f.iteration_log.rounds
    assert r.era == "B" and r.decision == "continue" and r.signal_lost_after == f.signal_lost
    assert f.contract.primary_evaluator.startswith("`pytest")
    assert f.execution_mode == "human-in-the-loop"
    assert [t["id"] for t in f.index["tasks"]] == ["task-1", "task-2", "task-3", "task-4"]


def test_demo_where_points_at_files_inside_the_demo_repo(demo_feature):
    root = demo_source()
    wheres = {it.where.split(":")[0] for it in demo_feature.items if it.where}
    assert "src/export.py" in wheres
    for w in wheres:
        assert (root / w).is_file(), w


def test_copy_demo_refuses_a_non_empty_directory(tmp_path):
    (tmp_path / "x").write_text("keep me")
    from scars.core.errors import UsageError

    with pytest.raises(UsageError):
        copy_demo(tmp_path)
    assert (tmp_path / "x").read_text() == "keep me"
    dest = copy_demo(tmp_path / "new")
    assert (dest / ".samsara" / "systemic-scars.yaml").is_file()
    assert os.access(dest / FEATURE / "iteration-log.yaml", os.W_OK)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert copy_demo(empty) == empty and (empty / FEATURE).is_dir()


def test_scars_demo_without_a_tty_runs_status(tmp_path):
    env = {**os.environ, "NO_COLOR": "1"}
    r = subprocess.run(
        [sys.executable, "-m", "scars.tui.cli.main", "demo", "--dir", str(tmp_path / "d"), "--json"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=env,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["feature"] == Path(FEATURE).name and data["signal_lost"] == 14
    assert str(tmp_path / "d") in r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "scars.tui.cli.main", "demo", "--dir", str(tmp_path / "d")],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=env,
        timeout=60,
    )
    assert r.returncode == 2 and "not empty" in r.stderr


@pytest.mark.skipif(shutil.which("git") is None, reason="no git")
def test_the_demo_is_a_git_repository_so_watches_can_be_tried(tmp_path, capsys):
    """Issue 16: the demo was a plain directory: a path-changed watch could only be unobservable."""
    from scars.core.git import current_commit
    from tests.factories import run_cli

    dest = copy_demo(tmp_path / "demo")
    assert current_commit(dest) is not None
    feature = dest / FEATURE
    item = json.loads(run_cli(["status", str(feature), "--json"], capsys)[1])["items"][0]["id"]
    code, _, err = run_cli(
        [
            "decide",
            item,
            "--accept",
            "--signal",
            "the export module changes",
            "--owner",
            "ops",
            "--rationale",
            "one writer today",
            "--watch",
            "path-changed: src/export.py",
            "--feature",
            str(feature),
        ],
        capsys,
    )
    assert code == 0, err
    (dest / "src" / "export.py").write_text("# changed\n", encoding="utf-8")
    code, out, _ = run_cli(["watch", "check", str(feature), "--dry-run", "--json"], capsys)
    assert '"fired"' in out


def test_the_demo_names_how_to_reopen_it(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "scars.tui.cli.main", "demo", "--dir", str(tmp_path / "d")],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=60,
    )
    assert f"`scars triage {tmp_path / 'd' / FEATURE}` opens it" in r.stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="no git")
def test_the_app_opens_the_demo_once_its_git_repository_is_made(tmp_path, monkeypatch, capsys):
    """Issue 31: `scars demo` makes the git repository in a child while the app loads; the feature
    is opened only after it is made (the session asks git for the user's name), read ahead meanwhile."""
    import argparse

    from scars.core.git import current_commit
    from scars.core.samsara import session
    from scars.tui.app.app import ScarsApp
    from scars.tui.cli.commands import _app, demo

    seen: list = []

    def open_first(self, ahead=None):
        seen.append((current_commit(self.feature_dir.parents[1]), ahead is not None, gc.isenabled()))

    monkeypatch.setattr(_app, "interactive", lambda: True)
    monkeypatch.setattr(ScarsApp, "open_first", open_first)
    monkeypatch.setattr(ScarsApp, "run", lambda self: 0)
    reads = []
    monkeypatch.setattr(session, "read_ahead", lambda path, **kw: reads.append(path) or object())
    code = demo.run(argparse.Namespace(dir=str(tmp_path / "d"), json=False))
    assert code == 0
    assert reads == [tmp_path.resolve() / "d" / FEATURE]
    # made when the feature is opened; the collector paused for the app's start (issue 31) …
    assert seen == [(current_commit(tmp_path / "d"), True, False)]
    assert seen[0][0] is not None
    assert gc.isenabled()  # … and running again once the app is done, whether it drew or not
    assert "reopen it with" in capsys.readouterr().out


def test_the_demo_is_found_where_importlib_resources_finds_it():
    """demo_source reads the package's folder (issue 31: importlib.resources cost the demo's first
    screen ~9 ms): the same folder as the package-data API gives."""
    from importlib.resources import files

    assert demo_source() == Path(str(files("scars.core").joinpath("demo", "repo")))
    assert (demo_source() / FEATURE).is_dir()

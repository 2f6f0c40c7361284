"""scars.core.git: the one runner — missing git, not a work tree, a timeout, the environment — and
the helpers built on it (watches' commits, decided_by's user.name, locate's authors) all answer
"no git" the same way."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pytest

from scars.core import git
from scars.core.git import GitUnavailable, authors_of, current_commit, git_toplevel, run_git, user_name


def _fake_git(tmp_path: Path, monkeypatch, body: str) -> Path:
    """A ``git`` first on PATH running the shell ``body``; only that directory is on PATH."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "git"
    exe.write_text("#!/bin/sh\n" + body + "\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(bindir))
    return exe


def test_missing_git_is_no_git_for_every_helper(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no git here
    with pytest.raises(GitUnavailable, match="not installed"):
        run_git(tmp_path, "status")
    assert user_name() is None
    assert authors_of(tmp_path, ["a.py"]) == []
    assert current_commit(tmp_path) is None


def test_not_a_work_tree(tmp_path):
    with pytest.raises(GitUnavailable):
        git_toplevel(tmp_path)
    assert current_commit(tmp_path) is None
    assert authors_of(tmp_path, ["a.py"]) == []


def test_a_hanging_git_times_out_in_every_helper(tmp_path, monkeypatch):
    _fake_git(tmp_path, monkeypatch, f"exec {shutil.which('sleep')} 30")
    monkeypatch.setattr(git, "USER_NAME_TIMEOUT", 0.2)
    t0 = time.monotonic()
    with pytest.raises(GitUnavailable, match="timed out"):
        run_git(tmp_path, "status", timeout=0.2)
    assert user_name() is None
    assert authors_of(tmp_path, ["a.py"], timeout=0.2) == []
    assert time.monotonic() - t0 < 10  # three timeouts, not three sleeps of 30 s


def test_a_failing_git_names_its_first_error_line(tmp_path, monkeypatch):
    _fake_git(tmp_path, monkeypatch, 'echo "fatal: not a git repository" >&2; echo more >&2; exit 128')
    with pytest.raises(GitUnavailable, match="^fatal: not a git repository$"):
        run_git(tmp_path, "rev-parse")
    assert run_git(tmp_path, "rev-parse", check=False) == ""
    assert user_name() is None


def test_the_environment_keeps_the_users_config_and_drops_a_hooks_repository(tmp_path, monkeypatch):
    _fake_git(tmp_path, monkeypatch, f"exec {shutil.which('env')}")
    monkeypatch.setenv("GIT_DIR", "/elsewhere/.git")
    monkeypatch.setenv("GIT_INDEX_FILE", "/elsewhere/index")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/home/me/gitconfig")
    env = dict(line.split("=", 1) for line in run_git(tmp_path, "status").splitlines() if "=" in line)
    assert "GIT_DIR" not in env and "GIT_INDEX_FILE" not in env
    assert env["GIT_CONFIG_GLOBAL"] == "/home/me/gitconfig"
    assert env["GIT_TERMINAL_PROMPT"] == "0" and env["LC_ALL"] == "C"


def test_authors_most_recent_first_without_repeats(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    repo = tmp_path / "r"
    repo.mkdir()

    def g(*args: str, who: str = "Ann") -> None:
        env = {**os.environ, "GIT_AUTHOR_NAME": who, "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": who}
        env["GIT_COMMITTER_EMAIL"] = "a@x"
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)

    g("init", "-q")
    for n, who in enumerate(("Ann", "Bob", "Ann")):
        (repo / "a.py").write_text(f"x = {n}\n")
        g("add", "a.py", who=who)
        g("commit", "-q", "-m", f"c{n}", who=who)
    assert authors_of(repo, [str(repo / "a.py")]) == ["Ann", "Bob"]
    assert git_toplevel(repo / ".") == repo.resolve()
    assert current_commit(repo) is not None

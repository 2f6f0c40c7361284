"""The one git runner: every git command scars runs, with a timeout, no prompt and a clean env.

:func:`run_git` raises :class:`GitUnavailable` (no git, not a work tree, a timeout, a failing
command); the helpers built on it (watches' commits and changed files, the user's name for
``decided_by``, the authors ``locate`` shows) return None or an empty list where the caller
treats "no git" as an answer.
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
from pathlib import Path

from scars.core import settings

GIT_TIMEOUT = 20.0
# Asked on every decision without --as / SCARS_USER: short, a slow git must not hold a decision.
USER_NAME_TIMEOUT = 3.0
# Asked while the app shows an item: shorter still (the author list is a hint, not a record).
AUTHORS_TIMEOUT = 1.5


class GitUnavailable(Exception):
    """git is missing, the path is no work tree, the command timed out or failed."""


def run_git(repo: str | os.PathLike, *args: str, check: bool = True, timeout: float = GIT_TIMEOUT) -> str:
    """``git -C repo ARGS`` → its stdout; raises GitUnavailable (``check``: also on a non-zero exit)."""
    # lazy: subprocess (~4 ms) only when git runs, not for a warm `scars status` that imports this module
    import subprocess

    git = shutil.which("git")
    if not git:
        raise GitUnavailable("git is not installed")
    try:
        cp = subprocess.run(
            [git, "-C", str(repo), *args],
            capture_output=True,
            timeout=timeout,
            env=dict(settings.current().git_env),
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        raise GitUnavailable(f"git {args[0]} timed out") from exc
    except OSError as exc:
        raise GitUnavailable(f"git cannot run: {exc}") from exc
    if check and cp.returncode != 0:
        msg = cp.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitUnavailable(msg[0] if msg else f"git {args[0]} failed")
    return cp.stdout.decode("utf-8", "surrogateescape")


def git_toplevel(path: str | os.PathLike) -> Path:
    """The git work tree holding ``path``; GitUnavailable when there is none."""
    out = run_git(path, "rev-parse", "--show-toplevel").strip()
    if not out:
        raise GitUnavailable("not inside a git work tree")
    return Path(out)


def current_commit(path: str | os.PathLike) -> str | None:
    """HEAD's commit id for the work tree holding ``path`` (None without git or commits)."""
    try:
        return run_git(path, "rev-parse", "--verify", "-q", "HEAD^{commit}").strip() or None
    except GitUnavailable:
        return None


def commit_at(path: str | os.PathLike, when_iso: str) -> str | None:
    """The last commit of HEAD's history dated at or before ``when_iso``."""
    try:
        _dt.datetime.fromisoformat(when_iso)
    except (TypeError, ValueError):
        return None
    try:
        return run_git(path, "rev-list", "-1", f"--before={when_iso}", "HEAD").strip() or None
    except GitUnavailable:
        return None


def _z(text: str) -> list[str]:
    return [p for p in text.split("\0") if p]


def changed_since(top: Path, base: str) -> list[str]:
    changed = set(_z(run_git(top, "diff", "--name-only", "--no-renames", "-z", base, "--")))
    changed.update(_z(run_git(top, "ls-files", "--others", "--exclude-standard", "-z")))
    return sorted(changed)


def tree_files(top: Path) -> list[str]:
    return sorted(set(_z(run_git(top, "ls-files", "--cached", "--others", "--exclude-standard", "-z"))))


def user_name() -> str | None:
    """git's ``user.name`` as seen from the current directory (None without git or a name)."""
    try:
        name = run_git(os.curdir, "config", "user.name", timeout=USER_NAME_TIMEOUT).strip()
    except GitUnavailable:
        return None
    return name or None


def authors_of(repo_root: str | os.PathLike[str], paths: list[str], timeout: float = AUTHORS_TIMEOUT) -> list[str]:
    """Authors of ``paths`` (already resolved inside ``repo_root``), most recent first, from
    ``git log``; [] when git is unavailable or fails."""
    try:
        out = run_git(repo_root, "log", "--format=%an", "-n", "200", "--", *paths, timeout=timeout)
    except GitUnavailable:
        return []
    seen: dict[str, None] = {}
    for name in out.splitlines():
        if name.strip():
            seen.setdefault(name.strip(), None)
    return list(seen)

"""Paths named by untrusted items are read only inside the repository (scars.core.paths)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scars.core.paths import parse_location, resolve_inside


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "x.py").write_text("line1\nline2\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("SECRET\n", encoding="utf-8")
    return root


def test_a_file_inside_resolves(repo: Path):
    assert resolve_inside(repo, "src/x.py") == (repo / "src" / "x.py").resolve()
    assert resolve_inside(repo, "./src/../src/x.py") == (repo / "src" / "x.py").resolve()


@pytest.mark.parametrize(
    "path, reason",
    [
        ("../secret.txt", "outside"),
        ("src/../../secret.txt", "outside"),
        ("../../../../../../etc/passwd", "outside"),
        ("/etc/passwd", "absolute"),
        ("~/.ssh/id_rsa", "~"),
        ("src/x.py\x00.txt", "control"),
        ("src/\x1b]52;c;x\x07", "control"),
        ("", "no path"),
        ("src/missing.py", "no such file"),
        ("src", "directory"),
    ],
)
def test_refused_paths_give_a_reason(repo: Path, path: str, reason: str):
    out = resolve_inside(repo, path)
    assert isinstance(out, str), f"{path!r} resolved to {out}"
    assert reason in out


def test_symlinks_pointing_out_loops_and_fifos_are_refused(repo: Path, tmp_path: Path):
    (repo / "src" / "out.py").symlink_to(tmp_path / "secret.txt")
    (repo / "escape").symlink_to(tmp_path)
    (repo / "src" / "a.py").symlink_to("b.py")
    (repo / "src" / "b.py").symlink_to("a.py")
    os.mkfifo(repo / "src" / "pipe.py")
    (repo / "src" / "dev.py").symlink_to("/dev/zero")
    (repo / "src" / "in.py").symlink_to("x.py")  # inside: fine
    assert "outside" in resolve_inside(repo, "src/out.py")
    assert "symlink" in resolve_inside(repo, "src/out.py")
    assert "outside" in resolve_inside(repo, "escape/secret.txt")
    assert "loop" in resolve_inside(repo, "src/a.py")
    assert "regular" in resolve_inside(repo, "src/pipe.py")
    assert "outside" in resolve_inside(repo, "src/dev.py")
    assert resolve_inside(repo, "src/in.py") == (repo / "src" / "x.py").resolve()


def test_a_repository_reached_through_a_symlink_still_works(repo: Path, tmp_path: Path):
    link = tmp_path / "link-to-repo"
    link.symlink_to(repo)
    assert resolve_inside(link, "src/x.py") == (repo / "src" / "x.py").resolve()
    assert "outside" in resolve_inside(link, "../secret.txt")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("src/export.py:40-88", ("src/export.py", 40, 88)),
        ("src/export.py:40", ("src/export.py", 40, 40)),
        ("src/export.py:40:7", ("src/export.py", 40, 40)),
        ("src/export.py#L3-L9", ("src/export.py", 3, 9)),
        ("src/export.py:9-3", ("src/export.py", 3, 9)),
        ("src/export.py", ("src/export.py", None, None)),
        ("src/export.py:40 — the retry loop", ("src/export.py", 40, 40)),
        ("n/a - synthetic fixture", ("n/a", None, None)),
        ("", ("", None, None)),
    ],
)
def test_parse_location(text, expected):
    assert parse_location(text) == expected

"""Paths named by untrusted items are read only inside the repository (scars.core.storage.paths)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scars.core.storage.paths import resolve_inside


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


def test_app_excerpt_resolver_never_reads_outside(repo: Path, tmp_path: Path):
    """The app's excerpt (scars.core.samsara.locate) shows a reason instead of hostile locations."""
    from scars.core.samsara.locate import read_excerpt

    (repo / "src" / "out.py").symlink_to(tmp_path / "secret.txt")
    (repo / "src" / "a.py").symlink_to("b.py")
    (repo / "src" / "b.py").symlink_to("a.py")
    os.mkfifo(repo / "src" / "pipe.py")
    (repo / "src" / "big.py").write_bytes(b"x = 1\n" * 400_000)
    (repo / "src" / "bin.py").write_bytes(b"\0\1\2" * 100)
    for where in (
        "../secret.txt:1",
        "/etc/passwd:1",
        "src/out.py:1",
        "src/a.py:1",
        "src/pipe.py:1",
        "src/x\x00.py:1",
        "~/secret.txt",
        "src/big.py:3",
        "src/bin.py:1",
        "../../../../etc/shadow",
    ):
        ex, reason = read_excerpt(str(repo), where)
        assert ex is None and reason, f"{where!r}: {ex}"
        assert "SECRET" not in reason
    ex, reason = read_excerpt(str(repo), "src/x.py:2 — the second line")
    assert reason is None and "line2" in ex.text

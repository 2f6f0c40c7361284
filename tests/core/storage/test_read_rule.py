"""THE read rule's open and listing (``storage/paths.open_file``, ``list_dir``, offered by ``safe_read`` too): what the checks
of a name allow is what is opened — a link leading out of the repository is never followed, one
inside is, and a file or folder swapped in between the check and the open is refused, never read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scars.core.storage import paths, safe_read


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "d").mkdir(parents=True)
    (root / "d" / "f.txt").write_text("inside\n", encoding="utf-8")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "secret.txt").write_text("SECRET\n", encoding="utf-8")
    return root


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 100)
    finally:
        os.close(fd)


def test_a_link_inside_is_followed_and_one_leading_out_never_opened(repo: Path):
    (repo / "in.txt").symlink_to(repo / "d" / "f.txt")
    (repo / "out.txt").symlink_to(repo.parent / "out" / "secret.txt")
    (repo / "d2").symlink_to(repo / "d")
    (repo / "o").symlink_to(repo.parent / "out")
    assert _read(safe_read.open_file(repo / "in.txt", root=repo)) == b"inside\n"
    assert _read(safe_read.open_file(repo / "d2" / "f.txt", root=repo)) == b"inside\n"
    for name in ("out.txt", "o/secret.txt"):
        with pytest.raises(safe_read.Unreadable, match="outside the repository"):
            safe_read.open_file(repo / name, root=repo)
    assert sorted(safe_read.list_dir(repo / "d2", root=repo)) == ["f.txt"]
    with pytest.raises(safe_read.Unreadable, match="points outside the repository; not read"):
        safe_read.list_dir(repo / "o", root=repo)
    # Without a repository (a file of the user's own), the OS resolves it.
    assert _read(safe_read.open_file(repo / "out.txt")) == b"SECRET\n"


def _replacing(repo: Path, monkeypatch, times: int) -> list[int]:
    """``_checked`` that, for its first ``times`` calls, replaces the file checked (a writer's
    atomic replace) right after checking it; the calls made."""
    checked = paths._checked
    calls: list[int] = []

    def check_then_replace(path, root, what):
        got = checked(path, root, what)
        calls.append(1)
        if len(calls) <= times:
            new = repo / "d" / f"new-{len(calls)}.txt"
            new.write_text(f"written {len(calls)}\n", encoding="utf-8")
            os.replace(new, path)  # another file under the name checked
        return got

    monkeypatch.setattr(paths, "_checked", check_then_replace)
    return calls


def test_a_file_replaced_after_the_check_is_checked_and_opened_again(repo: Path, monkeypatch):
    """Before: refused at once — a waiter polling its request died (exit 2) when the answer's
    atomic replace landed between the check and the open."""
    calls = _replacing(repo, monkeypatch, times=paths.REPLACED_TRIES - 1)
    assert _read(safe_read.open_file(repo / "d" / "f.txt", root=repo)) == b"written 2\n"
    assert len(calls) == paths.REPLACED_TRIES  # the file read is the one its last check saw


def test_a_file_replaced_at_every_try_is_refused(repo: Path, monkeypatch):
    calls = _replacing(repo, monkeypatch, times=paths.REPLACED_TRIES)
    with pytest.raises(safe_read.Unreadable, match="was replaced while it was read"):
        safe_read.open_file(repo / "d" / "f.txt", root=repo)
    assert len(calls) == paths.REPLACED_TRIES


def test_a_link_swapped_in_for_a_checked_file_is_not_followed(repo: Path, monkeypatch):
    """The name was a file when checked: it is opened without following a link, so a link put in
    its place (even to the very file checked) is refused."""
    kept = repo / "d" / "kept.txt"
    checked = paths._checked

    def check_then_link(path, root, what):
        got = checked(path, root, what)
        os.rename(path, kept)
        os.symlink(kept, path)
        return got

    monkeypatch.setattr(paths, "_checked", check_then_link)
    with pytest.raises(safe_read.Unreadable, match="cannot read"):
        safe_read.open_file(repo / "d" / "f.txt", root=repo)


@pytest.mark.parametrize("swapped_in", ["a link leading out", "another folder"])
def test_a_folder_swapped_after_the_check_is_not_listed(repo: Path, monkeypatch, swapped_in: str):
    calls = []
    real_refusal = paths.folder_refusal

    def refusal_then_swap(path, root):
        got = real_refusal(path, root)
        calls.append(path)
        os.rename(repo / "d", repo / "d-moved")
        if swapped_in == "another folder":
            (repo / "d").mkdir()
            (repo / "d" / "planted.txt").write_text("x", encoding="utf-8")
        else:
            os.symlink(repo.parent / "out", repo / "d")
        return got

    monkeypatch.setattr(paths, "folder_refusal", refusal_then_swap)
    with pytest.raises(safe_read.Unreadable, match="cannot read" if "link" in swapped_in else "was replaced"):
        safe_read.list_dir(repo / "d", root=repo)
    assert calls


def test_the_size_limit_is_the_callers_or_none(repo: Path):
    f = repo / "d" / "f.txt"  # 7 bytes
    os.close(safe_read.open_file(f, root=repo, limit=7))
    with pytest.raises(safe_read.Unreadable, match="over the 6-byte limit"):
        safe_read.open_file(f, root=repo, limit=6)
    os.close(safe_read.open_file(f, root=repo))  # no limit: a journal, a file only hashed
    assert safe_read.read_with_fingerprint(f, root=repo, limit=7)[0] == b"inside\n"
    assert safe_read.read_with_fingerprint(repo / "nothing", root=repo) == (None, None)


def test_only_a_folder_is_listed(repo: Path):
    with pytest.raises(NotADirectoryError):
        safe_read.list_dir(repo / "d" / "f.txt", root=repo)
    with pytest.raises(FileNotFoundError):
        safe_read.list_dir(repo / "nothing", root=repo)
    assert safe_read.list_dir(repo, root=repo) == ["d"]  # the repository itself is the user's own

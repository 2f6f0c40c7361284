"""THE write rule (storage/confine), the private modes, the lock's refusal and the cache's owner check.

Issue 27 §1 and §5. Each test names the reproducer it covers and failed before its fix.
"""

from __future__ import annotations

import fcntl
import os
import pickle
import stat
from pathlib import Path

import pytest

from scars.core.errors import LockHeld
from scars.core.samsara.session import FeatureSession
from scars.core.storage import cache, durable
from scars.core.storage.durable import append_record, atomic_write
from scars.core.storage.lock import FeatureLock
from tests.factories import clean_env, item_id, samsara_feature


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    (r / ".git").mkdir(parents=True)
    return r


def _outside(tmp_path: Path, text: bytes = b"export PATH=mine\n") -> Path:
    victim = tmp_path / "home" / ".bashrc"
    victim.parent.mkdir(parents=True, exist_ok=True)
    victim.write_bytes(text)
    return victim


def test_an_atomic_replace_through_a_link_out_is_refused_and_the_outside_file_kept(repo, tmp_path):
    """Reproducer: `feature.json.bak` a symlink to a shell start-up file; the replace rewrote it."""
    victim = _outside(tmp_path)
    (repo / "feature.json.bak").symlink_to(victim)
    with pytest.raises(Exception) as exc:
        atomic_write(repo / "feature.json.bak", b'{"x": "$(touch pwned)"}\n', root=repo)
    assert getattr(exc.value, "exit_code", 0) == 6
    assert "feature.json.bak" in str(exc.value) and str(victim) in str(exc.value)
    assert victim.read_bytes() == b"export PATH=mine\n"
    assert (repo / "feature.json.bak").is_symlink()
    assert [p.name for p in victim.parent.iterdir()] == [".bashrc"]  # no temporary file left there either


def test_an_append_through_a_link_out_or_into_a_linked_folder_is_refused(repo, tmp_path):
    """Reproducer: PROGRESS.md / auto-decisions.md links out, and `.scars/` a link to a folder outside."""
    victim = _outside(tmp_path)
    (repo / "PROGRESS.md").symlink_to(victim)
    (repo / ".scars").symlink_to(victim.parent, target_is_directory=True)
    for path in (repo / "PROGRESS.md", repo / ".scars" / "journal.jsonl"):
        with pytest.raises(Exception, match="outside the repository") as exc:
            append_record(path, b"line\n", root=repo)
        assert getattr(exc.value, "exit_code", 0) == 6
    assert victim.read_bytes() == b"export PATH=mine\n" and sorted(os.listdir(victim.parent)) == [".bashrc"]


def test_links_that_stay_inside_are_followed_and_stay_links(repo):
    (repo / "real").mkdir()
    (repo / "real" / "log.yaml").write_bytes(b"old")
    (repo / "log.yaml").symlink_to("real/log.yaml")
    (repo / "dir").symlink_to("real", target_is_directory=True)
    atomic_write(repo / "log.yaml", b"new", root=repo)
    append_record(repo / "dir" / "j.jsonl", b"x\n", root=repo)
    assert (repo / "log.yaml").is_symlink() and (repo / "real" / "log.yaml").read_bytes() == b"new"
    assert (repo / "real" / "j.jsonl").read_bytes() == b"x\n"


def test_a_fifo_or_a_folder_in_place_of_the_file_is_refused(repo):
    os.mkfifo(repo / "pipe")
    (repo / "folder").mkdir()
    for name in ("pipe", "folder"):
        with pytest.raises(Exception, match="nothing was written") as exc:
            append_record(repo / name, b"x\n", root=repo)
        assert getattr(exc.value, "exit_code", 0) == 6


def test_a_link_swapped_in_after_the_check_cannot_redirect_the_write(repo, tmp_path):
    """The race: the folder is checked and opened by descriptor; a link swapped in afterwards
    changes nothing about where the bytes go (they land in the folder opened, never the link's)."""
    from scars.core.storage import confine  # the rule itself (new with it)

    victim_dir = _outside(tmp_path).parent
    (repo / ".scars").mkdir()
    where = confine.place(repo / ".scars" / "journal.jsonl", repo)
    try:
        os.rename(repo / ".scars", repo / "moved")
        (repo / ".scars").symlink_to(victim_dir, target_is_directory=True)
        fd = os.open(where.name, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600, dir_fd=where.dir_fd)
        os.write(fd, b"x\n")
        os.close(fd)
    finally:
        where.close()
    assert sorted(os.listdir(victim_dir)) == [".bashrc"]
    assert (repo / "moved" / "journal.jsonl").read_bytes() == b"x\n"
    # And a new write now meets the link: refused.
    with pytest.raises(Exception, match="outside the repository"):
        append_record(repo / ".scars" / "journal.jsonl", b"y\n", root=repo)


def test_a_lock_linked_out_is_never_opened_nor_emptied(repo, tmp_path):
    """Reproducer: `.scars/lock` a link to an outside file; taking and releasing the lock (opening
    `scars triage` and pressing q) emptied that file."""
    victim = _outside(tmp_path)
    (repo / ".scars").mkdir()
    (repo / ".scars" / "lock").symlink_to(victim)
    with pytest.raises(Exception, match="outside the repository") as exc:
        FeatureLock(repo).acquire()
    assert getattr(exc.value, "exit_code", 0) == 6
    assert victim.read_bytes() == b"export PATH=mine\n"


def test_journal_lock_and_state_folder_are_private_unless_the_folder_is_group_shared(tmp_path, monkeypatch):
    """Reproducer (§5): journal, lock and `.scars/` were created 0644 / 0755: every local user could
    read the decisions, and open the lock to block every writer."""
    clean_env(monkeypatch)
    old = os.umask(0o022)
    try:
        feature = samsara_feature(tmp_path / "repo")
        with FeatureSession.open(feature) as s:
            s.decide(item_id(feature, "Retry count is hard-coded to 3"), "fix")
        mode = lambda p: stat.S_IMODE(os.stat(p).st_mode)  # noqa: E731
        assert mode(feature / ".scars") == 0o700
        assert mode(feature / ".scars" / "lock") == 0o600
        assert mode(feature / ".scars" / "journal.jsonl") == 0o600
        # A feature folder shared with its group (group-writable, setgid): the group keeps its bits.
        shared = samsara_feature(tmp_path / "team")
        os.chmod(shared, 0o2775)
        with FeatureSession.open(shared) as s:
            s.decide(item_id(shared, "Retry count is hard-coded to 3"), "fix")
        assert mode(shared / ".scars") & 0o070 == 0o070 and mode(shared / ".scars") & 0o007 == 0
        assert mode(shared / ".scars" / "journal.jsonl") == 0o660
        assert mode(shared / ".scars" / "lock") == 0o660
    finally:
        os.umask(old)


def test_an_old_public_lock_of_ours_is_made_private_when_taken(repo):
    (repo / ".scars").mkdir()
    (repo / ".scars" / "lock").write_bytes(b"")
    os.chmod(repo / ".scars" / "lock", 0o644)
    with FeatureLock(repo):
        pass
    assert stat.S_IMODE(os.stat(repo / ".scars" / "lock").st_mode) == 0o600


def test_a_holder_that_wrote_nothing_is_named_by_pid_and_the_refusal_says_what_to_do(repo):
    """Reproducer (§5): anyone who can read `.scars/lock` can flock it read-only and block every
    writer; the refusal said "its details are not written yet" and named nobody."""
    (repo / ".scars").mkdir()
    (repo / ".scars" / "lock").write_bytes(b"")
    fd = os.open(repo / ".scars" / "lock", os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(LockHeld) as exc:
            FeatureLock(repo).acquire()
    finally:
        os.close(fd)
    message = str(exc.value)
    assert "not written yet" not in message
    if os.path.exists("/proc/locks"):
        assert f"pid {os.getpid()}" in message and "wrote no details" in message
    else:  # pragma: no cover - no /proc
        assert "fuser" in message


# -- the cache: a planted pickle ---------------------------------------------------------------------


class _Planted:
    def __reduce__(self):
        return (os.mkdir, (os.environ["PLANTED_MARK"],))


def _plant(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        pickle.dump(_Planted(), f)


def _foreign(path: Path, monkeypatch) -> None:
    """Make ``path`` another user's: chown as root; otherwise this process pretends to be another uid."""
    if os.getuid() == 0:
        os.chown(path, 12345, 12345)
    else:  # pragma: no cover - the build machine runs as root
        real = os.getuid()
        monkeypatch.setattr(cache.os, "getuid", lambda: real + 1)


def test_a_pickle_planted_by_another_user_is_never_loaded(tmp_path, monkeypatch):
    """Reproducer (§5): with SCARS_CACHE_DIR on a folder another user can write, a planted pickle ran
    code as the user on the next `scars status`."""
    d = tmp_path / "cache"
    mark = tmp_path / "PWNED"
    monkeypatch.setenv("SCARS_CACHE_DIR", str(d))
    monkeypatch.delenv("SCARS_NO_CACHE", raising=False)
    monkeypatch.setenv("PLANTED_MARK", str(mark))
    feature = tmp_path / "f"
    path = cache.cache_file(feature)
    _plant(path)
    os.chmod(d, 0o700)
    _foreign(path, monkeypatch)
    assert cache.load(feature, {}) is None
    assert not mark.exists()


def test_a_cache_folder_others_can_write_is_neither_loaded_nor_written(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    mark = tmp_path / "PWNED"
    monkeypatch.setenv("SCARS_CACHE_DIR", str(d))
    monkeypatch.delenv("SCARS_NO_CACHE", raising=False)
    monkeypatch.setenv("PLANTED_MARK", str(mark))
    feature = tmp_path / "f"
    _plant(cache.cache_file(feature))
    os.chmod(d, 0o777)
    assert cache.load(feature, {}) is None and not mark.exists()
    assert cache._write(cache.cache_file(tmp_path / "g"), {"format": cache.FORMAT}, 1) is False
    assert not cache.cache_file(tmp_path / "g").exists()


def test_durable_keeps_its_fsyncs_through_the_rule(repo, monkeypatch):
    """The rule changes where, not how durably: the rename and a creation are followed by an fsync
    of the folder they are in."""
    from tests.factories import SyscallTrace

    (repo / "d").mkdir()
    trace = SyscallTrace(monkeypatch)
    atomic_write(repo / "d" / "a", b"x", root=repo)
    append_record(repo / "d" / "b", b"y\n", root=repo)
    assert trace.missing_dir_fsyncs() == []
    assert durable  # the module under trace


def test_the_repository_itself_is_no_file_to_write(repo):
    """A write whose target is the repository folder (a path that names no file below the root) is
    refused by the walk and by the record-level check alike, and nothing is made."""
    from scars.core.errors import OutsideRepository
    from scars.core.storage import confine

    before = sorted(os.listdir(repo))
    for call in (lambda: confine.place(repo, repo), lambda: confine.check(repo, repo)):
        with pytest.raises(OutsideRepository, match="the repository itself"):
            call()
    with pytest.raises(OutsideRepository):
        atomic_write(repo, b"x", root=repo)
    assert sorted(os.listdir(repo)) == before
    confine.check(repo / "new.txt", repo)  # one component below the root: no refusal

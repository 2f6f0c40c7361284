"""scars.core.storage.durable: atomic replace, append-only records, fingerprints, injected faults."""

from __future__ import annotations

import errno
import os
import stat

import pytest

from scars.core.storage import durable
from scars.core.storage.durable import WriteFailed, append_record, atomic_write, clean_stale_temps, fingerprint


def test_atomic_write_creates_and_replaces(tmp_path):
    p = tmp_path / "f.yaml"
    atomic_write(p, b"one\n")
    assert p.read_bytes() == b"one\n"
    atomic_write(p, b"two\n")
    assert p.read_bytes() == b"two\n"
    assert [x.name for x in tmp_path.iterdir()] == ["f.yaml"]


def test_atomic_write_keeps_mode(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"x")
    p.chmod(0o640)
    atomic_write(p, b"y")
    assert stat.S_IMODE(p.stat().st_mode) == 0o640


def test_atomic_write_new_file_is_not_private(tmp_path):
    p = tmp_path / "new"
    old = os.umask(0o022)
    try:
        atomic_write(p, b"y")
    finally:
        os.umask(old)
    assert stat.S_IMODE(p.stat().st_mode) == 0o644


def test_atomic_write_goes_through_symlink(tmp_path):
    real = tmp_path / "real.yaml"
    real.write_bytes(b"old")
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    atomic_write(link, b"new")
    assert link.is_symlink()
    assert real.read_bytes() == b"new"


def test_atomic_write_failure_keeps_old_content_and_no_temp(tmp_path, monkeypatch):
    p = tmp_path / "f"
    p.write_bytes(b"old")

    def boom(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(durable.os, "replace", boom)
    with pytest.raises(WriteFailed, match="disk is full"):
        atomic_write(p, b"new")
    assert p.read_bytes() == b"old"
    assert [x.name for x in tmp_path.iterdir()] == ["f"]


@pytest.mark.parametrize("fail_at", ["write", "fsync"])
def test_atomic_write_injected_errors(tmp_path, monkeypatch, fail_at):
    p = tmp_path / "f"
    p.write_bytes(b"old")
    real = getattr(os, fail_at)

    def failing(*a, **k):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(durable.os, fail_at, failing)
    with pytest.raises(WriteFailed, match="I/O error"):
        atomic_write(p, b"new")
    monkeypatch.setattr(durable.os, fail_at, real)
    assert p.read_bytes() == b"old"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["f"]


def test_stale_temps_are_cleaned(tmp_path):
    p = tmp_path / "log.yaml"
    p.write_bytes(b"a")
    stale = tmp_path / ".log.yaml.abc123.tmp"
    stale.write_bytes(b"partial")
    other = tmp_path / ".other.yaml.abc.tmp"
    other.write_bytes(b"keep")
    old = 1_000_000_000
    os.utime(stale, (old, old))
    os.utime(other, (old, old))
    atomic_write(p, b"b")
    assert not stale.exists()
    assert other.exists()  # belongs to another target
    fresh = tmp_path / ".log.yaml.fresh.tmp"
    fresh.write_bytes(b"x")
    assert clean_stale_temps(p) == []  # too young for the default age
    assert clean_stale_temps(p, older_than=0) == [str(fresh)]


def test_append_record_appends_whole_records(tmp_path):
    p = tmp_path / "j"
    assert append_record(p, b"a\n") == 0
    assert append_record(p, b"bb\n") == 2
    assert p.read_bytes() == b"a\nbb\n"


def test_append_record_enospc_keeps_previous_content(tmp_path, monkeypatch):
    p = tmp_path / "j"
    append_record(p, b"first\n")
    real_write = os.write

    def partial_then_fail(fd, data):
        real_write(fd, bytes(data)[:3])  # a torn record reaches the file …
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(durable.os, "write", partial_then_fail)
    with pytest.raises(WriteFailed, match="disk is full") as info:
        append_record(p, b"second\n")
    assert info.value.errno == errno.ENOSPC
    monkeypatch.setattr(durable.os, "write", real_write)
    assert p.read_bytes() == b"first\n"  # … and is cut back


def test_append_record_short_write_is_a_failure(tmp_path, monkeypatch):
    p = tmp_path / "j"
    append_record(p, b"first\n")
    real_write = os.write
    monkeypatch.setattr(durable.os, "write", lambda fd, data: real_write(fd, bytes(data)[:2]))
    with pytest.raises(WriteFailed, match="short write"):
        append_record(p, b"second\n")
    monkeypatch.setattr(durable.os, "write", real_write)
    assert p.read_bytes() == b"first\n"


def test_append_record_fsync_error_is_reported(tmp_path, monkeypatch):
    p = tmp_path / "j"
    append_record(p, b"first\n")
    monkeypatch.setattr(durable.os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.EIO, "EIO")))
    with pytest.raises(WriteFailed, match="durable"):
        append_record(p, b"second\n")


def test_fingerprint_detects_same_size_change(tmp_path):
    p = tmp_path / "f"
    assert fingerprint(p) is None
    p.write_bytes(b"aaaa")
    a = fingerprint(p)
    p.write_bytes(b"bbbb")
    b = fingerprint(p)
    assert a.size == b.size and a.sha256 != b.sha256
    assert not a.same_content(b)
    atomic_write(p, b"bbbb")
    c = fingerprint(p)
    assert c.same_content(b) and c.ino != b.ino


# ------------------------------------------------------------------ directory fsyncs


def test_atomic_write_fsyncs_the_directory_after_the_rename(tmp_path, monkeypatch):
    from tests.factories import SyscallTrace

    p = tmp_path / "f.yaml"
    for content in (b"new file\n", b"replaced\n"):
        trace = SyscallTrace(monkeypatch)
        atomic_write(p, content)
        kinds = [k for k, _, _ in trace.events]
        assert "replace" in kinds
        assert trace.missing_dir_fsyncs() == []
        # The directory fsync comes after the rename, not only before it.
        last_replace = max(i for i, e in enumerate(trace.events) if e[0] == "replace")
        assert ("fsync", str(tmp_path), True) in trace.events[last_replace + 1 :]


def test_atomic_write_through_a_symlink_fsyncs_the_target_directory(tmp_path, monkeypatch):
    from tests.factories import SyscallTrace

    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "f").write_bytes(b"old")
    (tmp_path / "link").symlink_to(tmp_path / "real" / "f")
    trace = SyscallTrace(monkeypatch)
    atomic_write(tmp_path / "link", b"new")
    assert trace.missing_dir_fsyncs() == [] and str(tmp_path / "real") in trace.dir_fsyncs()


def test_append_record_fsyncs_the_directory_when_it_creates_the_file(tmp_path, monkeypatch):
    from tests.factories import SyscallTrace

    p = tmp_path / "journal.jsonl"
    trace = SyscallTrace(monkeypatch)
    append_record(p, b"first\n")
    assert ("open", str(p), True) in trace.events  # the call created the file
    assert trace.missing_dir_fsyncs() == []
    assert trace.dir_fsyncs() == [str(tmp_path)]
    # Appending to an existing file creates nothing: its own fsync is enough.
    trace = SyscallTrace(monkeypatch)
    append_record(p, b"second\n")
    assert ("open", str(p), False) in trace.events
    assert trace.dir_fsyncs() == [] and trace.missing_dir_fsyncs() == []
    assert ("fsync", str(p), False) in trace.events


def test_the_trace_catches_a_dropped_directory_fsync(tmp_path, monkeypatch):
    """The checker itself: with _fsync_dir made a no-op, both writes are reported."""
    from tests.factories import SyscallTrace

    monkeypatch.setattr(durable, "_fsync_dir", lambda directory: None)
    trace = SyscallTrace(monkeypatch)
    atomic_write(tmp_path / "a", b"x")
    append_record(tmp_path / "b", b"y\n")
    assert [m.split(":")[0] for m in trace.missing_dir_fsyncs()] == [
        f"rename to {tmp_path / 'a'}",
        f"creation of {tmp_path / 'b'}",
    ]

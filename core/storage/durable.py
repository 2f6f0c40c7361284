"""Durable writes: atomic replace, append-only records, file fingerprints.

The protocol is the one measured in the reliability notes (section 4):

* ``atomic_write`` — the new content goes to a temporary file in the same directory, is
  fsynced, gets the old file's mode, replaces the target with ``os.replace`` (atomic on
  POSIX within one filesystem) and the directory is fsynced so the rename survives a crash.
  A symlinked path is written *through* (the link stays a link); a reader sees the old or
  the new content, never a torn file.
* ``append_record`` — the complete record is built in memory and written with one
  ``os.write`` on an ``O_APPEND`` descriptor, the written length is checked and the file is
  fsynced before the call returns. A failed or short write (ENOSPC, EIO, EFBIG) is cut back
  so the previous content stays intact, and raises :class:`WriteFailed`.
* ``fingerprint`` — (dev, ino, size, mtime_ns, ctime_ns) plus sha256 of the bytes, to
  detect a file changed underneath between a read and a replace.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from scars.core.errors import ScarsError

# Temporary files of atomic_write are named ``.<basename>.<random>.tmp`` (tempfile.mkstemp's
# random part: letters, digits and ``_``).
_TMP_SUFFIX = ".tmp"
_TEMP_NAME = re.compile(r"\A\..+\.[A-Za-z0-9_]+\.tmp\Z", re.DOTALL)
# A temporary file older than this is a leftover of a killed writer (see clean_stale_temps).
STALE_TEMP_SECONDS = 60.0


class WriteFailed(ScarsError):
    """A durable write failed (disk full, I/O error); the previous content is intact."""

    exit_code = 1

    def __init__(self, message: str, path: str | os.PathLike | None = None, errno_: int | None = None):
        super().__init__(message)
        self.path = None if path is None else str(path)
        self.errno = errno_


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """Identity and content of a file at one moment. ``None`` fields never occur."""

    dev: int
    ino: int
    size: int
    mtime_ns: int
    ctime_ns: int
    sha256: str

    def same_content(self, other: Fingerprint | None) -> bool:
        return other is not None and self.sha256 == other.sha256 and self.size == other.size


def _fingerprint_of(st: os.stat_result, data: bytes) -> Fingerprint:
    return Fingerprint(
        dev=st.st_dev,
        ino=st.st_ino,
        size=st.st_size,
        mtime_ns=st.st_mtime_ns,
        ctime_ns=st.st_ctime_ns,
        sha256=hashlib.sha256(data).hexdigest(),
    )


def read_with_fingerprint(
    path: str | os.PathLike, limit: int | None = None
) -> tuple[bytes, Fingerprint] | tuple[None, None]:
    """Read a file and fingerprint exactly what was read (``fstat`` of the fd read).

    Returns ``(None, None)`` when the file does not exist. With ``limit``, at most ``limit`` + 1
    bytes are read (the caller refuses more: ``safe_read.check_read``).
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None, None
    try:
        data = read_upto(fd, limit, os.fstat(fd).st_size)
        st = os.fstat(fd)
    finally:
        os.close(fd)
    return data, _fingerprint_of(st, data)


def read_upto(fd: int, limit: int | None = None, size_hint: int = 0) -> bytes:
    """The rest of the open file ``fd``: at most ``limit`` + 1 bytes (None: all of it).

    Read in pieces sized by ``size_hint`` (the file's size, from ``fstat``) first, then by 1 MiB:
    one ``read`` of the bound itself makes a buffer of the bound (5 MiB for every YAML file), which
    cost three times the read of a small file. A file that grew since its size was taken is read on
    up to the bound."""
    left = None if limit is None else limit + 1
    step = max(size_hint + 1, 1 << 16)
    chunks = []
    while left is None or left > 0:
        chunk = os.read(fd, step if left is None else min(step, left))
        if not chunk:
            break
        chunks.append(chunk)
        if left is not None:
            left -= len(chunk)
        step = 1 << 20
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def fingerprint(path: str | os.PathLike) -> Fingerprint | None:
    """The file's fingerprint now, or ``None`` when it does not exist."""
    _data, fp = read_with_fingerprint(path)
    return fp


def _fsync_dir(directory: str) -> None:
    try:
        dfd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(dfd)
    except OSError as exc:  # some filesystems refuse fsync on directories
        if exc.errno not in (errno.EINVAL, errno.EBADF, errno.ENOTSUP):
            raise
    finally:
        os.close(dfd)


def _temp_prefix(target: str) -> str:
    return f".{os.path.basename(target)}."


def is_temp_name(name: str) -> bool:
    """Whether ``name`` (a file name, no directory) is one ``atomic_write`` gives its temporary
    file: one being written, or the leftover of a writer killed mid-write. Never an input of a
    loop: readers and change detection (the feature cache's fingerprint, the app's live refresh)
    skip it; :func:`clean_stale_temps` removes it."""
    return _TEMP_NAME.match(name) is not None


def clean_stale_temps(path: str | os.PathLike, *, older_than: float = STALE_TEMP_SECONDS) -> list[str]:
    """Remove temporary files that killed ``atomic_write`` calls left next to ``path``.

    Only files named like this module's temporaries for this target and older than
    ``older_than`` seconds are removed (pass 0 when holding the writer lock: then no other
    writer of ours can be mid-write). Returns the removed paths.
    """
    target = os.path.realpath(path)
    prefix = _temp_prefix(target)
    return remove_stale(
        os.path.dirname(target), lambda name: name.startswith(prefix) and is_temp_name(name), older_than=older_than
    )


def remove_stale(
    directory: str | os.PathLike, matches: Callable[[str], bool], *, older_than: float, now: float | None = None
) -> list[str]:
    """Remove the regular files of ``directory`` whose name ``matches`` and that were not modified
    for ``older_than`` seconds (the leftovers of writers killed mid-write); the removed paths."""
    removed: list[str] = []
    now = time.time() if now is None else now
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        if not matches(name):
            continue
        full = os.path.join(directory, name)
        try:
            st = os.lstat(full)
            if not stat.S_ISREG(st.st_mode) or now - st.st_mtime < older_than:
                continue
            os.unlink(full)
            removed.append(full)
        except OSError:
            continue
    return removed


def _describe(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "the disk is full"
    if exc.errno == errno.EDQUOT:
        return "the disk quota is exceeded"
    if exc.errno == errno.EIO:
        return "an I/O error occurred"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.EROFS:
        return "the filesystem is read-only"
    return exc.strerror or str(exc)


def atomic_write(path: str | os.PathLike, data: bytes, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` atomically and durably.

    Writes through a symlink (the link is kept), gives the file ``mode`` when given, else keeps
    the existing file's mode (a new file gets 0644 minus the umask), and fsyncs the file and its
    directory. On failure the temporary file is removed, the old content is untouched and
    :class:`WriteFailed` is raised (``KeyboardInterrupt`` and other non-OS errors propagate as they are).
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError("atomic_write needs bytes")
    target = os.path.realpath(path)
    directory = os.path.dirname(target)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    clean_stale_temps(target)
    # lazy: tempfile (~1.5 ms, it imports random) when a file is written, not for every reader that imports this module
    import tempfile

    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=_temp_prefix(target), suffix=_TMP_SUFFIX)
    except OSError as exc:
        raise WriteFailed(f"cannot write {target}: {_describe(exc)}", target, exc.errno) from exc
    try:
        try:
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                if n <= 0:  # pragma: no cover - os.write raises instead
                    raise OSError(errno.EIO, "short write")
                view = view[n:]
            os.fsync(fd)
        finally:
            os.close(fd)
        if mode is None and st is not None:
            mode = st.st_mode
        elif mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o644 & ~umask
        os.chmod(tmp, stat.S_IMODE(mode))
        if st is not None:
            with contextlib.suppress(OSError):  # only permitted for the owner / root
                if (st.st_uid, st.st_gid) != (os.getuid(), os.getgid()):
                    os.chown(tmp, st.st_uid, st.st_gid)
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise WriteFailed(
            f"cannot write {target}: {_describe(exc)}; the previous content is intact", target, exc.errno
        ) from exc
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    try:
        _fsync_dir(directory)
    except OSError as exc:
        raise WriteFailed(
            f"wrote {target} but could not make the rename durable: {_describe(exc)}", target, exc.errno
        ) from exc


def append_record(path: str | os.PathLike, data: bytes) -> int:
    """Append one complete record with a single ``os.write`` on ``O_APPEND``, then fsync.

    Returns the file offset at which the record starts. A short or failed write is cut back
    to the previous length (so no torn record stays behind) and raises :class:`WriteFailed`;
    an fsync failure is not retried (the record's durability is unknown, the caller must
    treat it as not saved; the record is cut back as well). Creating the file also fsyncs
    its directory.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError("append_record needs bytes")
    data = bytes(data)
    if not data:
        raise ValueError("append_record needs a non-empty record")
    target = os.path.realpath(path)
    created = not os.path.exists(target)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as exc:
        raise WriteFailed(f"cannot open {target} for appending: {_describe(exc)}", target, exc.errno) from exc
    try:
        start = os.fstat(fd).st_size
        try:
            n = os.write(fd, data)
        except OSError as exc:
            _cut_back(fd, start)
            raise WriteFailed(
                f"cannot append to {target}: {_describe(exc)}; nothing was recorded", target, exc.errno
            ) from exc
        if n != len(data):
            _cut_back(fd, start)
            raise WriteFailed(
                f"cannot append to {target}: short write ({n} of {len(data)} bytes; the disk may be full); "
                "nothing was recorded",
                target,
                errno.ENOSPC,
            )
        try:
            os.fsync(fd)
        except OSError as exc:
            # The caller reports the record not saved, so it must not stay behind either: a
            # record left in the page cache would reappear on the next read (tests/hostile).
            _cut_back(fd, start)
            raise WriteFailed(
                f"could not make the record in {target} durable: {_describe(exc)}; it was removed, nothing was recorded",
                target,
                exc.errno,
            ) from exc
    finally:
        os.close(fd)
    if created:
        try:
            _fsync_dir(os.path.dirname(target))
        except OSError as exc:
            raise WriteFailed(
                f"created {target} but could not make it durable: {_describe(exc)}", target, exc.errno
            ) from exc
    return start


def _cut_back(fd: int, length: int) -> None:
    with contextlib.suppress(OSError):
        if os.fstat(fd).st_size > length:
            os.ftruncate(fd, length)
            os.fsync(fd)


def ensure_private_dir(path: str | os.PathLike) -> Path:
    """Create a directory (and parents) if needed and make its creation durable."""
    p = Path(path)
    if p.is_dir():
        return p
    missing = []
    q = p
    while not q.exists():
        missing.append(q)
        q = q.parent
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WriteFailed(f"cannot create {p}: {_describe(exc)}", p, exc.errno) from exc
    for m in reversed(missing):
        with contextlib.suppress(OSError):
            _fsync_dir(str(m.parent))
    return p

"""Durable writes: atomic replace, append-only records, file fingerprints.

The protocol is the one measured in the reliability notes (section 4):

* ``atomic_write`` — the new content goes to a temporary file in the same directory, is
  fsynced, gets the old file's mode, replaces the target with ``os.replace`` (atomic on
  POSIX within one filesystem) and the directory is fsynced so the rename survives a crash.
  A reader sees the old or the new content, never a torn file.
* where a write goes is THE rule of ``storage/confine``: given the repository (``root``), the
  target stays inside it (a symlink on the way only while it stays inside; the link stays a
  link), is a regular file or absent, and is opened relative to its directory's descriptor;
  otherwise ``OutsideRepository`` and nothing is written.
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
from pathlib import Path

from scars.core.errors import OutsideRepository, ScarsError
from scars.core.records import record
from scars.core.sanitize import one_line
from scars.core.storage import confine

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

    @property
    def cause(self) -> str:
        """Why, in a few words ("the disk is full"), without what the message says of the record."""
        return _describe(OSError(self.errno, os.strerror(self.errno))) if self.errno else str(self)


@record(slots=True)
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
        return read_fd_with_fingerprint(fd, limit)
    finally:
        os.close(fd)


def read_fd_with_fingerprint(fd: int, limit: int | None = None) -> tuple[bytes, Fingerprint]:
    """The rest of the open file ``fd`` (at most ``limit`` + 1 bytes) and the fingerprint of exactly
    what was read (``fstat`` of ``fd``). A file someone else wrote is opened by the read rule
    (``safe_read.read_with_fingerprint``)."""
    data = read_upto(fd, limit, os.fstat(fd).st_size)
    return data, _fingerprint_of(os.fstat(fd), data)


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


def _fsync_dir(directory: str | int) -> None:
    """fsync a directory, by path or by an open descriptor (``int``)."""
    if isinstance(directory, int):
        _fsync_dir_fd(directory)
        return
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


def clean_stale_temps(
    path: str | os.PathLike, *, older_than: float = STALE_TEMP_SECONDS, root: str | os.PathLike | None = None
) -> list[str]:
    """Remove temporary files that killed ``atomic_write`` calls left next to ``path``.

    Only files named like this module's temporaries for this target and older than
    ``older_than`` seconds are removed (pass 0 when holding the writer lock: then no other
    writer of ours can be mid-write). Returns the removed paths. ``root``: the repository, whose
    write rule (``storage/confine``) finds where ``atomic_write`` made them — a target that is a
    link leading out of it had none made, and its folder is never listed nor touched; None: a
    file of the user's own, where the OS resolves it.
    """
    if root is not None:
        try:
            where = confine.place(path, root, create=False)
        except (OutsideRepository, OSError):
            return []
        try:
            gone = _remove_stale_at(where.dir_fd, _temp_prefix(where.name), older_than)
            return [os.path.join(os.path.dirname(where.path), n) for n in gone]
        finally:
            where.close()
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


def _open_place(path: str | os.PathLike, root: str | os.PathLike | None) -> confine.Place:
    """Where a write of ``path`` goes: by THE rule (``storage/confine``) inside ``root``; with no
    root (a file of the user's own) where the OS resolves it. Folders are not created here."""
    if root is not None:
        try:
            return confine.place(path, root, create=False)
        except FileNotFoundError as exc:
            raise WriteFailed(f"cannot write {path}: {_describe(exc)}", path, exc.errno) from None
        except OSError as exc:
            raise WriteFailed(f"cannot write {path}: {_describe(exc)}", path, exc.errno) from None
    target = os.path.realpath(path)
    try:
        dfd = os.open(os.path.dirname(target), _DIR_OPEN)
    except OSError as exc:
        raise WriteFailed(f"cannot write {target}: {_describe(exc)}", target, exc.errno) from exc
    return confine.Place(dfd, os.path.basename(target), target, os.fstat(dfd).st_mode)


_DIR_OPEN = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _fsync_dir_fd(dfd: int) -> None:
    try:
        os.fsync(dfd)
    except OSError as exc:  # some filesystems refuse fsync on directories
        if exc.errno not in (errno.EINVAL, errno.EBADF, errno.ENOTSUP):
            raise


def _remove_stale_at(dfd: int, prefix: str, older_than: float) -> list[str]:
    """:func:`clean_stale_temps` in the open directory ``dfd`` (no path walked again): the names removed."""
    now = time.time()
    removed: list[str] = []
    try:
        names = os.listdir(dfd)
    except OSError:
        return removed
    for name in names:
        if not (name.startswith(prefix) and is_temp_name(name)):
            continue
        with contextlib.suppress(OSError):
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            if stat.S_ISREG(st.st_mode) and now - st.st_mtime >= older_than:
                os.unlink(name, dir_fd=dfd)
                removed.append(name)
    return removed


def _new_temp(dfd: int, name: str) -> tuple[int, str]:
    """A temporary file for ``name`` made in the open directory ``dfd``: ``O_CREAT | O_EXCL |
    O_NOFOLLOW`` (never an existing file or a link), 0600 until its mode is set."""
    for _ in range(100):
        tmp = f"{_temp_prefix(name)}{os.urandom(6).hex()}{_TMP_SUFFIX}"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600, dir_fd=dfd), tmp
        except FileExistsError:
            continue
    raise OSError(errno.EEXIST, "no free temporary name")  # pragma: no cover - 2**48 names


def _write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        if n <= 0:  # pragma: no cover - os.write raises instead
            raise OSError(errno.EIO, "short write")
        view = view[n:]


def atomic_write(
    path: str | os.PathLike, data: bytes, *, mode: int | None = None, root: str | os.PathLike | None = None
) -> None:
    """Replace ``path`` with ``data`` atomically and durably.

    ``root``: the repository the write must stay in (``storage/confine``: a symlink on the way —
    a folder or the file — is followed only while it stays inside, the link stays a link; else
    :class:`~scars.core.errors.OutsideRepository` and nothing is written). Without it (a file of
    the user's own) the path is resolved as the OS resolves it. The temporary file is made in the
    target's open directory (``O_EXCL | O_NOFOLLOW``) and renamed there (``dir_fd``). The file gets
    ``mode`` when given, else the existing file's mode (a new file gets 0644 minus the umask), and
    the file and its directory are fsynced. On failure the temporary file is removed, the old
    content is untouched and :class:`WriteFailed` is raised (``KeyboardInterrupt`` and other non-OS
    errors propagate as they are).
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError("atomic_write needs bytes")
    where = _open_place(path, root)
    try:
        _atomic_write_at(where, data, mode)
    finally:
        where.close()


def _atomic_write_at(where: confine.Place, data: bytes | bytearray | memoryview, mode: int | None) -> None:
    dfd, name, target = where.dir_fd, where.name, where.path
    try:
        st: os.stat_result | None = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise WriteFailed(f"cannot write {target}: {_describe(exc)}", target, exc.errno) from exc
    _remove_stale_at(dfd, _temp_prefix(name), STALE_TEMP_SECONDS)
    try:
        fd, tmp = _new_temp(dfd, name)
    except OSError as exc:
        raise WriteFailed(f"cannot write {target}: {_describe(exc)}", target, exc.errno) from exc
    try:
        try:
            _write_all(fd, data)
            os.fsync(fd)
            if mode is None and st is not None:
                mode = st.st_mode
            elif mode is None:
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o644 & ~umask
            os.fchmod(fd, stat.S_IMODE(mode))
            if st is not None:
                with contextlib.suppress(OSError):  # only permitted for the owner / root
                    if (st.st_uid, st.st_gid) != (os.getuid(), os.getgid()):
                        os.fchown(fd, st.st_uid, st.st_gid)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dfd)
        raise WriteFailed(
            f"cannot write {target}: {_describe(exc)}; the previous content is intact", target, exc.errno
        ) from exc
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dfd)
        raise
    try:
        _fsync_dir(dfd)
    except OSError as exc:
        raise WriteFailed(
            f"wrote {target} but could not make the rename durable: {_describe(exc)}", target, exc.errno
        ) from exc


def append_record(
    path: str | os.PathLike,
    data: bytes,
    *,
    root: str | os.PathLike | None = None,
    mode: int = 0o644,
    private: bool = False,
) -> int:
    """Append one complete record with a single ``os.write`` on ``O_APPEND``, then fsync.

    ``root``: as :func:`atomic_write`'s (the file is opened ``O_NOFOLLOW`` in its directory, opened
    by the rule); ``mode``: the mode a file this call creates gets (minus the umask); ``private``:
    0600 instead, or the folder's group bits when it is shared with its group (``confine.private_mode``). Returns the
    file offset at which the record starts. A short or failed write is cut back to the previous
    length (so no torn record stays behind) and raises :class:`WriteFailed`; an fsync failure is
    not retried (the record's durability is unknown, the caller must treat it as not saved; the
    record is cut back as well). Creating the file also fsyncs its directory.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError("append_record needs bytes")
    data = bytes(data)
    if not data:
        raise ValueError("append_record needs a non-empty record")
    where = _open_place(path, root)
    try:
        if private:
            return _append_at(where, data, confine.private_mode(where.dir_mode), exact=True)
        return _append_at(where, data, mode)
    finally:
        where.close()


def _append_at(where: confine.Place, data: bytes, mode: int, exact: bool = False) -> int:
    dfd, name, target = where.dir_fd, where.name, where.path
    flags = os.O_WRONLY | os.O_APPEND | _NOFOLLOW | os.O_NONBLOCK
    created = False
    try:
        try:
            fd = os.open(name, flags, dir_fd=dfd)
        except FileNotFoundError:
            try:
                fd = os.open(name, flags | os.O_CREAT | os.O_EXCL, mode, dir_fd=dfd)
                created = True
                if exact:  # a private mode: exactly (a group-shared folder's bits survive the umask)
                    with contextlib.suppress(OSError):
                        os.fchmod(fd, mode)
            except FileExistsError:  # made meanwhile
                fd = os.open(name, flags, dir_fd=dfd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a link swapped in since the rule's walk
            raise OutsideRepository(
                f"refused to append to {one_line(target)}: it changed into a symlink; nothing was written",
                link=target,
                leads_to=target,
            ) from None
        raise WriteFailed(f"cannot open {target} for appending: {_describe(exc)}", target, exc.errno) from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OutsideRepository(
                f"refused to append to {one_line(target)}: not a regular file; nothing was written",
                link=target,
                leads_to=target,
            )
        start = st.st_size
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
            _fsync_dir(dfd)
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


def remove_file(path: str | os.PathLike, *, root: str | os.PathLike) -> bool:
    """Remove the file ``path`` of the repository ``root``, by the write rule (``storage/confine``:
    its folder reached without following a link out; the name unlinked in that folder, never what
    a link named so leads to) and durably (the folder fsynced). False when there was none."""
    try:
        where = confine.place(path, root, create=False)
    except FileNotFoundError:
        return False
    try:
        try:
            os.unlink(where.name, dir_fd=where.dir_fd)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise WriteFailed(f"cannot remove {where.path}: {_describe(exc)}", where.path, exc.errno) from exc
        _fsync_dir_fd(where.dir_fd)
        return True
    finally:
        where.close()


def remove_empty_dir(path: str | os.PathLike, *, root: str | os.PathLike) -> bool:
    """Remove the folder ``path`` of the repository ``root`` when it is empty (its parent reached
    by the write rule; ``rmdir`` never follows a link). False when it is not there, not empty or
    not a folder."""
    parent = os.path.dirname(os.path.abspath(os.fspath(path)))
    try:
        where = confine.place(os.path.join(parent, ".scars-probe"), root, create=False)
    except (FileNotFoundError, NotADirectoryError):
        return False
    try:
        os.rmdir(os.path.basename(os.path.abspath(os.fspath(path))), dir_fd=where.dir_fd)
    except OSError:
        return False
    else:
        _fsync_dir_fd(where.dir_fd)
        return True
    finally:
        where.close()


def ensure_private_dir(path: str | os.PathLike, *, root: str | os.PathLike | None = None, private: bool = True) -> Path:
    """Create a directory (and parents) if needed and make its creation durable.

    ``root``: the repository it must stay in (``storage/confine.make_dir``: no folder on the way
    may lead out; ``private``: the folder itself 0700, or its parent's group bits when that is
    shared with its group). Without it (a folder of the user's own) as the OS resolves it."""
    p = Path(path)
    if root is not None:
        try:
            missing = []
            q = p
            while not os.path.lexists(q) and q != q.parent:
                missing.append(q)
                q = q.parent
            confine.make_dir(p, root, private=private)
        except OSError as exc:
            raise WriteFailed(f"cannot create {p}: {_describe(exc)}", p, exc.errno) from exc
        for m in reversed(missing):
            with contextlib.suppress(OSError):
                _fsync_dir(os.path.realpath(m.parent))
        return p
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


# -- the user's own files (outside every repository: the state directory's intents and request key,
# the cache) -----------------------------------------------------------------------------------


def users_own(st: os.stat_result) -> bool:
    """Whether a file or folder is this user's alone to write: owned by them, not writable by group
    or others. What another local user could plant or change (a pickle that runs code when loaded,
    an intent that names files to write, a request key) is never taken from anything else."""
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


class NotYours(PermissionError):
    """A file or folder of the user's own that is not theirs alone (its ``strerror`` says why)."""


def _own_dir_fd(path: str | os.PathLike) -> int:
    """The folder ``path`` of the user's own, open (made 0700 with its parents when missing): refused
    (:class:`NotYours`) when another user owns it; narrowed to 0700 when group or others had bits."""
    ensure_private_dir(path)
    fd = os.open(path, _DIR_OPEN)
    try:
        st = os.fstat(fd)
        if st.st_uid != os.getuid():
            raise NotYours(errno.EPERM, "its folder is another user's", os.fspath(path))
        if stat.S_IMODE(st.st_mode) & 0o077:
            os.fchmod(fd, 0o700)
    except BaseException:
        os.close(fd)
        raise
    return fd


def own_private_dir(path: str | os.PathLike) -> Path:
    """:func:`_own_dir_fd` for a caller that writes by path (the intents' folder)."""
    os.close(_own_dir_fd(path))
    return Path(path)


def create_private(path: str | os.PathLike, data: bytes) -> bool:
    """Make the user's own secret ``path`` holding ``data``, once: in a folder of the user's own
    (:func:`_own_dir_fd`), written 0600 under a name of its own (``O_EXCL | O_NOFOLLOW``), fsynced,
    then linked into place — never replacing a file there, never through a link — and the folder
    fsynced. False when one was there already (another process made it first: use that one)."""
    p = Path(path)
    try:
        dfd = _own_dir_fd(p.parent)
    except NotYours as exc:
        raise WriteFailed(f"cannot write {p}: {exc.strerror}", p, exc.errno) from None
    except OSError as exc:
        raise WriteFailed(f"cannot write {p}: {_describe(exc)}", p, exc.errno) from None
    try:
        fd, tmp = _new_temp(dfd, p.name)
        try:
            try:
                _write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            try:
                os.link(tmp, p.name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
                made = True
            except FileExistsError:
                made = False
        finally:
            os.unlink(tmp, dir_fd=dfd)
        _fsync_dir_fd(dfd)
    except OSError as exc:
        raise WriteFailed(f"cannot write {p}: {_describe(exc)}", p, exc.errno) from None
    finally:
        os.close(dfd)
    return made


def read_private(path: str | os.PathLike, limit: int) -> bytes | None:
    """The user's own secret ``path`` (at most ``limit`` + 1 bytes; None when absent), read without
    following a link. Refused (:class:`NotYours` saying why) when it is a link or not a regular
    file, or when it is not the user's alone: another user's, or readable or writable by anyone else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotYours(errno.EPERM, "it is a symlink (never followed)", os.fspath(path)) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotYours(errno.EPERM, "it is not a regular file", os.fspath(path))
        if st.st_uid != os.getuid() or stat.S_IMODE(st.st_mode) & 0o077:
            raise NotYours(errno.EPERM, "it is not yours alone: 0600, nobody else can read", os.fspath(path))
        return read_upto(fd, limit, st.st_size)
    finally:
        os.close(fd)

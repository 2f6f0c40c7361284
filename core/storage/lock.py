"""One writer per feature directory: ``fcntl.flock`` on ``<feature>/.scars/lock``.

A flock belongs to the open file description and the kernel drops it when the holder's
process dies, so a lock left by a killed process is simply free — no stale-lock breaking
(reliability notes §4, "Locking"). POSIX ``lockf`` locks are not used: closing *any*
descriptor of the file releases them.

The holder writes ``{"pid", "host", "user", "started"}`` (JSON) into the lock file after
taking the lock; it serves only the message another writer gets. The lock file itself is
never deleted (deleting it would let two processes lock two different inodes).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import pwd
import stat
import time
from collections.abc import Callable
from pathlib import Path

from scars.core.clock import how_long_ago, now_iso
from scars.core.errors import LockHeld, OutsideRepository, ScarsError, UsageError
from scars.core.storage import confine
from scars.core.storage.durable import WriteFailed, atomic_write, ensure_private_dir
from scars.core.storage.paths import Unreadable, open_file

STATE_DIR = ".scars"
LOCK_NAME = "lock"
# The files of a state folder made private (0600 by the creation rule, storage/confine): the journal
# (storage/journal), the watches' log (samsara/watches) and the lock. The mark of a record under way
# and .gitignore are readable by others on purpose.
PRIVATE_FILES = frozenset({"journal.jsonl", "watches.jsonl", LOCK_NAME})


def lock_path(feature_dir: str | os.PathLike) -> Path:
    return Path(feature_dir) / STATE_DIR / LOCK_NAME


def describe_holder(holder: dict) -> str:
    """``pid 123 on host (user alice) since 2026-…`` from whatever the holder wrote (or, for a
    holder that wrote nothing, what the kernel says of it: ``unannounced``)."""
    if not holder:
        return (
            "a process scars cannot name (it wrote no details, and the system does not say which process "
            "holds the lock): `fuser -v` or `lsof` on the lock file names it; the lock frees itself when it ends"
        )
    if holder.get("unannounced"):
        who = f"pid {holder.get('pid')}" + (f" (user {holder['user']})" if holder.get("user") else "")
        return (
            f"{who}, which wrote no details: not a scars writer, or one starting this moment. Ask that user, "
            "or end that process; the lock frees itself when it ends"
        )
    parts = []
    if holder.get("pid") is not None:
        parts.append(f"pid {holder['pid']}")
    if holder.get("host"):
        parts.append(f"on {holder['host']}")
    if holder.get("user"):
        parts.append(f"(user {holder['user']})")
    if holder.get("started"):
        ago = how_long_ago(str(holder["started"]))
        parts.append(f"since {holder['started']}" + (f" ({ago} ago)" if ago else ""))
    return " ".join(str(p) for p in parts) or "another scars process"


# `.scars/` holds the journal (the decisions between round closes: commit it), the lock (a
# process's own state: never commit it) and, while a gate's record of another loop runs, its mark
# (``storage.intent``: this clone's state, never carried to another). The directory ignores both.
GITIGNORE = (
    "# written by scars: the lock and a running record's mark are this clone's state; journal.jsonl and\n"
    "# watches.jsonl are the record\nlock\ninterrupted.json\n.interrupted.json.*.tmp\n"
)
# What scars wrote before the mark existed: brought up to date (a file of any other text is the user's).
_GITIGNORE_BEFORE = (
    "# written by scars: the lock is one process's state; journal.jsonl and watches.jsonl are the record\nlock\n"
)


def _is_scars_earlier_gitignore(path: Path) -> bool:
    """Whether ``path`` is a regular file (not a symlink: a clone may commit one) holding exactly
    scars' earlier text; read without following a link and no further than that text."""
    want = _GITIGNORE_BEFORE.encode()
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size != len(want):
            return False
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        return os.read(fd, len(want) + 1) == want
    except OSError:
        return False
    finally:
        os.close(fd)


def _ignore_the_lock(state_dir: Path, root: Path) -> None:
    """Write ``.scars/.gitignore`` (ignoring ``lock`` and the mark) when it is missing or is scars'
    own earlier text; never overwrite one the user wrote. By the write rule (``storage/confine``):
    a ``.gitignore`` that is a symlink is not written through."""
    path = state_dir / ".gitignore"
    try:
        with confine.placed(path, root, create=False) as where:
            fd = os.open(
                where.name,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                confine.private_mode(where.dir_mode) | 0o044,
                dir_fd=where.dir_fd,
            )
    except FileExistsError:
        if _is_scars_earlier_gitignore(path):
            with contextlib.suppress(OSError, ScarsError):
                atomic_write(path, GITIGNORE.encode(), root=root)
        return
    except (OSError, OutsideRepository):  # not writable, or a link: the lock decides
        return
    try:
        os.write(fd, GITIGNORE.encode())
    finally:
        os.close(fd)


def _cannot_write(path: Path, exc: BaseException) -> ScarsError:
    """A lock that cannot be created: a read-only checkout or directory is a refused write (exit
    1, like any write that fails), never a usage error."""
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return WriteFailed(
        f"cannot write in {path.parent if path.name == LOCK_NAME else path} ({reason}): this checkout is not "
        "writable here, so nothing can be recorded; look with `scars triage --read-only` or `scars status`",
        path,
        exc.errno if isinstance(exc, OSError) else None,
    )


def read_holder(path: str | os.PathLike) -> dict:
    """The holder info written in a lock file ({} when absent, unreadable or not a regular file:
    a symlink is not followed)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return {}
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return {}
        raw = os.read(fd, 4096)
        data = json.loads(raw.decode("utf-8", "replace") or "{}")
    except (OSError, ValueError):
        return {}
    finally:
        os.close(fd)
    if not isinstance(data, dict):
        return {}
    # Text of a file: a plain name or number is shown, anything else is dropped.
    return {k: v for k, v in data.items() if isinstance(v, (int, str)) and len(str(v)) <= 200}


def flock_holder(fd: int) -> dict:
    """Who holds the flock on the file open as ``fd``, as the kernel says (``/proc/locks``): ``{"pid",
    "user", "unannounced": True}``, or {} when that cannot be told (no ``/proc``, another pid
    namespace)."""
    try:
        st = os.fstat(fd)
        with open("/proc/locks", encoding="ascii", errors="replace") as f:
            lines = f.read(1 << 20).splitlines()
    except OSError:
        return {}
    want = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in lines:
        fields = line.split()
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == want:
            try:
                pid = int(fields[4])
            except ValueError:
                return {}
            if pid <= 0:
                return {}
            user = ""
            with contextlib.suppress(OSError, KeyError):
                user = pwd.getpwuid(os.stat(f"/proc/{pid}").st_uid).pw_name
            return {"pid": pid, "user": user, "unannounced": True}
    return {}


def _read_holder_fd(fd: int) -> dict:
    """:func:`read_holder` of the lock file open as ``fd`` (no path walked again)."""
    try:
        raw = os.pread(fd, 4096, 0)
        data = json.loads(raw.decode("utf-8", "replace") or "{}")
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, (int, str)) and len(str(v)) <= 200}


_HOLDER_GRACE = 0.25  # seconds to wait for a holder's details before refusing without them


class FeatureLock:
    """The writer lock of one feature directory.

    ``acquire()`` takes it without waiting (or waits up to ``timeout`` seconds) and raises
    :class:`LockHeld` naming the holder when another process has it. Use as a context
    manager or call ``release()``.
    """

    def __init__(
        self,
        feature_dir: str | os.PathLike,
        *,
        user: str = "",
        lock_file: str | os.PathLike | None = None,
        root: str | os.PathLike | None = None,
        private_files: Callable[[str], bool] | None = None,
    ):
        self.feature_dir = Path(feature_dir)
        # ``lock_file``: another lock of the same kind (a gate request's, ``.scars/requests/<id>.lock``).
        self.path = Path(lock_file) if lock_file is not None else lock_path(feature_dir)
        # ``root``: the repository the lock's folder and file stay in (the write rule, storage/confine);
        # a directory with no repository around it is its own.
        self.root = Path(root) if root is not None else self.feature_dir
        # The private files of the lock's folder (narrowed to the creation rule when the lock is taken):
        # a state folder's PRIVATE_FILES, or those the caller names (a request's, in the inbox).
        self.private_files = private_files or (PRIVATE_FILES.__contains__ if lock_file is None else None)
        self.user = user
        self._fd: int | None = None
        self.holder: dict | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, timeout: float = 0.0) -> FeatureLock:
        if self._fd is not None:
            return self
        try:
            ensure_private_dir(self.path.parent, root=self.root)
        except OutsideRepository:
            raise
        except Exception as exc:
            raise _cannot_write(self.path.parent, exc) from exc
        # Made before the 0700 / 0600 rule (0755, 0644): narrowed to it now that it is written.
        confine.narrow_private(self.path.parent, self.root, self.private_files or (lambda name: False))
        if self.path.name == LOCK_NAME:
            _ignore_the_lock(self.path.parent, self.root)
        fd = self._open()
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    os.close(fd)
                    raise UsageError(f"cannot lock {self.path}: {exc.strerror}") from exc
                if time.monotonic() >= deadline:
                    holder = _read_holder_fd(fd)
                    if not holder and time.monotonic() < deadline + _HOLDER_GRACE:
                        # The holder is between flock and writing its details, or releasing
                        # (it empties the file before unlocking): look again shortly rather
                        # than refuse without naming it (tests/hostile, two writers).
                        time.sleep(0.005)
                        continue
                    holder = holder or flock_holder(fd)
                    os.close(fd)
                    likely = (
                        ""
                        if not holder or holder.get("unannounced")
                        else " It is most likely an open `scars triage` app: decide there, or quit it (q) and run "
                        "this again; the lock frees itself when that process ends."
                    )
                    raise LockHeld(
                        f"another writer holds the lock of {self.feature_dir} ({self.path}): "
                        f"{describe_holder(holder)}.{likely} Reading works meanwhile "
                        "(`scars status`, `scars round status`, `scars triage --read-only`).",
                        holder,
                    ) from None
                time.sleep(0.05)
        self._fd = fd
        # lazy: socket (~3 ms) when a lock is taken, not for every reader of the journal that imports this module
        import socket

        self.holder = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "user": self.user,
            "started": now_iso(),
        }
        data = (json.dumps(self.holder, ensure_ascii=True) + "\n").encode()
        with contextlib.suppress(OSError):  # holder info is for messages only
            os.ftruncate(fd, 0)
            os.pwrite(fd, data, 0)
        return self

    def _open(self) -> int:
        """The lock file opened by the write rule: never through a symlink, a regular file only,
        made 0600 (or its folder's group bits: storage/confine.private_mode) so that no other user
        can open it (a flock needs only a read-only descriptor) — one of ours made 0644 before is
        made so too."""
        try:
            with confine.placed(self.path, self.root, create=False) as where:
                mode = confine.private_mode(where.dir_mode)
                flags = os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
                made = False
                try:
                    fd = os.open(where.name, flags, dir_fd=where.dir_fd)
                except FileNotFoundError:
                    try:
                        fd = os.open(where.name, flags | os.O_CREAT | os.O_EXCL, mode, dir_fd=where.dir_fd)
                        made = True
                    except FileExistsError:  # made meanwhile
                        fd = os.open(where.name, flags, dir_fd=where.dir_fd)
        except OutsideRepository:
            raise
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise OutsideRepository(
                    f"refused to use {self.path} as the lock: it changed into a symlink; nothing was written",
                    link=str(self.path),
                    leads_to=str(self.path),
                ) from None
            raise _cannot_write(self.path, exc) from exc
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise OutsideRepository(
                    f"refused to use {self.path} as the lock: not a regular file; nothing was written",
                    link=str(self.path),
                    leads_to=str(self.path),
                )
            if st.st_uid == os.getuid() and (made or stat.S_IMODE(st.st_mode) & ~mode):
                with contextlib.suppress(OSError):
                    os.fchmod(fd, mode)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    def __enter__(self) -> FeatureLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()

    def __del__(self):  # pragma: no cover - best effort if a caller forgets release()
        with contextlib.suppress(Exception):
            self.release()


def current_holder(
    feature_dir: str | os.PathLike,
    *,
    lock_file: str | os.PathLike | None = None,
    root: str | os.PathLike | None = None,
) -> dict | None:
    """The holder of the feature's lock (or of ``lock_file``), or ``None`` when nobody holds it
    (test-and-release). The lock is opened by the read rule inside ``root`` (None: the feature
    directory): one that is, or is in, a link leading out of the repository is never opened."""
    path = Path(lock_file) if lock_file is not None else lock_path(feature_dir)
    try:
        fd = open_file(path, root=feature_dir if root is None else root, what="the lock")
    except (OSError, Unreadable):
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return _read_holder_fd(fd) or flock_holder(fd)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)

"""THE write rule: every file scars writes, and every directory it creates, stays inside its repository.

A repository someone else prepared (a clone) may hold symlinks in place of the files and folders
scars writes: ``.scars/`` linked to a folder of the user's, ``feature.json.bak`` linked to a shell
start-up file. Before a write, :func:`place` walks from the repository root to the target one
component at a time, on directory descriptors:

* every directory is opened with ``O_DIRECTORY | O_NOFOLLOW`` relative to the one before
  (``dir_fd``); a missing one is created there (``os.mkdir(name, dir_fd=…)``) and opened the same
  way, so a link swapped in between the check and the use makes the open fail (refused), never
  redirects it;
* a symlink met on the way — a folder or the file itself — is resolved: when its target (every
  component resolved) stays inside the repository the walk goes on from there (the link stays a
  link; as reads follow a symlink inside the repository, ``storage/paths``), else the write is
  refused with :class:`~scars.core.errors.OutsideRepository` naming the link and where it leads;
* the file itself must be a regular file or absent (a directory, FIFO or device is refused).

The caller then creates or opens the final name relative to the directory descriptor: appends
with ``O_NOFOLLOW``, atomic replaces with a temporary file made ``O_CREAT | O_EXCL | O_NOFOLLOW`` in
that directory and renamed with ``os.replace(…, src_dir_fd=, dst_dir_fd=)`` (``storage/durable``).
Nothing is written anywhere when the walk refuses.

*The repository* is the root the caller read the loop under (samsara's ``changes/`` root, the
loops' reader root, the requests' root); a loop state directory with no repository around it is
its own root. The root itself — the path the user named and the folders above it — is the user's
own and is resolved as the OS resolves it. ``root=None`` (a file of the user's own: their keymap,
their state directory's intents, an export they named) resolves the target as the OS does.

New private files and folders (the journal, the lock, requests: :func:`private_mode`) are 0600 /
0700 unless the folder they are made in is shared with its group (group-writable or setgid): then
they keep its group bits.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator

from scars.core.errors import OutsideRepository
from scars.core.records import record
from scars.core.sanitize import one_line

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_MAX_HOPS = 40  # symlinks resolved on one walk (the kernel's own limit)


@record(frozen=False, slots=True)
class Place:
    """Where a write goes: the open directory ``dir_fd`` and the ``name`` in it; ``path`` is the
    real path (messages, fsync bookkeeping), ``mode`` the directory's mode."""

    dir_fd: int
    name: str
    path: str
    dir_mode: int

    def close(self) -> None:
        fd, self.dir_fd = self.dir_fd, -1
        if fd >= 0:
            os.close(fd)


def _shown(path: str) -> str:
    return one_line(path)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _refuse(link: str, leads: str, root: str) -> OutsideRepository:
    return OutsideRepository(
        f"refused to write through {_shown(link)}: it is a symlink leading to {_shown(leads)}, outside the "
        f"repository {_shown(root)}; nothing was written. Remove the link (or replace it by a file) and run "
        "this again",
        link=link,
        leads_to=leads,
    )


def _split(path: str | os.PathLike, root: str | os.PathLike) -> tuple[str, str, list[str]]:
    """(the root as given, absolute; its real path; the components of ``path`` below it)."""
    root_abs = os.path.abspath(os.fspath(root))
    root_real = os.path.realpath(root_abs)
    p = os.path.abspath(os.fspath(path))
    for base in (root_abs, root_real):
        if _inside(p, base):
            rel = os.path.relpath(p, base)
            parts = [] if rel == "." else rel.split(os.sep)
            return root_abs, root_real, parts
    # Spelt through another path of the repository (a link above it, as a home folder may be): its
    # real folder inside the real root is inside. The walk from the root checks every component.
    real_dir = os.path.realpath(os.path.dirname(p))
    if _inside(real_dir, root_real):
        rel = os.path.relpath(os.path.join(real_dir, os.path.basename(p)), root_real)
        return root_abs, root_real, rel.split(os.sep)
    raise OutsideRepository(
        f"refused to write {_shown(p)}: it is not inside the repository {_shown(root_abs)}; nothing was written",
        link=p,
        leads_to=p,
    )


def dir_mode_for(parent_mode: int, *, private: bool) -> int:
    """The mode of a folder made in a folder of ``parent_mode``: private ones 0700 (+ the parent's
    group bits when it is shared with its group), others 0777 (the umask applies)."""
    if not private:
        return 0o777
    if parent_mode & (stat.S_IWGRP | stat.S_ISGID):
        return 0o700 | (parent_mode & 0o070)
    return 0o700


def private_mode(dir_mode: int) -> int:
    """The mode of a private file (journal, lock, request) made in a folder of ``dir_mode``: 0600, or
    0660 / 0640 following the folder's group bits when it is shared with its group."""
    if dir_mode & (stat.S_IWGRP | stat.S_ISGID):
        return 0o600 | (dir_mode & 0o060)
    return 0o600


def _walk(root_abs: str, root_real: str, parts: list[str], *, create: bool, private: bool, final_is_dir: bool) -> Place:
    """The walk of the module docstring: (the open directory of the target, its name)."""
    hops = 0
    shown_base = root_abs  # the path as the caller spelt it, for naming a link
    while True:
        restart: list[str] | None = None
        fd = os.open(root_real, _DIR_FLAGS & ~getattr(os, "O_NOFOLLOW", 0))  # the root: the user's own
        real = root_real
        shown = shown_base
        try:
            dir_mode = os.fstat(fd).st_mode
            dirs = parts if final_is_dir else parts[:-1]
            for i, name in enumerate(dirs):
                if name in ("", ".", ".."):
                    raise OutsideRepository(
                        f"refused to write {_shown(os.path.join(shown, *parts[i:]))}: not a plain path; nothing was written",
                        link=shown,
                        leads_to=shown,
                    )
                made: int | None = None  # the mode of a folder this walk made (set exactly, not minus the umask)
                try:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except FileNotFoundError:
                    if not create:
                        raise
                    want = dir_mode_for(dir_mode, private=private and i == len(dirs) - 1)
                    with contextlib.suppress(FileExistsError):  # made meanwhile: opened (no link) below
                        os.mkdir(name, want, dir_fd=fd)
                        made = want if want != 0o777 else None
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode):
                    restart = _through_link(os.path.join(real, name), os.path.join(shown, name), root_real, root_abs)
                    restart = restart + list(parts[i + 1 :])
                    break
                if not stat.S_ISDIR(st.st_mode):
                    raise OutsideRepository(
                        f"refused to write in {_shown(os.path.join(shown, name))}: it is not a directory; nothing was "
                        "written",
                        link=os.path.join(shown, name),
                        leads_to=os.path.join(real, name),
                    )
                try:
                    nfd = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR):  # a link swapped in since the stat
                        raise OutsideRepository(
                            f"refused to write in {_shown(os.path.join(shown, name))}: it changed into a symlink "
                            "while being written; nothing was written",
                            link=os.path.join(shown, name),
                            leads_to=os.path.join(real, name),
                        ) from None
                    raise
                os.close(fd)
                fd = nfd
                if made is not None:  # the group bits a shared folder gives survive the umask
                    with contextlib.suppress(OSError):
                        os.fchmod(fd, made | (dir_mode & stat.S_ISGID))
                dir_mode = os.fstat(fd).st_mode
                real = os.path.join(real, name)
                shown = os.path.join(shown, name)
            if restart is None:
                if final_is_dir:
                    return Place(fd, "", real, dir_mode)
                name = parts[-1]
                try:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except FileNotFoundError:
                    return Place(fd, name, os.path.join(real, name), dir_mode)
                if stat.S_ISREG(st.st_mode):
                    return Place(fd, name, os.path.join(real, name), dir_mode)
                if not stat.S_ISLNK(st.st_mode):
                    kind = (
                        "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file (a FIFO, socket or device)"
                    )
                    raise OutsideRepository(
                        f"refused to write {_shown(os.path.join(shown, name))}: it is {kind}; nothing was written",
                        link=os.path.join(shown, name),
                        leads_to=os.path.join(real, name),
                    )
                restart = _through_link(os.path.join(real, name), os.path.join(shown, name), root_real, root_abs)
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
        hops += 1
        if hops > _MAX_HOPS:
            raise OutsideRepository(
                f"refused to write {_shown(os.path.join(root_abs, *parts))}: a symlink loop; nothing was written",
                link=os.path.join(root_abs, *parts),
                leads_to="",
            )
        parts = restart
        shown_base = root_abs


def _through_link(real_link: str, shown_link: str, root_real: str, root_abs: str) -> list[str]:
    """The components (below the root) a symlink inside the repository leads to; refused when it
    leads out of it (or loops)."""
    try:
        target = os.path.realpath(real_link, strict=False)
    except OSError:  # pragma: no cover - realpath(strict=False) does not raise on Linux
        target = ""
    if not target or os.path.islink(target) or not _inside(target, root_real) or target == root_real:
        raise _refuse(shown_link, target or os.readlink(real_link), root_abs)
    rel = os.path.relpath(target, root_real)
    return rel.split(os.sep)


def _file_parts(path: str | os.PathLike, root: str | os.PathLike) -> tuple[str, str, list[str]]:
    """:func:`_split` for a file: the repository itself is no file to write."""
    root_abs, root_real, parts = _split(path, root)
    if not parts:
        raise OutsideRepository(
            f"refused to write {_shown(root_abs)}: it is the repository itself, not a file in it",
            link=root_abs,
            leads_to=root_abs,
        )
    return root_abs, root_real, parts


def place(path: str | os.PathLike, root: str | os.PathLike, *, create: bool = True, private: bool = False) -> Place:
    """Where a write of ``path`` goes, checked by the rule (the caller closes ``Place.dir_fd``).

    ``create``: missing folders are made (``private``: the last one is a private folder, 0700 or
    its parent's group bits). Raises :class:`~scars.core.errors.OutsideRepository` (nothing made
    but the folders inside the repository), ``FileNotFoundError`` when a folder is missing and
    ``create`` is false, and ``OSError`` as the calls raise it."""
    root_abs, root_real, parts = _file_parts(path, root)
    return _walk(root_abs, root_real, parts, create=create, private=private, final_is_dir=False)


@contextlib.contextmanager
def placed(
    path: str | os.PathLike, root: str | os.PathLike, *, create: bool = True, private: bool = False
) -> Iterator[Place]:
    where = place(path, root, create=create, private=private)
    try:
        yield where
    finally:
        where.close()


def check(path: str | os.PathLike, root: str | os.PathLike) -> None:
    """Refuse now (:class:`~scars.core.errors.OutsideRepository`) a write of ``path`` the rule would
    refuse, making nothing: a record of several writes checks every target before its first write
    (``storage/intent``). A folder still missing is no refusal (it is made inside when written)."""
    root_abs, root_real, parts = _file_parts(path, root)
    with contextlib.suppress(FileNotFoundError):
        _walk(root_abs, root_real, parts, create=False, private=False, final_is_dir=False).close()


def make_dir(path: str | os.PathLike, root: str | os.PathLike, *, private: bool = False) -> str:
    """Make the folder ``path`` (and the missing ones above it, below ``root``) by the rule; its
    real path. ``private``: ``path`` itself gets 0700 (or its parent's group bits)."""
    root_abs, root_real, parts = _split(path, root)
    if not parts:
        return root_real
    where = _walk(root_abs, root_real, parts, create=True, private=private, final_is_dir=True)
    where.close()
    return where.path


def narrow_private(
    folder: str | os.PathLike, root: str | os.PathLike, files: Callable[[str], bool] = lambda name: False
) -> None:
    """Narrow a private folder scars made before the 0700 / 0600 rule (``.scars/``, the requests
    inbox) and the private files in it that ``files`` names (the journal, the lock, a request) to
    the modes the creation rule gives today: the folder :func:`dir_mode_for` its parent (0700, or
    the parent's group bits when the repository is shared with its group), a file
    :func:`private_mode` the folder (0600, or the folder's group bits). Bits are only taken away,
    and only from what this user owns; the folder is reached by the rule's walk (never through a
    link leading out), each file opened in it without following a link. Nothing here fails the
    caller: what cannot be narrowed stays as it is."""
    root_abs, root_real, parts = _split(folder, root)
    if not parts:
        return
    with contextlib.suppress(OSError, OutsideRepository):
        where = _walk(root_abs, root_real, parts, create=False, private=False, final_is_dir=True)
        try:
            st = os.fstat(where.dir_fd)
            if st.st_uid == os.getuid():
                parent = os.stat("..", dir_fd=where.dir_fd).st_mode
                _narrow(where.dir_fd, st, dir_mode_for(parent, private=True))
            want = private_mode(os.fstat(where.dir_fd).st_mode)
            for name in os.listdir(where.dir_fd):
                if files(name):
                    _narrow_file(where.dir_fd, name, want)
        finally:
            where.close()


def _narrow(fd: int, st: os.stat_result, want: int) -> None:
    """Take from the open ``fd`` (stat ``st``) the permission bits ``want`` lacks (set-id and sticky
    bits are kept)."""
    mode = stat.S_IMODE(st.st_mode)
    narrowed = mode & (want | 0o7000)
    if narrowed != mode:
        os.fchmod(fd, narrowed)


def _narrow_file(dir_fd: int, name: str, want: int) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), dir_fd=dir_fd)
        try:
            st = os.fstat(fd)
            if stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid():
                _narrow(fd, st, want)
        finally:
            os.close(fd)


def check_inside(path: str | os.PathLike, root: str | os.PathLike, what: str = "") -> None:
    """Refuse (:class:`~scars.core.errors.OutsideRepository`) a ``path`` whose real path leaves
    the real ``root`` (a folder a command was given, reached through a symlink leading out)."""
    root_real = os.path.realpath(os.fspath(root))
    real = os.path.realpath(os.fspath(path))
    if _inside(real, root_real):
        return
    link = os.path.abspath(os.fspath(path))
    raise OutsideRepository(
        f"refused {_shown(what or link)}: {_shown(link)} leads to {_shown(real)}, outside the repository "
        f"{_shown(os.path.abspath(os.fspath(root)))} (a symlink); nothing was read or written",
        link=link,
        leads_to=real,
    )

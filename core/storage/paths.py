"""Paths named inside untrusted files, resolved only when they stay inside the repository; and THE
read rule's open and listing of a repository's files and folders (``open_file``, ``list_dir``) and
its bounded, decoded read of a text (``read_bytes``, ``decode``, ``read_text``), on which
``storage/safe_read`` builds its policy for YAML and JSON (and re-exports these) — here, without the
YAML reader, for the journal, the lock and the intents a warm ``scars status`` reads, and the
excerpts and logs the app reads before the feature needs a parse.

An item's ``where`` / ``debt_location`` (``src/export.py:40-88``) is text written by an
agent or a person. Before scars reads a file it names (to show an excerpt: see
``scars.core.samsara.locate``), or a symlinked input file (:func:`symlink_refusal`), the path
goes through ``resolve_inside``: it must be relative, free of NUL and control characters, and
resolve — symlinks followed — to a regular file under the repository root. Anything else
gives a one-line reason to show *instead of* an excerpt; the file is never opened.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from scars.core.storage.durable import Fingerprint, read_fd_with_fingerprint, read_upto

# The bound of a text file read (safe_read's YAML and JSON have their own).
TEXT_MAX_BYTES = 8 * 1024 * 1024


def resolve_inside(repo_root: str | os.PathLike[str], path: str) -> Path | str:
    """Return the real path of ``path`` (relative to ``repo_root``) or the reason it is refused.

    Refused (the reason is returned as a ``str``): an empty path, a NUL or control
    character, an absolute path, ``~``, a path that resolves outside the repository (``..``
    or a symlink pointing out), a symlink loop, a missing file, and anything that is not a
    regular file (a directory, a FIFO, a device). Nothing is opened here.
    """
    if not isinstance(path, str) or not path.strip():
        return "no path given"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in path):
        return "the path contains a control character; not read"
    if os.path.isabs(path) or path.startswith("\\\\"):
        return "an absolute path; only paths relative to the repository are read"
    if path.startswith("~"):
        return "a path starting with ~; only paths relative to the repository are read"
    root = os.path.realpath(os.fspath(repo_root))
    candidate = os.path.join(root, path)
    real = os.path.realpath(candidate)  # strict=False: resolves as far as it can, never raises
    try:
        inside = os.path.commonpath([root, real]) == root
    except ValueError:  # different drives (Windows)
        inside = False
    if not inside:
        via = " (a symlink leads out)" if os.path.normpath(candidate).startswith(root + os.sep) else ""
        return f"points outside the repository; not read{via}"
    try:
        st = os.stat(real)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symlink loop; not read"
        return (
            "no such file in the repository"
            if isinstance(exc, FileNotFoundError)
            else f"cannot read: {exc.strerror or exc}"
        )
    if stat.S_ISDIR(st.st_mode):
        return "a directory, not a file"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file (a FIFO, socket or device); not read"
    return Path(real)


def is_inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
        return True
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a symlink loop (Python 3.11)
        return False


def symlink_refusal(path: Path, root: Path) -> str | None:
    """Why an input file is not read because of a symlink — the file itself (outside the
    repository, a loop …) or a folder on its way leading out of the repository — or None."""
    if not path.is_symlink():
        return folder_refusal(path, root)
    got = resolve_inside(root, os.path.relpath(path, root))
    return got if isinstance(got, str) else None


def _below(path: str, root: str) -> bool:
    return path.startswith(root.rstrip(os.sep) + os.sep)


def folder_refusal(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not read because the folder holding it leads out of the repository (a
    symlinked ``scar-reports/``, ``.samsara/`` or feature directory pointing outside), or None. The
    same rule as the writes' (``storage/confine``): every component resolved, inside the root."""
    root_abs = os.path.abspath(os.fspath(root))
    root_real = os.path.realpath(root_abs)
    full = os.path.abspath(os.fspath(path))
    parent = os.path.dirname(full)
    if parent in (root_abs, root_real) or not any(_below(full, r) for r in (root_abs, root_real)):
        return None  # directly in the root, or a path that is not the repository's (the caller's own)
    if _below(os.path.realpath(parent), root_real) or os.path.realpath(parent) == root_real:
        return None
    return "is in a folder that points outside the repository; not read (a symlink leads out)"


# -- THE read rule's open and listing (storage/safe_read builds its policy on them) ---------------


class Unreadable(ValueError):
    """A file refused by the policy, or not usable as what it should be. ``line`` is 1-based
    where known."""

    def __init__(self, reason: str, line: int | None = None):
        super().__init__(reason if line is None else f"{reason} (line {line})")
        self.reason = reason
        self.line = line


def _checked(
    path: str | os.PathLike[str], root: str | os.PathLike[str] | None, what: str
) -> tuple[os.stat_result, bool]:
    """The policy's checks of the name, without reading: (the stat of the file it leads to, whether
    the name itself is a symlink). Raises :class:`Unreadable`, and ``FileNotFoundError``."""
    try:
        st = os.lstat(path)
        link = stat.S_ISLNK(st.st_mode)
        if link:
            if root is not None:
                why = symlink_refusal(Path(path), Path(root))
                if why is not None:
                    raise Unreadable(f"{what} {why}")
            st = os.stat(path)
        elif root is not None:
            why = folder_refusal(path, root)
            if why is not None:
                raise Unreadable(f"{what} {why}")
    except (FileNotFoundError, Unreadable):
        raise
    except OSError as exc:
        raise Unreadable(f"cannot read {what}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise Unreadable(f"{what} is not a regular file")
    return st, link


def _within(st: os.stat_result, limit: int | None, what: str) -> None:
    if limit is not None and st.st_size > limit:
        raise Unreadable(f"{what} is {st.st_size:,} bytes, over the {limit:,}-byte limit; not read")


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def open_file(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    limit: int | None = None,
    what: str = "file",
) -> int:
    """THE open of a file someone else wrote: :func:`check_file`'s rules (``limit``: None, no size
    limit — a journal, a file only hashed), then opened — without following a link when the name
    was none — and refused unless the descriptor is the very file checked (a link or another file
    swapped in since is never read). A file replaced between the check and the open — a writer's
    atomic replace, e.g. an answer landing on a request its waiter polls — is checked and opened
    again, up to REPLACED_TRIES times. The caller reads and closes the descriptor. Raises
    :class:`Unreadable`, and ``FileNotFoundError``."""
    for _try in range(REPLACED_TRIES):
        st, link = _checked(path, root, what)
        _within(st, limit, what)
        try:
            fd = os.open(path, _OPEN_FLAGS | (0 if link else getattr(os, "O_NOFOLLOW", 0)))
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise Unreadable(f"cannot read {what}: {exc.strerror or exc}") from None
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino) and stat.S_ISREG(now.st_mode):
            return fd
        os.close(fd)
    raise Unreadable(f"{what} was replaced while it was read; not read")


# How often a file replaced between its check and its open is checked again before it is refused.
REPLACED_TRIES = 3


def check_read(data: bytes, limit: int, what: str = "file") -> bytes:
    """``data`` read with a bound of ``limit`` + 1 bytes: refused when the file grew past the limit
    between the check and the read."""
    if len(data) > limit:
        raise Unreadable(f"{what} grew over the {limit:,}-byte limit while read; not read")
    return data


def read_with_fingerprint(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    limit: int | None = None,
    what: str = "file",
) -> tuple[bytes, Fingerprint] | tuple[None, None]:
    """:func:`read_bytes` (``limit`` None: no size limit) and the fingerprint of exactly what was
    read, for a read-modify-write (``durable.read_fd_with_fingerprint``); ``(None, None)`` when
    there is no such file. Raises :class:`Unreadable`."""
    try:
        fd = open_file(path, root=root, limit=limit, what=what)
    except FileNotFoundError:
        return None, None
    try:
        data, fp = read_fd_with_fingerprint(fd, limit)
    except OSError as exc:
        raise Unreadable(f"cannot read {what}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if limit is not None:
        check_read(data, limit, what)
    return data, fp


def fingerprint(
    path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None, what: str = "file"
) -> Fingerprint | None:
    """The fingerprint of the file now, read by the rule (None: no such file). Raises :class:`Unreadable`."""
    return read_with_fingerprint(path, root=root, what=what)[1]


def list_dir(path: str | os.PathLike[str], *, root: str | os.PathLike[str], what: str = "folder") -> list[str]:
    """The names in the folder ``path`` of the repository ``root``, by the same rule as a file's:
    a folder that is (or is in) a symlink leading out of ``root`` is never opened (``Unreadable``),
    and the folder listed is the one checked (opened without following a link when its name was
    none). Raises ``FileNotFoundError`` and ``NotADirectoryError`` as ``os.listdir`` does."""
    full = os.path.abspath(os.fspath(path))
    try:
        st = os.lstat(full)
        link = stat.S_ISLNK(st.st_mode)
        if link:
            st = os.stat(full)
    except (FileNotFoundError, NotADirectoryError):
        raise
    except OSError as exc:
        raise Unreadable(f"cannot read {what}: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), full)
    why = folder_refusal(os.path.join(full, "x"), root)
    if why is not None:
        raise Unreadable(f"{what} {why.removeprefix('is in a folder that ')}")
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(full, flags | (0 if link else getattr(os, "O_NOFOLLOW", 0)))
    except OSError as exc:
        raise Unreadable(f"cannot read {what}: {exc.strerror or exc}") from None
    try:
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            raise Unreadable(f"{what} was replaced while it was read; not read")
        return os.listdir(fd)
    finally:
        os.close(fd)


def check_file(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    limit: int | None = None,
    what: str = "file",
) -> int:
    """The policy's checks before a read, without reading: a regular file, a symlink only
    inside ``root`` (when given), at most ``limit`` bytes (default ``TEXT_MAX_BYTES``). Returns
    the limit to read up to. Raises :class:`Unreadable`, and ``FileNotFoundError``."""
    limit = TEXT_MAX_BYTES if limit is None else limit
    _within(_checked(path, root, what)[0], limit, what)
    return limit


def read_bytes(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    limit: int | None = None,
    what: str = "file",
) -> bytes:
    """The bytes of a file that passes :func:`check_file`, read with a bound (:func:`open_file`).
    Raises :class:`Unreadable`, and ``FileNotFoundError`` when there is no such file."""
    limit = TEXT_MAX_BYTES if limit is None else limit
    fd = open_file(path, root=root, limit=limit, what=what)
    try:
        data = read_upto(fd, limit, os.fstat(fd).st_size)
    except OSError as exc:
        raise Unreadable(f"cannot read {what}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    return check_read(data, limit, what)


def decode(data: bytes, *, strict: bool = True) -> str:
    """Bytes → text: UTF-8 (BOM skipped) or BOM-marked UTF-16; invalid UTF-8 is refused
    (``strict=False``: replaced by U+FFFD)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16", "strict" if strict else "replace")
        except UnicodeDecodeError as exc:
            raise Unreadable(f"invalid UTF-16 at byte {exc.start}") from None
    try:
        text = data.decode("utf-8", "strict" if strict else "replace")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise Unreadable(f"invalid UTF-8 at byte {exc.start}", line) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def read_text(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    limit: int | None = None,
    what: str = "file",
    strict: bool = True,
) -> str:
    """:func:`read_bytes` then :func:`decode`."""
    return decode(read_bytes(path, root=root, limit=limit, what=what), strict=strict)

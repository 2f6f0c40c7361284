"""Paths named inside untrusted files, resolved only when they stay inside the repository.

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

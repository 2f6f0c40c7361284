"""Paths named inside untrusted files, resolved only when they stay inside the repository.

An item's ``where`` / ``debt_location`` (``src/export.py:40-88``) is text written by an
agent or a person. Before scars reads a file it names (to show an excerpt), the path goes
through ``resolve_inside``: it must be relative, free of NUL and control characters, and
resolve — symlinks followed — to a regular file under the repository root. Anything else
gives a one-line reason to show *instead of* an excerpt; the file is never opened.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path

# `path`, `path:12`, `path:12-30`, `path:12:5` (line:column), `path#L12`, `path#L12-L30`.
_LOCATION = re.compile(
    r"^(?P<path>.+?)(?:(?::(?P<a>\d+)(?:[-–](?P<b>\d+)|:\d+)?)|(?:#L(?P<c>\d+)(?:-L?(?P<d>\d+))?))?$"
)


def parse_location(text: str) -> tuple[str, int | None, int | None]:
    """Split ``"src/x.py:40-88"`` into ``("src/x.py", 40, 88)``; lines are None when absent.

    Only the first whitespace-separated token is taken as the location (``where`` values
    often go on with prose: ``"src/x.py:40 — the retry loop"``).
    """
    token = text.strip().split()[0] if text and text.strip() else ""
    token = token.rstrip(",;.)")
    m = _LOCATION.match(token)
    if not m:
        return token, None, None
    start = m.group("a") or m.group("c")
    end = m.group("b") or m.group("d")
    first = int(start) if start else None
    last = int(end) if end else first
    if first is not None and last is not None and last < first:
        first, last = last, first
    return m.group("path"), first, last


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
        via = " (through a symlink)" if os.path.normpath(candidate).startswith(root + os.sep) else ""
        return f"points outside the repository{via}; not read"
    try:
        st = os.stat(real)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symlink loop; not read"
        return "no such file in the repository" if isinstance(exc, FileNotFoundError) else f"cannot read: {exc.strerror or exc}"
    if stat.S_ISDIR(st.st_mode):
        return "a directory, not a file"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file (a FIFO, socket or device); not read"
    return Path(real)

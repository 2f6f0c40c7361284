"""Which files and folders outside a repository this process opened or listed: Python's audit events.

The canary tree of the hostile tests proves that no byte outside the repository *changed*; this
proves that none was *read* (the README: a path that resolves outside the repository is never
opened). Every ``open`` (``builtins.open``, ``os.open``, ``io.open``: the audit event ``open``) and
every listing (``os.listdir``, ``os.scandir``) this process makes while :func:`watching` is active
is resolved (symlinks followed, as the call would) and kept when it lands under ``top``.

A call made relative to an open folder (``dir_fd``, as the write rule's are) names no path to
resolve and is not seen here: those are the write rule's own opens, whose folder was opened by it
— and the folder's own open is seen. A child process (the watches' regex search, ``scars serve``)
is not seen either: the canary hashes cover it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

_EVENTS = {"open", "os.listdir", "os.scandir"}


@dataclass(frozen=True)
class Opened:
    """One open or listing: the audit event, the path as the call named it, where it resolves."""

    event: str
    path: str
    real: str

    def __str__(self) -> str:
        return f"{self.event} {self.path} -> {self.real}"

    __repr__ = __str__


_WATCHERS: list[tuple[str, list[Opened]]] = []


def _hook(event: str, args: tuple) -> None:
    if event not in _EVENTS or not _WATCHERS or not args:
        return
    path = args[0]
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    elif isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str) or not os.path.isabs(path):
        return  # a descriptor, or a name relative to one (dir_fd): see the module docstring
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return
    for top, seen in _WATCHERS:
        if real == top or real.startswith(top + os.sep):
            seen.append(Opened(event, path, real))


sys.addaudithook(_hook)  # once per process: an audit hook cannot be removed, only made idle


@contextlib.contextmanager
def watching(top: Path) -> Iterator[list[Opened]]:
    """The opens and listings of paths that resolve under ``top``, made in this block."""
    seen: list[Opened] = []
    entry = (os.path.realpath(top), seen)
    _WATCHERS.append(entry)
    try:
        yield seen
    finally:
        _WATCHERS.remove(entry)

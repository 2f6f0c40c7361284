"""Find every loop state under a path: ``discover_loops(root) -> list[LoopState]``.

One walk of the tree (symlinked directories are not followed; ``.git``, virtual
environments, ``node_modules`` and caches are skipped); each registered loop system
(``loops.registry``) recognises its own files in it (its ``find``), and a file given directly
is read by the first system whose ``read_path`` knows its name. Waiting loops come first.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from scars.core.errors import PathNotFound
from scars.core.loops.base import LoopState
from scars.core.loops.registry import kind_order, system_of_kind, systems
from scars.core.loops.system import WalkedDir
from scars.core.model import Problem
from scars.core.records import replace
from scars.core.storage.intent import intent_path, mark_is_own, pending, pointer_path

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "site-packages",
        ".scars",
    }
)


def sort_key(state: LoopState, order: tuple[str, ...] | None = None) -> tuple:
    kinds = kind_order() if order is None else order
    kind = kinds.index(state.kind) if state.kind in kinds else len(kinds)
    return (not state.waiting_for_human, kind, state.path, state.name)


def _sorted(states: list[LoopState]) -> list[LoopState]:
    order = kind_order()
    return sorted(states, key=lambda s: sort_key(s, order))


def _read_file(path: Path, root: Path, now: datetime | None) -> list[LoopState]:
    for system in systems():
        states = system.read_path(path, root, now)
        if states is not None:
            return states
    return []


def _record_dir(state: LoopState, root: Path) -> Path | None:
    """The directory a gate of this loop records in (its lock and its intent file: the gates'
    ``decisions_dir``); None for a loop whose records are not there (samsara's are its journal's)."""
    system = system_of_kind(state.kind)
    return None if system is None else system.record_dir(state, root)


def _file_names() -> str:
    names = [s.file_names for s in systems() if s.file_names]
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)


def _interrupted(states: list[LoopState], root: Path) -> list[LoopState]:
    """A loop whose gate's record a kill interrupted says so (a warning): this read writes nothing;
    the next gate on that loop completes the record first (``storage.intent``)."""
    out = []
    for state in states:
        where = _record_dir(state, root)
        if where is not None and pending(where):
            own = intent_path(where).is_file()
            if not own and mark_is_own(where):  # a record of this user's that ended: only its mark left
                out.append(state)
                continue
            note = Problem(
                str(intent_path(where) if own else pointer_path(where)),
                None,
                "a gate's answer recorded here was interrupted (its writer was killed): the loop's files lack "
                + (
                    "part of it until the next `scars gate` on this loop completes it"
                    if own
                    else "part of it until its writer's next `scars gate` on this loop completes it (its intent "
                    "is another user's, or of another state directory); remove this file to go on without it"
                ),
                "warning",
            )
            state = replace(state, parse_failures=(*state.parse_failures, note))
        out.append(state)
    return out


def discover_loops(path: str | os.PathLike[str], *, now: datetime | None = None) -> list[LoopState]:
    """Every loop state under ``path`` (a directory, or one state file), waiting ones first.

    Raises PathNotFound when ``path`` does not exist. Unreadable files become states with
    parse failures; nothing found gives an empty list.
    """
    start = Path(path)
    if not start.exists():
        raise PathNotFound.missing(path)
    start = start.absolute()
    if start.is_file():
        root = start.parent
        states = _read_file(start, root, now)
        if not states:
            raise PathNotFound(f"{path}: not a loop state file ({_file_names()})")
        return _sorted(_interrupted(states, root))
    root = start
    walk: list[WalkedDir] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        walk.append(WalkedDir(here, tuple(dirnames), frozenset(filenames), here.relative_to(root)))
    states = [state for system in systems() for state in system.find(root, walk, now)]
    return _sorted(_interrupted(states, root))

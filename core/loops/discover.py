"""Find every loop state under a path: ``discover_loops(root) -> list[LoopState]``.

One walk of the tree (symlinked directories are not followed; ``.git``, virtual
environments, ``node_modules`` and caches are skipped) recognises:

* loop-spec: ``.loop-spec/features/<slug>/feature.json``;
* review loops: a directory holding ``REVIEW_STATE.json`` or ``AUTO_REVIEW.md``;
* bkit: ``.bkit/state/pdca-status.json`` (else the legacy ``docs/.pdca-status.json``) and
  ``.bkit/state/sprints/*.json``;
* DAG reports: ``*.yaml`` / ``*.yml`` with an ``iterationDecision:`` or ``convergenceReport:``
  root key, under a path with ``dag`` in a name;
* samsara features under every ``changes/`` directory (through ``scars.core.samsara.feature``).

A file given directly is read as whatever its name says it is. Waiting loops come first.
"""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import scars.core.loops.bkit.reader as bkit
import scars.core.loops.dag.reader as dag
import scars.core.loops.loopspec.reader as loopspec
import scars.core.loops.review.reader as review
from scars.core.errors import PathNotFound
from scars.core.loops.base import KINDS, LoopState
from scars.core.loops.samsara.reader import fast_track_state, read_samsara_feature
from scars.core.model import Problem
from scars.core.samsara.layout import find_fast_tracks, find_features
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
YAML_SUFFIXES = (".yaml", ".yml")


def sort_key(state: LoopState) -> tuple:
    kind = KINDS.index(state.kind) if state.kind in KINDS else len(KINDS)
    return (not state.waiting_for_human, kind, state.path, state.name)


def _samsara_features(repo: Path) -> list[Path]:
    try:
        return list(find_features(repo))
    except Exception:  # a broken tree must not hide the other loops
        return []


def _fast_tracks(repo: Path) -> list[Path]:
    try:
        return list(find_fast_tracks(repo))
    except Exception:  # a broken tree must not hide the other loops
        return []


def _read_file(path: Path, root: Path, now: datetime | None) -> list[LoopState]:
    name = path.name
    if name == "feature.json":
        return [loopspec.read_feature(path, root)]
    if name in ("REVIEW_STATE.json", "AUTO_REVIEW.md", "REVIEWER_MEMORY.md"):
        return [review.read_review_dir(path.parent, root, now=now)]
    if name in ("pdca-status.json", ".pdca-status.json"):
        return bkit.read_status(path, root)
    if path.suffix == ".json" and path.parent.name == "sprints":
        return [bkit.read_sprint(path, root)]
    if path.suffix in YAML_SUFFIXES:
        return [dag.read_report(path, root)]
    return []


def _record_dir(state: LoopState, root: Path) -> Path | None:
    """The directory a gate of this loop records in (its lock and its intent file: the gates'
    ``decisions_dir``); None for samsara, whose records are its journal's."""
    if state.kind == "samsara":
        return None
    p = root / state.path
    if p.is_dir():
        return p
    return p.parent.parent if state.kind == "bkit-sprint" and p.parent.name == "sprints" else p.parent


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
            raise PathNotFound(
                f"{path}: not a loop state file (feature.json, REVIEW_STATE.json, AUTO_REVIEW.md, "
                "pdca-status.json, a sprint .json or a DAG report .yaml)"
            )
        return sorted(_interrupted(states, root), key=sort_key)
    root = start
    states = []
    review_dirs: set[Path] = set()
    samsara_dirs: list[Path] = []
    fast_dirs: list[Path] = []
    if root.parent.name == "changes":  # a samsara feature directory given directly
        samsara_dirs.extend(p for p in _samsara_features(root.parent.parent) if p.resolve() == root.resolve())
        fast_dirs.extend(p for p in _fast_tracks(root.parent.parent) if p.resolve() == root.resolve())
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        if "changes" in dirnames:
            samsara_dirs.extend(_samsara_features(here))
            fast_dirs.extend(_fast_tracks(here))
        files = set(filenames)
        if "feature.json" in files and here.parent.name == "features" and here.parent.parent.name == ".loop-spec":
            states.append(loopspec.read_feature(here / "feature.json", root))
        if "REVIEW_STATE.json" in files or "AUTO_REVIEW.md" in files:
            review_dirs.add(here)
        if here.name == "state" and here.parent.name == ".bkit" and "pdca-status.json" in files:
            states.extend(bkit.read_status(here / "pdca-status.json", root))
        if here.name == "docs" and ".pdca-status.json" in files:
            current = here.parent / bkit.CURRENT_STATUS
            if not current.is_file():
                states.extend(bkit.read_status(here / ".pdca-status.json", root))
        if here.name == "sprints" and here.parent.name == "state" and here.parent.parent.name == ".bkit":
            for f in sorted(files):
                if f.endswith(".json"):
                    states.append(bkit.read_sprint(here / f, root))
        relative = here.relative_to(root)
        for f in sorted(files):
            if f.endswith(YAML_SUFFIXES) and dag.is_dag_path(relative / f):
                candidate = here / f
                if candidate.is_file() and not candidate.is_symlink() and dag.root_key(candidate):
                    states.append(dag.read_report(candidate, root))
    for directory in sorted(review_dirs):
        states.append(review.read_review_dir(directory, root, now=now))
    seen: set[Path] = set()
    for feature_dir in samsara_dirs:
        key = Path(feature_dir).resolve()
        if key in seen:
            continue
        seen.add(key)
        states.append(read_samsara_feature(Path(feature_dir), root))
    for fast in fast_dirs:
        key = Path(fast).resolve()
        if key not in seen:
            seen.add(key)
            states.append(fast_track_state(Path(fast), root))
    return sorted(_interrupted(states, root), key=sort_key)

"""The systemic registry ``.samsara/systemic-scars.yaml`` (formats.md §1.7): present, missing or unreadable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scars.core.model import REGISTRY_FILE, Registry
from scars.core.samsara.reports import describe_shape
from scars.core.storage import cache as feature_cache
from scars.core.storage import safe_read
from scars.core.values import as_text

REGISTRY_PATH = tuple(REGISTRY_FILE.split("/"))


_REGISTRY_MEMO: dict[str, tuple[tuple, Registry]] = {}


def read_registry(repo_root: Path | None) -> Registry:
    """The repository's registry; parsed once per process while its file is unchanged.

    (Reading every feature of a repository reads the same registry each time: the memo is
    keyed by the file's stat stamp, as scars.core.storage.cache explains, and skips files changed
    too recently for a stamp to be trusted.)
    """
    if repo_root is None:
        return _read_registry(repo_root)
    path = repo_root.joinpath(*REGISTRY_PATH)
    stamp = feature_cache._entry(path)
    memo = _REGISTRY_MEMO.get(str(path))
    if memo is not None and memo[0] == stamp:
        return memo[1]
    registry = _read_registry(repo_root)
    if not feature_cache._too_recent(stamp):
        _REGISTRY_MEMO[str(path)] = (stamp, registry)
    return registry


def _read_registry(repo_root: Path | None) -> Registry:
    if repo_root is None:
        return Registry(state="missing", reason="no repository root found")
    path = repo_root.joinpath(*REGISTRY_PATH)
    rel = REGISTRY_FILE
    if not path.exists() and not path.is_symlink():
        return Registry(state="missing", path=rel)
    loaded, problem = safe_read.load_path_quiet(path, root=repo_root)
    if problem is not None:
        return Registry(state="unreadable", path=rel, reason=problem.reason, line=problem.line)
    assert loaded is not None  # load_path_quiet returns the file or its problem
    if loaded.problems:  # duplicate keys: which list of ids is meant is not knowable
        line, reason = loaded.problems[0]
        return Registry(state="unreadable", path=rel, reason=reason, line=line)
    data = loaded.value
    if data is None:
        return Registry(state="unreadable", path=rel, reason="empty file (no YAML document)")
    if not isinstance(data, dict):
        return Registry(
            state="unreadable",
            path=rel,
            line=1,
            reason=f"not a mapping: the top level is {describe_shape(data)}, expected an 'entries' list",
        )
    entries = data.get("entries")
    if not isinstance(entries, list):
        got = "missing" if "entries" not in data else f"{describe_shape(entries)}, not a list"
        return Registry(
            state="unreadable", path=rel, reason=f"'entries' is {got}", line=loaded.key_lines.get("entries")
        )
    out: dict[str, dict[str, Any]] = {}
    for e in entries:
        if isinstance(e, dict) and e.get("id") is not None:
            out[as_text(e["id"])] = e
    return Registry(state="present", entries=out, path=rel)

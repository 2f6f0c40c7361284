"""Where an item points: resolve ``where`` / ``debt_location`` safely, suggest owners.

Paths written in reports are untrusted. A location is read only when its real path (all
symlinks resolved) lies inside the repository root; otherwise the reason is returned
instead of the text. Nothing here imports a terminal library.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path

from scars.core.git import authors_of
from scars.core.records import record
from scars.core.storage import paths
from scars.core.storage.paths import resolve_inside

EXCERPT_MAX_BYTES = 2_000_000  # a larger file is not read for an excerpt


EXCERPT_CONTEXT = 3  # lines shown before and after a single-line location


EXCERPT_MAX_LINES = 40


# "path", "path:12", "path:12-40", "path:L12", "path#L12-L40", "path line 12"
_LOC = re.compile(
    r"^\s*`?(?P<path>[^\s:`#]+?)`?(?:(?::|#L?|\s+line\s+)L?(?P<a>\d+)(?:\s*[-–]\s*L?(?P<b>\d+))?)?\s*(?:[\s,;(].*)?$"
)


@record(slots=True)
class Excerpt:
    path: str  # relative to the repository root
    first_line: int  # 1-based line of ``text``'s first line
    text: str
    highlight: tuple[int, int] | None  # the lines the location names


@record(slots=True)
class Location:
    raw: str
    path: str | None
    start: int | None
    end: int | None


def parse_location(where: str) -> Location:
    """Split ``src/export.py:40-88`` into path and line range (None where absent)."""
    first = where.strip().splitlines()[0] if where.strip() else ""
    m = _LOC.match(first)
    if not m:
        return Location(where, None, None, None)
    a = int(m.group("a")) if m.group("a") else None
    b = int(m.group("b")) if m.group("b") else a
    if a is not None and b is not None and b < a:
        a, b = b, a
    return Location(where, m.group("path"), a, b)


def resolve_in_repo(repo_root: str | os.PathLike[str] | None, rel: str) -> tuple[Path | None, str | None]:
    """(real path, None) when ``rel`` names a regular file inside the repository, else (None, reason).

    The rules live in :func:`scars.core.storage.paths.resolve_inside` (also used by the reader):
    relative paths only, no control characters (a NUL used to raise ValueError here), no
    way out through ``..`` or symlinks, no loops, FIFOs or devices.
    """
    if not repo_root:
        return None, "no repository root was found for this feature"
    got = resolve_inside(repo_root, rel)
    if isinstance(got, str):
        return None, got
    return got, None


def git_authors(repo_root: str | None, rel_paths: list[str]) -> list[str]:
    """Authors of the files (most recent first), from ``git log``; [] when git is unavailable.

    Only paths that resolve inside the repository are passed to git."""
    if not repo_root or not rel_paths:
        return []
    safe = []
    for rel in rel_paths:
        real, _ = resolve_in_repo(repo_root, rel)
        if real is not None:
            safe.append(str(real))
    if not safe:
        return []
    return authors_of(repo_root, safe)


def read_excerpt(repo_root: str | None, where: str | None) -> tuple[Excerpt | None, str | None]:
    """The excerpt a location names, or (None, reason shown instead)."""
    if not where or not where.strip():
        return None, None
    loc = parse_location(where)
    if loc.path is None:
        return None, "the location is not a file path"
    real, reason = resolve_in_repo(repo_root, loc.path)
    if real is None:
        return None, reason
    try:  # resolved inside the repository above; read by the one policy, bounded
        data = paths.read_bytes(real, root=repo_root, limit=EXCERPT_MAX_BYTES, what="the file")
    except (paths.Unreadable, OSError) as exc:
        return None, f"{exc} (no excerpt)"
    if b"\0" in data[:8192]:
        return None, "the file is binary"
    lines = data.decode("utf-8", errors="replace").splitlines()
    if loc.start is None:
        start, end, hl = 1, min(len(lines), EXCERPT_MAX_LINES // 2), None
    else:
        if loc.start > len(lines):
            return None, f"the file has {len(lines)} lines; line {loc.start} does not exist"
        hl = (loc.start, min(loc.end or loc.start, len(lines)))
        start = max(1, loc.start - EXCERPT_CONTEXT)
        end = min(len(lines), hl[1] + EXCERPT_CONTEXT, start + EXCERPT_MAX_LINES - 1)
    assert repo_root is not None  # resolve_in_repo refused a missing root above
    rel = str(real.relative_to(Path(os.path.realpath(repo_root))))
    return Excerpt(rel, start, "\n".join(lines[start - 1 : end]), hl), None


def codeowners(repo_root: str | None, rel_paths: list[str]) -> list[str]:
    """Owners from CODEOWNERS (last matching rule wins, as GitHub does); all owners when no path."""
    if not repo_root:
        return []
    for cand in (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"):
        real, _ = resolve_in_repo(repo_root, cand)
        if real is not None:
            break
    else:
        return []
    try:
        text = paths.read_text(real, root=repo_root, strict=False)
    except (paths.Unreadable, OSError):
        return []
    rules: list[tuple[str, list[str]]] = []
    for line in text.splitlines()[:5000]:
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) >= 2:
            rules.append((parts[0], parts[1:]))
    found: dict[str, None] = {}
    if not rel_paths:
        for _, owners in rules:
            for o in owners:
                found.setdefault(o, None)
        return list(found)
    for rel in rel_paths:
        owners_for: list[str] = []
        for pattern, owners in rules:
            if _codeowners_match(pattern, rel):
                owners_for = owners
        for o in owners_for:
            found.setdefault(o, None)
    return list(found)


def _codeowners_match(pattern: str, rel: str) -> bool:
    rel = rel.lstrip("/")
    anchored = pattern.startswith("/")
    pat = pattern.lstrip("/")
    if pat.endswith("/"):
        pat += "**"
    if "/" not in pat.rstrip("*") and not anchored:
        return any(fnmatch.fnmatch(part, pat) for part in rel.split("/")) or fnmatch.fnmatch(rel, pat)
    if fnmatch.fnmatch(rel, pat):
        return True
    return rel.startswith(pat.rstrip("*").rstrip("/") + "/")

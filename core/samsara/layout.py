"""Where samsara features are, and a feature whose files are unchanged since it was cached.

What finds feature directories and repository roots (``changes/<feature>/``), and the cache
lookup of ``read_feature`` (``scars.core.storage.cache``), without the reader itself: a warm
``scars status`` opens its feature from here without importing the YAML reader, the log
matcher or the possible patterns (``scars.core.samsara.feature`` reads when this finds none).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from scars.core.errors import PathNotFound
from scars.core.model import Feature
from scars.core.storage import cache as feature_cache
from scars.core.storage.confine import check_inside
from scars.core.storage.parallel import gc_paused

REPORTS_DIR = "scar-reports"

# Files whose presence makes a directory a samsara feature directory.
FEATURE_MARKERS = (
    REPORTS_DIR,
    "index.yaml",
    "iteration-log.yaml",
    "pre-thinking.md",
    "1.5-pre-thinking.md",
    "auto-decisions.md",
)


# A changes/ directory holding this (and no feature marker) is a fast-track: samsara's side route
# around implement and iteration (formats.md §1.1), listed as what it is, never silently left out.
FAST_TRACK = "fast-track.yaml"
FAST_TRACK_SAID = "fast-track (fast-track.yaml): side route, not iteration"


def is_feature_dir(path: Path) -> bool:
    if not path.is_dir():
        return False
    return any((path / m).exists() for m in FEATURE_MARKERS)


def find_repo_root(path: str | os.PathLike[str]) -> Path | None:
    """Nearest ancestor (``path`` itself included) holding ``changes/`` or ``.samsara/``."""
    p = Path(path).absolute()
    if p.is_file():
        p = p.parent
    for candidate in (p, *p.parents):
        if (candidate / "changes").is_dir() or (candidate / ".samsara").is_dir():
            return candidate
    return None


def find_features(root: str | os.PathLike[str]) -> list[Path]:
    """Feature directories under ``root/changes/``, sorted by name (dated names sort by date). A
    ``changes/`` that is a link leading out of the repository is never listed: refused
    (:class:`~scars.core.errors.OutsideRepository`, the read rule of ``storage/confine``)."""
    changes = Path(root) / "changes"
    if not changes.is_dir():
        return []
    check_inside(changes, root, "changes/")
    return sorted((p for p in changes.iterdir() if is_feature_dir(p)), key=lambda p: p.name)


def find_fast_tracks(root: str | os.PathLike[str]) -> list[Path]:
    """The directories under ``root/changes/`` that hold only fast-track artefacts (``fast-track.yaml``
    and no feature marker), sorted by name: what :func:`find_features` leaves out, listed apart."""
    changes = Path(root) / "changes"
    if not changes.is_dir():
        return []
    check_inside(changes, root, "changes/")
    return sorted(
        (p for p in changes.iterdir() if p.is_dir() and not is_feature_dir(p) and (p / FAST_TRACK).is_file()),
        key=lambda p: p.name,
    )


def fast_tracks_json(root: Path) -> list[dict[str, str]]:
    """``scars status REPO --json``'s ``fast_tracks`` (the key only when there are some)."""
    return [
        {"name": p.name, "path": p.relative_to(root).as_posix(), "kind": "fast-track", "note": FAST_TRACK_SAID}
        for p in find_fast_tracks(root)
    ]


def repo_root_of(feature_dir: Path) -> Path | None:
    """The repository root of an absolute feature directory (itself when it holds ``changes/``)."""
    return find_repo_root(feature_dir.parent) if not (feature_dir / "changes").is_dir() else find_repo_root(feature_dir)


def cached_feature(
    feature_dir: Path, repo_root: Path | None, also: dict[str, Any] | None = None
) -> tuple[dict[str, Any] | None, Any]:
    """(the cache fingerprint of an absolute feature directory, taken now, or None when the
    cache is off or a stat failed; the Feature cached under it, or None). A reopen with
    unchanged files comes from the cache: keyed by a stat fingerprint of every input, taken
    before reading, never used when one changed. ``also``: a mark of another kind of value
    cached under the fingerprint plus it (``feature.SUMMARY``): that value is given too, from
    the same open of the cache file."""
    if not feature_cache.enabled():
        return None, None
    try:
        fp = feature_cache.fingerprint(feature_dir, repo_root)
    except OSError:
        return None, None
    with gc_paused():
        hit = feature_cache.load(feature_dir, fp, None if also is None else {**fp, **also})
    return fp, hit if also is not None or isinstance(hit, Feature) else None


def feature_dir(path: str | os.PathLike[str]) -> tuple[Path, Path | None]:
    """(the absolute feature directory ``path``, its repository root). Raises PathNotFound when it is not one."""
    p = Path(path).absolute()
    if not p.exists():
        raise PathNotFound.missing(path)
    if not p.is_dir():
        raise PathNotFound(f"{path} is not a directory")
    if not is_feature_dir(p):
        # A repository root is no feature: name its features (the message said "or a repository
        # root holding changes/", which the commands that act on one feature refuse).
        features = [(Path(path) / f.relative_to(p)).as_posix() for f in find_features(p)]
        hint = (
            f"it is a repository root: give one of its features, e.g. {features[-1]}"
            if features
            else "give a feature directory, changes/<date>_<feature>/"
        )
        raise PathNotFound(
            f"{path} is not a samsara feature directory (it holds none of {', '.join(FEATURE_MARKERS)}); {hint}"
        )
    repo_root = repo_root_of(p)
    if repo_root is not None:
        check_inside(p, repo_root, "the feature directory")  # a feature linked out of its repository: never read
    return p, repo_root


def cached_read(path: str | os.PathLike[str]) -> tuple[Path, Path | None, dict[str, Any] | None, Feature | None]:
    """``read_feature``'s look in the cache, without the reader: (the absolute feature directory
    ``path``, its repository root — :func:`feature_dir` —, the cache fingerprint and the Feature
    cached under it — :func:`cached_feature`). A miss (None) is read by
    ``scars.core.samsara.feature.read_missed`` with the three first. Raises PathNotFound."""
    p, repo_root = feature_dir(path)
    fp, hit = cached_feature(p, repo_root)
    return p, repo_root, fp, hit

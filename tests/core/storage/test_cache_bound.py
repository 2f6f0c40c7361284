"""The cache's bound (issue 31): entries unused for MAX_AGE_SECONDS go, then the least recently
used while the whole is over MAX_TOTAL_BYTES; `scars cache clean` applies it on demand."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from scars.core.samsara import feature as reader
from scars.core.storage import cache
from tests.core.storage.test_cache import _feature_dir, _settle

DAY = 86400.0
NOW = 2_000_000_000.0


def _entry(directory: Path, key: int, *, age_days: float, size: int, parts: tuple[str, ...] = ()) -> cache.CacheEntry:
    """A feature's cache file (and parts) last used ``age_days`` before NOW, ``size`` bytes each."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    name = f"feature-{key:032x}"
    files = [f"{name}.pickle", *(f"{name}.{p}.pickle" for p in parts)]
    for f in files:
        (directory / f).write_bytes(b"x" * size)
        os.utime(directory / f, (NOW - age_days * DAY,) * 2)
    return cache.CacheEntry(f"{key:032x}", tuple(sorted(files)), size * len(files), NOW - age_days * DAY)


def test_entries_group_a_feature_and_its_parts_least_recently_used_first(tmp_path):
    d = tmp_path / "c"
    new = _entry(d, 1, age_days=1, size=10, parts=("status-json",))
    old = _entry(d, 2, age_days=5, size=7)
    (d / "notes.txt").write_bytes(b"not the cache's")
    (d / "feature-zz.pickle").write_bytes(b"not a cache name")
    os.symlink(d / "notes.txt", d / f"feature-{3:032x}.pickle")  # a link: never the cache's own
    assert cache.entries(d) == [old, new]


@pytest.mark.parametrize(("age", "gone"), [(30.0, False), (30.0 + 1 / DAY, True), (29.0, False)])
def test_the_age_bound_at_its_boundary(tmp_path, age, gone):
    e = _entry(tmp_path / "c", 1, age_days=age, size=1)
    assert cache.over_bound([e], now=NOW, max_age=30 * DAY) == ([e] if gone else [])


@pytest.mark.parametrize(("limit", "removed"), [(30, 0), (29, 1), (20, 1), (19, 2), (9, 3)])
def test_the_size_bound_removes_the_least_recently_used_first(tmp_path, limit, removed):
    d = tmp_path / "c"
    found = [_entry(d, 3, age_days=3, size=10), _entry(d, 2, age_days=2, size=10), _entry(d, 1, age_days=1, size=10)]
    assert cache.entries(d) == found
    assert cache.over_bound(found, now=NOW, max_bytes=limit) == found[:removed]


def test_clean_removes_what_the_bound_says_and_nothing_else(tmp_path):
    d = tmp_path / "c"
    old = _entry(d, 1, age_days=40, size=5, parts=("status-json",))
    keep = _entry(d, 2, age_days=2, size=5)
    (d / "notes.txt").write_bytes(b"x")
    os.utime(d / "notes.txt", (NOW - 400 * DAY,) * 2)
    dry = cache.clean(directory=d, now=NOW, dry_run=True)
    assert dry.removed == (old,) and dry.kept == (keep,) and dry.removed_bytes == 10
    assert sorted(p.name for p in d.iterdir()) == sorted([*old.files, *keep.files, "notes.txt"])  # nothing gone
    res = cache.clean(directory=d, now=NOW)
    assert res.removed == (old,) and not res.dry_run
    assert sorted(p.name for p in d.iterdir()) == sorted([*keep.files, "notes.txt"])
    assert cache.clean(directory=d, now=NOW, everything=True).removed == (keep,)
    assert [p.name for p in d.iterdir()] == ["notes.txt"]


def test_a_folder_not_this_users_alone_is_left_untouched(tmp_path):
    d = tmp_path / "c"
    e = _entry(d, 1, age_days=90, size=1)
    d.chmod(0o770)  # group-writable: another user could have planted it
    res = cache.clean(directory=d, now=NOW, everything=True)
    assert res.refused and not res.removed
    assert sorted(p.name for p in d.iterdir()) == list(e.files)


def test_a_load_marks_the_entry_used(repo, cache_on):
    _settle(repo)
    fdir = _feature_dir(repo)
    reader.read_feature(fdir)
    path = cache.cache_file(fdir)
    os.utime(path, (time.time() - 60 * DAY,) * 2)
    reader.read_feature(fdir)  # from the cache
    assert time.time() - path.stat().st_mtime < DAY


def test_the_first_write_of_a_process_applies_the_bound(repo, cache_on, monkeypatch):
    monkeypatch.setattr(cache, "_swept", set())
    stale = _entry(cache_on, 7, age_days=0, size=1)
    for f in stale.files:
        os.utime(cache_on / f, (time.time() - 31 * DAY,) * 2)
    fresh = _entry(cache_on, 8, age_days=0, size=1)
    for f in fresh.files:
        os.utime(cache_on / f, (time.time() - 29 * DAY,) * 2)
    _settle(repo)
    reader.read_feature(_feature_dir(repo))  # stores the feature: the first write of this process
    names = {p.name for p in cache_on.iterdir()}
    assert not names & set(stale.files) and set(fresh.files) <= names
    assert cache.cache_file(_feature_dir(repo)).name in names

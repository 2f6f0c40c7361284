"""The app on a feature from the cache (its items loaded when first asked, model.LazyFeature) shows
and records what it shows and records on a feature read from the files."""

from __future__ import annotations

import os
import sys
import time

import pytest

from scars.core import settings
from scars.core.model import LazyFeature
from scars.core.samsara.feature import find_features, read_feature
from scars.core.storage import cache
from scars.tui.app.app import ScarsApp
from tests.factories import ROOT, wait_until
from tests.tui.app.test_app_pilot import SIZE, aio, current_item, item_rows, on_disk, screen_text_lines, start

sys.path.insert(0, str(ROOT / "bench"))


@pytest.fixture
def cached_feature(tmp_path, monkeypatch):
    """A generated feature whose read is in the cache (the cache on in tmp_path)."""
    import generate  # bench/generate.py

    generate.generate("small", tmp_path / "repo", seed=6)
    (path,) = find_features(tmp_path / "repo")
    monkeypatch.setenv("SCARS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SCARS_NO_CACHE", raising=False)
    monkeypatch.setattr(cache, "RACY_NS", 50_000_000)
    settings.load()
    newest = max(max(st.st_mtime_ns, st.st_ctime_ns) for st in map(os.lstat, [path, *path.rglob("*")]))
    while newest >= time.time_ns() - cache.RACY_NS:  # the files settle: a read may be stored
        time.sleep(0.01)
    read_feature(path)
    lazy = read_feature(path)
    assert isinstance(lazy, LazyFeature) and not lazy.loaded
    return path


async def _shown(path) -> tuple[list, list[str], str]:
    app = ScarsApp(path, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        return [r.item_id for r in item_rows(app)], screen_text_lines(app), type(app.feature).__name__


@aio
async def test_the_app_shows_a_cached_feature_as_one_read_from_the_files(cached_feature, monkeypatch):
    warm = await _shown(cached_feature)
    with monkeypatch.context() as m:
        m.setenv("SCARS_NO_CACHE", "1")
        settings.load()
        cold = await _shown(cached_feature)
    settings.load()
    assert (warm[2], cold[2]) == ("LazyFeature", "Feature")
    assert warm[:2] == cold[:2] and len(warm[0]) > 100


@aio
async def test_a_decision_on_a_cached_feature_is_recorded(cached_feature):
    app = ScarsApp(cached_feature, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        first = current_item(app)
        await pilot.press("f")
        await wait_until(pilot, lambda: first in app.decisions, "the fix recorded")
    assert on_disk(cached_feature)[first].action == "fix"

"""A reader that shows the feature before its possible patterns (the app: issue 17, they never
block its first paint) gets it from ``read_feature``'s / ``FeatureSession.open``'s ``meanwhile``:
the feature aggregated but for them, once, when they are many (from PATTERNS_EARLY_FROM counted
items); then the same feature with them."""

from __future__ import annotations

from pathlib import Path

import pytest

from scars.core.records import replace
from scars.core.samsara import aggregate
from scars.core.samsara.feature import read_feature
from scars.core.samsara.session import FeatureSession
from tests.factories import bench_feature


@pytest.fixture(scope="module")
def feature_dir(tmp_path_factory) -> Path:
    return bench_feature(tmp_path_factory.mktemp("early") / "repo")


def test_meanwhile_gets_the_feature_but_its_possible_patterns_before_them(feature_dir, monkeypatch):
    plain = read_feature(feature_dir)
    assert plain.possible_patterns
    counted = sum(it.counted for it in plain.items)
    seen: list = []
    monkeypatch.setattr(aggregate, "PATTERNS_EARLY_FROM", counted + 1)
    read_feature(feature_dir, meanwhile=seen.append)
    assert seen == []  # one counted item short of many: no wait worth showing
    monkeypatch.setattr(aggregate, "PATTERNS_EARLY_FROM", counted)
    full = read_feature(feature_dir, meanwhile=seen.append)
    [early] = seen
    assert early.possible_patterns == () and full.possible_patterns == plain.possible_patterns
    assert replace(early, possible_patterns=full.possible_patterns) == full == plain


def test_a_session_is_usable_meanwhile_and_gets_the_possible_patterns(feature_dir, monkeypatch):
    monkeypatch.setattr(aggregate, "PATTERNS_EARLY_FROM", 1)
    seen: list = []

    def meanwhile(session: FeatureSession) -> None:
        seen.append((session.feature, dict(session.decisions), session.read_only))

    with FeatureSession.open(feature_dir, read_only=True, meanwhile=meanwhile) as s:
        [(early, decisions, read_only)] = seen
        assert not early.possible_patterns and s.feature.possible_patterns and s.feature.items is early.items
        assert decisions == dict(s.decisions) and read_only


def test_an_early_reader_gets_the_feature_before_the_cache_file_is_written(feature_dir, tmp_path, monkeypatch):
    """The app's first paint (``early``) does not wait for the cache file's items to be pickled
    (about 0.3 s at 50,000 items); a reader that is not early gets its meanwhile after them."""
    from scars.core.storage import cache

    monkeypatch.setenv("SCARS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SCARS_NO_CACHE", raising=False)
    monkeypatch.setattr(cache, "RACY_NS", 0)  # the files just written are stored
    monkeypatch.setattr(aggregate, "PATTERNS_EARLY_FROM", 1)
    order: list[str] = []
    real_items = cache.Store.items
    monkeypatch.setattr(cache.Store, "items", lambda store, f: order.append("items") or real_items(store, f))
    read_feature(feature_dir, meanwhile=lambda f: order.append("meanwhile"))
    assert order == ["meanwhile", "items"]
    assert (
        cache.load(feature_dir.absolute(), cache.fingerprint(feature_dir.absolute(), feature_dir.parents[1]))
        is not None
    )

"""A repository's one line per feature (`scars status REPO`) reads each feature as a summary
(model.FeatureSummary): without the possible patterns and the log's matches, which nothing of that
line depends on (issue 17, wide: they were half the CPU of 1,000 small features), and without
handing the whole feature back. A summary is the whole feature's, is cached apart, and is never
taken for the whole feature."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from scars.core.model import FeatureSummary
from scars.core.samsara import aggregate as aggregate_module
from scars.core.samsara import feature as reader
from scars.core.samsara import reports as reports_module
from scars.core.samsara import resolutions as resolutions_module
from scars.core.storage import cache
from tests.factories import DEMO_CHANGES, app_repo, samsara_corpus


@pytest.mark.parametrize("case", samsara_corpus(), ids=lambda p: p.name)
def test_a_summary_is_the_whole_feature_s_read_without_its_possible_patterns_and_log_matches(case, monkeypatch):
    monkeypatch.setenv("SCARS_NO_CACHE", "1")
    whole = reader.read_feature(case)
    with monkeypatch.context() as m:
        for module, name in (
            (aggregate_module, "possible_patterns"),
            (aggregate_module, "match_log"),
            (reports_module, "fingerprint_of"),
            (reports_module, "extra_keys"),
            (resolutions_module, "_claim"),
            (reader, "parse_contract"),
        ):
            m.setattr(module, name, lambda *a, name=name: pytest.fail(f"a summary computed {name}"))
        summary = reader.read_summary(case)
    assert summary == FeatureSummary.of(whole)
    assert summary.rounds == (len(whole.iteration_log.rounds) if whole.iteration_log else 0)


def _settled(feature_dir: Path) -> None:
    """Wait until every input of the feature is older than the racy window (what cache.store
    checks): its files and its repository's (the registry under .samsara/ is an input too, and a
    copied tree's folders are copied in no fixed order: on a loaded machine the registry came last)."""
    tree = feature_dir.parents[1] if feature_dir.parent.name == "changes" else feature_dir

    def newest() -> int:
        return max(max(st.st_mtime_ns, st.st_ctime_ns) for st in map(os.lstat, [tree, *tree.rglob("*")]))

    while newest() >= time.time_ns() - cache.RACY_NS:
        time.sleep(0.01)


def test_a_cached_summary_is_never_the_whole_feature_and_a_cached_whole_one_serves_a_summary(tmp_path, monkeypatch):
    monkeypatch.setenv("SCARS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SCARS_NO_CACHE", raising=False)
    monkeypatch.setattr(cache, "RACY_NS", 50_000_000)
    shutil.copytree(DEMO_CHANGES.parent, tmp_path / "repo")  # with possible patterns and log matches
    fdir = tmp_path / "repo" / "changes" / next(DEMO_CHANGES.iterdir()).name
    _settled(fdir)
    reads = []
    real = reader._read_feature_files
    monkeypatch.setattr(reader, "_read_feature_files", lambda *a, **k: reads.append(k) or real(*a, **k))
    summary = reader.read_summary(fdir)
    opened = []
    real_read = cache._read
    monkeypatch.setattr(cache, "_read", lambda *a, **k: opened.append(a[0]) or real_read(*a, **k))
    assert reader.read_summary(fdir) == summary  # the summary from the cache
    assert len(opened) == 1  # the cache file opened once: the whole feature or the summary, either
    assert [k.get("summary", False) for k in reads] == [True]
    whole = reader.read_feature(fdir)  # not the summary: read whole (and stored over it)
    assert [k.get("summary", False) for k in reads] == [True, False]
    assert whole.possible_patterns and whole.log_matches and summary == FeatureSummary.of(whole)
    assert reader.read_feature(fdir) == whole
    assert reader.read_summary(fdir) == summary  # the whole feature serves a summary
    assert [k.get("summary", False) for k in reads] == [True, False]


def test_many_summaries_read_in_parallel_equal_the_serial_ones(tmp_path, monkeypatch):
    monkeypatch.setenv("SCARS_NO_CACHE", "1")
    paths = [app_repo(tmp_path / f"repo{n}") for n in range(3)]
    serial = reader.read_summaries(paths, workers=1)
    assert reader.read_summaries(paths, workers=2) == serial
    assert serial == [FeatureSummary.of(f) for f in reader.read_features(paths, workers=1)]

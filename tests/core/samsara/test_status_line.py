"""`scars status --json` to a pipe is one line written with each item's JSON encoded once and kept
with the cached feature (issue 17: the warm reopen). The line is the bytes json.dumps writes for
feature_to_json, cold and warm, with decisions, moved decisions, extra keys and resolved items;
the kept items are used only with the very feature they were encoded from, by the same code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from scars.core.records import fields
from scars.core.samsara import status
from scars.core.samsara.feature import read_feature
from scars.core.samsara.session import FeatureSession
from scars.core.samsara.status import feature_json_line, feature_to_json
from scars.core.storage import cache
from tests.factories import ROOT, report, write_feature
from tests.status_golden import GOLDEN, ROOT_TOKEN, feature_path, root_of

sys.path.insert(0, str(ROOT / "bench"))


@pytest.fixture
def cache_on(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("SCARS_CACHE_DIR", str(d))
    monkeypatch.delenv("SCARS_NO_CACHE", raising=False)
    monkeypatch.setattr(cache, "RACY_NS", 50_000_000)
    return d


def _settle(root) -> None:
    """Wait until every file is older than the racy window (what cache.store checks)."""

    def newest_ns() -> int:
        return max(max(st.st_mtime_ns, st.st_ctime_ns) for st in map(os.lstat, [root, *root.rglob("*")]))

    while newest_ns() >= time.time_ns() - cache.RACY_NS:
        time.sleep(0.01)


def _spy_parts(monkeypatch) -> list:
    """What load_part answered for the status items, call by call."""
    seen: list = []
    real = cache.load_part

    def spy(*a):
        got = real(*a)
        seen.append(got is not None)
        return got

    monkeypatch.setattr(cache, "load_part", spy)
    return seen


def _decided(tmp_path):
    items = [
        '"Retry count is hard-coded"',
        'what: "Shared key"\nbites_when: "two tenants"\nwhere: "a.py:1"\nseverity: high',
    ]
    feat = write_feature(
        tmp_path,
        {
            "task-1-scar.yaml": report("task-1", sf=items, ks=['"ユニコード — text"', '"Resolved one"']),
            "task-2-scar.yaml": report("task-2", ks=['"Second report"'], am=['assumption: "x"\nverified: false']),
        },
    )
    with FeatureSession.open(feat) as s:
        s.decide(s.feature.items[0].id, "fix")
        s.decide(s.feature.items[1].id, "defer", reason="next quarter")
    return feat


def test_the_line_is_what_json_dumps_writes_cold_and_warm(tmp_path, cache_on, monkeypatch):
    feat = _decided(tmp_path)
    _settle(tmp_path)
    seen = _spy_parts(monkeypatch)
    cold = read_feature(feat)
    want = json.dumps(feature_to_json(cold), ensure_ascii=True)
    assert feature_json_line(cold) == want
    warm = read_feature(feat)
    assert warm is not cold and feature_json_line(warm) == want
    assert seen == [False, True]  # encoded on the cold read, kept items used on the warm one
    assert any(it["decision"] for it in json.loads(want)["items"])
    assert any(it.get("extra") for it in json.loads(want)["items"])


def test_the_line_follows_a_changed_report_and_new_decisions(tmp_path, cache_on, monkeypatch):
    feat = _decided(tmp_path)
    _settle(tmp_path)
    feature_json_line(read_feature(feat))
    (feat / "scar-reports" / "task-2-scar.yaml").write_text(report("task-2", ks=['"Changed"']), encoding="utf-8")
    _settle(tmp_path)
    seen = _spy_parts(monkeypatch)
    f = read_feature(feat)
    assert feature_json_line(f) == json.dumps(feature_to_json(f), ensure_ascii=True)
    assert "Changed" in feature_json_line(f) and seen[0] is False  # read again: items encoded again
    with FeatureSession.open(feat) as s:
        s.decide(s.feature.items[-1].id, "fix")
    f = read_feature(feat)
    line = feature_json_line(f)
    assert line == json.dumps(feature_to_json(f), ensure_ascii=True) and seen[-1] is True
    assert json.loads(line)["items"][-1]["decision"]["action"] == "fix"  # decisions are never kept


def test_kept_items_are_used_only_with_their_feature_and_code(tmp_path, cache_on, monkeypatch):
    feat = _decided(tmp_path)
    _settle(tmp_path)
    f = read_feature(feat)
    feature_json_line(f)
    twin = read_feature(feat)
    equal_copy = type(twin)(**{name: getattr(twin, name) for name in fields(twin)})
    assert equal_copy == twin
    where = type(feat)(f.path)
    assert cache.load_part(where, status._ITEMS_PART, twin, status._ITEMS_CODE) is not None
    assert cache.load_part(where, status._ITEMS_PART, equal_copy, status._ITEMS_CODE) is None  # not the one loaded
    assert not cache.store_part(where, status._ITEMS_PART, equal_copy, status._ITEMS_CODE, ["x"])
    assert cache.load_part(where, status._ITEMS_PART, twin, ("model.py",)) is None  # other code
    real = cache._code_stamp
    monkeypatch.setattr(cache, "_code_stamp", lambda modules=cache._CODE_MODULES: (*real(modules), "edited"))
    assert cache.load_part(where, status._ITEMS_PART, twin, status._ITEMS_CODE) is None  # the code changed


def test_the_line_without_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SCARS_NO_CACHE", "1")
    feat = _decided(tmp_path)
    f = read_feature(feat)
    assert feature_json_line(f) == json.dumps(feature_to_json(f), ensure_ascii=True)


@pytest.mark.parametrize(
    ("kind", "sub", "case"),
    [("demo", "", "demo-root"), ("real_shaped", "changes/2026-08-04_search-index", "real-shaped-search-index")],
)
def test_a_warm_reopen_prints_the_stored_output(kind, sub, case, tmp_path):
    """The command twice with the cache on (the second from the cache): the golden output both times."""
    expected = (GOLDEN / f"{case}.json").read_text(encoding="utf-8")
    env = {**os.environ, "NO_COLOR": "1", "SCARS_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "80"}
    env.pop("SCARS_NO_CACHE", None)
    with root_of(kind) as root:
        path = feature_path(kind, root, sub)
        runs = []
        for _ in range(2):
            proc = subprocess.run(
                [sys.executable, "-m", "scars.tui.cli.main", "status", "--json", str(path)],
                capture_output=True, text=True, encoding="utf-8", stdin=subprocess.DEVNULL, env=env, timeout=120,
            )  # fmt: skip
            assert proc.returncode in (0, 3), proc.stderr
            runs.append(proc.stdout.replace(str(root), ROOT_TOKEN))
    assert runs == [expected, expected]
    assert any(p.name.endswith(".status-items.pickle") for p in (tmp_path / "cache").iterdir())


def test_a_kept_token_does_not_keep_its_feature_alive(tmp_path, cache_on):
    import gc
    import weakref

    feat = _decided(tmp_path)
    _settle(tmp_path)
    f = read_feature(feat)
    assert cache._token_of(f) is not None
    gone, key = weakref.ref(f), id(f)
    del f
    gc.collect()
    assert gone() is None and key not in cache._TOKENS
    assert all(ref() is not None for ref, _token in cache._TOKENS.values())

"""A feature from the cache loads its items, resolved items and reports when first asked (issue 17,
warm reopen): a warm ``scars status --json`` prints the items' JSON kept beside the feature and
never builds the item objects; everything that reads items gets what an eager read gives; a cache
file cut short or with other bytes than written is a miss, never a crash or wrong data."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import pytest

from scars.core import settings
from scars.core.model import Feature, LazyFeature
from scars.core.records import replace
from scars.core.samsara import feature as reader
from scars.core.samsara.layout import repo_root_of
from scars.core.samsara.status import feature_json_line, feature_to_json
from scars.core.storage import cache
from tests.core.storage.test_cache import _feature_dir, _no_reading, _settle
from tests.factories import run_cli


def _stored_and_lazy(fdir: Path) -> tuple[Feature, LazyFeature]:
    eager = reader.read_feature(fdir)
    assert cache.cache_file(fdir.absolute()).is_file()
    lazy = reader.read_feature(fdir)
    assert isinstance(lazy, LazyFeature) and not lazy.loaded
    return eager, lazy


def test_a_feature_from_the_cache_loads_its_items_when_first_asked(repo, cache_on, monkeypatch):
    fdir = _feature_dir(repo)
    _settle(repo)
    eager, lazy = _stored_and_lazy(fdir)
    assert lazy.sizes() == eager.sizes() == (len(eager.items), len(eager.resolved))
    assert (lazy.signal_lost, lazy.groups, lazy.possible_patterns) == (
        eager.signal_lost,
        eager.groups,
        eager.possible_patterns,
    )
    assert not lazy.loaded
    reports = lazy.reports  # one part asked: all three loaded, the very objects the reports hold
    assert lazy.loaded and reports == eager.reports
    assert {id(it) for r in reports for it in r.items} == {id(it) for it in (*lazy.items, *lazy.resolved)}
    assert lazy == eager and eager == lazy and lazy.item(eager.items[3].id) == eager.items[3]


def test_a_warm_status_json_builds_no_item(repo, cache_on, monkeypatch):
    fdir = _feature_dir(repo)
    _settle(repo)
    eager, lazy = _stored_and_lazy(fdir)
    want = feature_json_line(eager)  # stores the items' JSON beside the feature
    again = reader.read_feature(fdir)
    assert feature_json_line(again) == want
    assert not again.loaded  # no journal, no decision: the items' JSON as kept
    import json

    assert json.loads(want) == feature_to_json(eager)


def test_a_warm_status_json_with_decisions_is_the_eager_one(repo, cache_on, capsys):
    fdir = _feature_dir(repo)
    _settle(repo)
    eager, lazy = _stored_and_lazy(fdir)
    ids = [it.id for it in eager.items[:3]]
    assert run_cli(["decide", "--feature", str(fdir), *ids, "--fix"], capsys)[0] == 0
    code, warm, _ = run_cli(["status", "--json", str(fdir)], capsys)
    assert code == 0
    settings.current()  # the next command reads the environment again
    with pytest.MonkeyPatch.context() as m:
        m.setenv("SCARS_NO_CACHE", "1")
        code, cold, _ = run_cli(["status", "--json", str(fdir)], capsys)
    assert code == 0 and warm == cold and '"action": "fix"' in warm


@pytest.mark.parametrize(
    "argv",
    [
        ["status"],
        ["status", "--json"],
        ["export", "--format", "sarif"],
        ["export", "--format", "openvex"],
        ["export", "--format", "json"],
        ["advise"],
        ["budget-context"],
        ["log", "verify"],
        ["gate", "entry", "--json"],
        ["gate", "triage", "--json"],
        ["gate", "round-continue", "--json"],
        ["watch"],
    ],
    ids=" ".join,
)
def test_every_command_reading_items_prints_what_an_eager_read_prints(argv, repo, cache_on, capsys, monkeypatch):
    fdir = _feature_dir(repo)
    _settle(repo)
    _stored_and_lazy(fdir)
    code, warm, warm_err = run_cli([*argv, str(fdir)], capsys)
    with monkeypatch.context() as m:
        m.setenv("SCARS_NO_CACHE", "1")
        code2, cold, cold_err = run_cli([*argv, str(fdir)], capsys)
    assert (code, _timeless(warm), warm_err) == (code2, _timeless(cold), cold_err)
    assert warm or warm_err


def _timeless(text: str) -> str:
    """The output without the time it was made (an OpenVEX document's timestamp)."""
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z", "<now>", text)


def test_a_lazy_feature_pickles_and_replaces_as_a_feature(repo, cache_on):
    from scars.core.records import replace

    fdir = _feature_dir(repo)
    _settle(repo)
    eager, lazy = _stored_and_lazy(fdir)
    back = pickle.loads(pickle.dumps(lazy))  # a forked reader hands its features back pickled
    assert type(back) is Feature and back == eager
    other = replace(reader.read_feature(fdir), signal_lost=-1)
    assert other.signal_lost == -1 and other.items == eager.items and other.sizes() == eager.sizes()


def _spoilt(path: Path, how: str, text: str) -> None:
    data = bytearray(path.read_bytes())
    if how == "cut in the items":
        del data[len(data) // 3 :]
    elif how == "cut at the end":
        del data[-5:]
    elif how == "grown":
        data += b"\0"
    else:  # one byte of an item's text changed: it still unpickles, as another text
        data[data.index(text.encode())] ^= 0x20
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["cut in the items", "cut at the end", "grown", "a byte changed"])
def test_a_spoilt_cache_file_is_a_miss_never_wrong_items(how, repo, cache_on, monkeypatch):
    fdir = _feature_dir(repo)
    _settle(repo)
    good = reader.read_feature(fdir)
    path = cache.cache_file(fdir.absolute())
    _spoilt(path, how, good.items[-1].text[:24])
    fp = cache.fingerprint(fdir.absolute(), repo_root_of(fdir.absolute()))  # the fingerprint it was stored under
    assert cache.load(fdir.absolute(), fp) is None
    again = reader.read_feature(fdir)  # read from the files again, and stored again
    assert again == good and not isinstance(again, LazyFeature)
    _no_reading(monkeypatch)
    assert reader.read_feature(fdir) == good


def test_the_deferred_parts_are_pickled_one_by_one(repo, cache_on):
    """Items, resolved items and reports: one pickle each after the items' chunks (a memo each,
    freed before the next: the three memos at once were the peak of a cold read's store)."""
    import io

    fdir = _feature_dir(repo)
    eager = reader.read_feature(fdir)
    buf = io.BytesIO()
    cache._dump_feature(buf, eager)
    buf.seek(0)
    count = pickle.load(buf)
    items: list = []
    while len(items) < count:
        items.extend(pickle.load(buf))
    by_id = {it.id: it for it in items}
    parts = []
    for _ in range(3):
        unpickler = pickle.Unpickler(buf)
        unpickler.persistent_load = by_id.__getitem__
        parts.append(unpickler.load())
    assert parts == [eager.items, eager.resolved, eager.reports]
    assert pickle.load(buf) == (eager.sizes(), replace(eager, items=(), resolved=(), reports=()))

"""The feature cache is never wrong when a file changes; parallel and serial reads agree."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import pickle
import sys
import time
from pathlib import Path

import pytest

from scars.core import settings
from scars.core.errors import PathNotFound
from scars.core.samsara import feature as reader
from scars.core.storage import cache, parallel
from tests.factories import ROOT


def _generator():
    spec = importlib.util.spec_from_file_location("bench_generate_for_cache", ROOT / "bench" / "generate.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


gen = _generator()


def _settle(repo: tuple[Path, dict]) -> None:
    """Wait until every file of the repository is older than the racy window (``cache.RACY_NS``),
    so that a read may be stored: a wait on the files' own stamps (what ``cache.store`` checks),
    not a fixed time and not a timing assertion."""
    out, _ = repo

    def newest_ns() -> int:
        return max(max(st.st_mtime_ns, st.st_ctime_ns) for st in map(os.lstat, [out, *out.rglob("*")]))

    while newest_ns() >= time.time_ns() - cache.RACY_NS:
        time.sleep(0.01)


def _feature_dir(repo: tuple[Path, dict]) -> Path:
    out, manifest = repo
    return out / manifest["features"][0]["path"]


def _no_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*a, **k):
        raise AssertionError("read the files although the cache should have answered")

    monkeypatch.setattr(reader, "_read_feature_files", refuse)


def test_unchanged_files_come_from_the_cache(repo, cache_on, monkeypatch):
    fdir = _feature_dir(repo)
    _settle(repo)
    first = reader.read_feature(fdir)
    assert cache.cache_file(fdir.absolute()).is_file()
    _no_reading(monkeypatch)
    again = reader.read_feature(fdir)
    assert again == first
    assert again.signal_lost == repo[1]["features"][0]["signal_lost"]


def _flip_one_assumption(fdir: Path) -> Path:
    """Turn one `verified: false` into `verified: true ` (same size), mtime put back."""
    for p in sorted((fdir / "scar-reports").glob("*.yaml")):
        data = p.read_bytes()
        if b"verified: false  # could matter" in data:
            st = os.stat(p)
            new = data.replace(b"verified: false", b"verified: true ", 1)
            assert len(new) == len(data)
            with open(p, "r+b") as fh:  # in place: same inode
                fh.write(new)
            os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
            after = os.stat(p)
            assert (after.st_size, after.st_mtime_ns, after.st_ino) == (st.st_size, st.st_mtime_ns, st.st_ino)
            return p
    raise AssertionError("no unverified assumption to flip")


def test_a_change_with_size_and_mtime_forced_back_is_detected(repo, cache_on):
    fdir = _feature_dir(repo)
    _settle(repo)
    before = reader.read_feature(fdir)
    _flip_one_assumption(fdir)
    after = reader.read_feature(fdir)
    assert after.signal_lost == before.signal_lost - 1
    assert after.counts["unverified_assumptions"] == before.counts["unverified_assumptions"] - 1


def test_an_added_or_removed_report_is_detected(repo, cache_on):
    fdir = _feature_dir(repo)
    _settle(repo)
    before = reader.read_feature(fdir)
    extra = fdir / "scar-reports" / "task-999-scar.yaml"
    extra.write_text(
        'task_id: task-999\ncompletion_status: done\nknown_shortcuts:\n  - "one more"\n'
        "silent_failure_conditions: []\nassumptions_made: []\n",
        encoding="utf-8",
    )
    assert reader.read_feature(fdir).signal_lost == before.signal_lost + 1
    extra.unlink()
    assert reader.read_feature(fdir).signal_lost == before.signal_lost


def test_a_registry_change_is_detected(repo, cache_on):
    out, _ = repo
    fdir = _feature_dir(repo)
    _settle(repo)
    before = reader.read_feature(fdir)
    assert before.registry.state == "present" and not before.dangling_refs[1:]
    (out / ".samsara" / "systemic-scars.yaml").write_text("entries: []\n", encoding="utf-8")
    after = reader.read_feature(fdir)
    assert after.registry.entries == {}
    assert len(after.dangling_refs) > len(before.dangling_refs)


def test_files_changed_just_now_are_not_cached(repo, tmp_path, monkeypatch):
    """Within the racy window a stamp cannot tell two writes apart: nothing is stored."""
    d = tmp_path / "cache"
    monkeypatch.setenv("SCARS_CACHE_DIR", str(d))
    monkeypatch.delenv("SCARS_NO_CACHE", raising=False)
    monkeypatch.setattr(cache, "RACY_NS", 3600 * 10**9)
    fdir = _feature_dir(repo)
    reader.read_feature(fdir)
    assert not cache.cache_file(fdir.absolute()).exists()


@pytest.mark.parametrize("garbage", [b"", b"not a pickle at all", b"\x80\x05\x95\xff\xff"])
def test_a_corrupt_cache_file_is_ignored_and_replaced(repo, cache_on, garbage):
    fdir = _feature_dir(repo)
    _settle(repo)
    good = reader.read_feature(fdir)
    path = cache.cache_file(fdir.absolute())
    path.write_bytes(garbage)
    assert reader.read_feature(fdir) == good
    assert path.stat().st_size > 1000  # the next store replaced it


def test_a_cache_file_of_an_earlier_format_is_ignored_and_replaced(repo, cache_on, monkeypatch):
    """A file an earlier scars stored (FORMAT: its objects may pickle another way) is never
    unpickled past its header: the feature is read again and stored anew."""
    fdir = _feature_dir(repo)
    _settle(repo)
    good = reader.read_feature(fdir)
    path = cache.cache_file(fdir.absolute())
    with path.open("rb") as fh:
        header = pickle.load(fh)
        rest = fh.read()
    path.write_bytes(pickle.dumps({**header, "format": cache.FORMAT - 1}) + rest)
    fp = cache.fingerprint(fdir.absolute(), Path(good.repo_root) if good.repo_root else None)
    with monkeypatch.context() as m:
        m.setattr(cache, "_load_feature", lambda fh: pytest.fail("unpickled a file of another format"))
        assert cache.load(fdir.absolute(), fp) is None
    assert reader.read_feature(fdir) == good
    with path.open("rb") as fh:
        assert pickle.load(fh)["format"] == cache.FORMAT  # the next store replaced it


def test_a_cache_of_another_feature_is_never_used(repo, cache_on):
    """A cache file copied over another feature's: the fingerprint names the feature."""
    out, _ = repo
    fdir = _feature_dir(repo)
    _settle(repo)
    reader.read_feature(fdir)
    other = out / "changes" / "2026-03-02_other"
    (other / "scar-reports").mkdir(parents=True)
    (other / "scar-reports" / "task-1-scar.yaml").write_text(
        'task_id: task-1\ncompletion_status: done\nknown_shortcuts: ["x"]\n'
        "silent_failure_conditions: []\nassumptions_made: []\n",
        encoding="utf-8",
    )
    cache.cache_file(other.absolute()).write_bytes(cache.cache_file(fdir.absolute()).read_bytes())
    assert reader.read_feature(other).signal_lost == 1


def test_no_cache_writes_nothing(repo, tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("SCARS_CACHE_DIR", str(d))
    monkeypatch.setenv("SCARS_NO_CACHE", "1")
    fdir = _feature_dir(repo)
    reader.read_feature(fdir)
    assert not d.exists()


def test_an_unwritable_cache_dir_changes_nothing(repo, tmp_path, monkeypatch):
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    monkeypatch.setenv("SCARS_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.delenv("SCARS_NO_CACHE", raising=False)
    monkeypatch.setattr(cache, "RACY_NS", 0)
    fdir = _feature_dir(repo)
    assert reader.read_feature(fdir).signal_lost == repo[1]["features"][0]["signal_lost"]


# --- parallel reading ----------------------------------------------------------------------


def test_parallel_and_serial_reads_give_identical_features(repo, monkeypatch):
    fdir = _feature_dir(repo)
    monkeypatch.setenv("SCARS_WORKERS", "1")
    serial = reader.read_feature(fdir)
    monkeypatch.setenv("SCARS_WORKERS", "2")
    settings.load()  # as a new command would: the environment is read once per command
    calls = []
    real = parallel._pool_read
    monkeypatch.setattr(parallel, "_pool_read", lambda *a: calls.append(a[2]) or real(*a))
    par = reader.read_feature(fdir)
    assert calls == [2]  # the pool really ran
    assert par == serial
    assert [r.file for r in par.reports] == [r.file for r in serial.reports]
    assert [it.id for it in par.items] == [it.id for it in serial.items]
    assert par.warnings == serial.warnings and par.parse_failures == serial.parse_failures


def test_a_failing_pool_falls_back_to_the_serial_read(repo, monkeypatch):
    fdir = _feature_dir(repo)
    monkeypatch.setenv("SCARS_WORKERS", "1")
    serial = reader.read_feature(fdir)

    def broken(*a):
        from concurrent.futures.process import BrokenProcessPool

        raise BrokenProcessPool("a worker died")

    monkeypatch.setenv("SCARS_WORKERS", "2")
    monkeypatch.setattr(parallel, "_pool_read", broken)
    assert reader.read_feature(fdir) == serial


def test_worker_count_follows_the_threshold(monkeypatch):
    monkeypatch.delenv("SCARS_WORKERS", raising=False)
    assert parallel.workers_for(parallel.PARALLEL_THRESHOLD - 1) == 1
    monkeypatch.setattr(parallel, "usable_cpus", lambda: 2)
    assert parallel.workers_for(parallel.PARALLEL_THRESHOLD) == 2
    monkeypatch.setattr(parallel, "usable_cpus", lambda: 64)
    assert parallel.workers_for(10**6) == parallel.MAX_WORKERS


def test_a_registry_change_is_seen_with_the_cache_off(repo, monkeypatch):
    """The per-process registry memo follows the file's stamp too."""
    monkeypatch.setattr(cache, "RACY_NS", 50_000_000)
    out, _ = repo
    fdir = _feature_dir(repo)
    _settle(repo)
    before = reader.read_feature(fdir)
    (out / ".samsara" / "systemic-scars.yaml").write_text("entries: []\n", encoding="utf-8")
    assert len(reader.read_feature(fdir).dangling_refs) > len(before.dangling_refs)


def test_many_features_read_in_parallel_equal_the_serial_read(tmp_path, monkeypatch):
    out = tmp_path / "wide"
    gen.generate("small", out, seed=5)
    base = out / "changes"
    first = next(base.iterdir())
    for k in range(3):  # four features (copies under other names)
        import shutil

        shutil.copytree(first, base / f"2026-04-0{k + 1}_copy-{k}")
    paths = sorted(base.iterdir())
    serial = reader.read_features(paths, workers=1)
    par = reader.read_features(paths, workers=2)
    assert par == serial and [f.name for f in par] == [p.name for p in paths]
    with pytest.raises(PathNotFound):
        reader.read_features([*paths, tmp_path / "missing"], workers=2)


def test_the_code_stamp_covers_every_module_the_reader_runs():
    """An edited module must not see results the old code computed: every scars.core module
    read_feature imports is stamped (matching.py and values.py were not)."""
    import subprocess
    import sys

    code = (
        "import sys, scars.core.samsara.feature\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('scars.core.'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    packages_and_plumbing = {"settings", "errors", "clock", "lazy", "storage.durable", "formats", "samsara", "storage"}
    modules = {m.removeprefix("scars.core.") for m in out} - packages_and_plumbing
    assert {m.replace(".", "/") + ".py" for m in modules} <= set(cache._CODE_MODULES)


# --- cold `scars status`: the output first, then the cache; the fingerprint taken once ------------


def _status(fdir: Path, *flags: str) -> int:
    import argparse

    from scars.tui.cli.commands import status

    return status.run(argparse.Namespace(path=str(fdir), json="--json" in flags, strict=False))


def test_a_cold_status_prints_before_it_writes_the_cache_and_writes_the_same(repo, cache_on, monkeypatch, capsys):
    fdir = _feature_dir(repo)
    _settle(repo)
    printed_at_write: list[str] = []
    write = cache._write

    def watched(path, header, value, *how):
        printed_at_write.append(capsys.readouterr().out)
        return write(path, header, value, *how)

    monkeypatch.setattr(cache, "_write", watched)
    assert _status(fdir, "--json") == 0
    line = printed_at_write[0] + capsys.readouterr().out
    assert line.endswith("\n") and json.loads(line)["signal_lost"] == repo[1]["features"][0]["signal_lost"]
    # the whole line was out before the first cache file was written; the feature and its part both written
    assert printed_at_write[0] == line and len(printed_at_write) == 2
    assert cache.cache_file(fdir.absolute()).is_file()
    _no_reading(monkeypatch)
    assert _status(fdir, "--json") == 0
    assert capsys.readouterr().out == line


def test_a_missed_feature_is_fingerprinted_once(repo, cache_on, monkeypatch, capsys):
    fdir = _feature_dir(repo)
    taken = []
    fingerprint = cache.fingerprint
    monkeypatch.setattr(cache, "fingerprint", lambda *a: taken.append(a) or fingerprint(*a))
    assert _status(fdir, "--json") == 0
    assert len(taken) == 1


def _stored_inside(fdir: Path, after) -> bool:
    """Store a read of ``fdir`` inside ``written_after``; whether its file exists before the block ends."""
    feature = reader.read_feature(fdir)
    path = cache.cache_file(fdir.absolute())
    path.unlink(missing_ok=True)
    with cache.written_after():
        assert cache.store(fdir.absolute(), cache.fingerprint(fdir.absolute(), None), feature)
        after()
        return path.is_file()


def test_stores_inside_written_after_are_written_when_it_ends(repo, cache_on):
    fdir = _feature_dir(repo)
    _settle(repo)
    assert not _stored_inside(fdir, lambda: None)
    assert cache.cache_file(fdir.absolute()).is_file()
    with cache.written_after():  # nested: the outer block writes
        assert not _stored_inside(fdir, lambda: None)
        assert not cache.cache_file(fdir.absolute()).is_file()
    assert cache.cache_file(fdir.absolute()).is_file()


def test_written_after_writes_after_an_error_not_after_an_interrupt(repo, cache_on):
    fdir = _feature_dir(repo)
    _settle(repo)
    for exc, written in ((BrokenPipeError, True), (KeyboardInterrupt, False)):

        def fail(exc=exc):
            raise exc

        with pytest.raises(exc):
            _stored_inside(fdir, fail)
        assert cache.cache_file(fdir.absolute()).is_file() is written


def test_a_store_begun_early_is_completed_or_abandoned_with_its_block(repo, cache_on):
    """A store whose items were written before the feature was complete (cache.Store.items, while
    the possible patterns are computed) is put in place when the written_after block ends, also
    after an error, and leaves no temporary file when the block is interrupted."""
    fdir = _feature_dir(repo).absolute()
    _settle(repo)
    feature = reader.read_feature(fdir)
    path = cache.cache_file(fdir)
    for exc, written in ((None, True), (BrokenPipeError, True), (KeyboardInterrupt, False)):
        path.unlink(missing_ok=True)
        with pytest.raises(exc) if exc else contextlib.nullcontext(), cache.written_after():
            pending = cache.begin_store(fdir, cache.fingerprint(fdir, None))
            pending.items(feature)
            assert [p.name.startswith(".tmp-") for p in path.parent.iterdir() if p != path] == [True]
            assert pending.finish(feature) and not path.exists()
            if exc:
                raise exc
        assert path.is_file() is written
        assert [p for p in path.parent.iterdir() if p.name.startswith(".tmp-")] == []
        if written:
            assert cache.load(fdir, cache.fingerprint(fdir, None)) == feature


def test_a_store_begun_with_other_items_writes_the_feature_whole(repo, cache_on):
    from scars.core.records import replace

    fdir = _feature_dir(repo).absolute()
    _settle(repo)
    feature = reader.read_feature(fdir)
    pending = cache.begin_store(fdir, cache.fingerprint(fdir, None))
    pending.items(replace(feature, items=feature.items[:1]))
    assert pending.finish(feature)
    assert cache.load(fdir, cache.fingerprint(fdir, None)) == feature
    assert [p.name for p in cache.cache_file(fdir).parent.iterdir() if p.name.startswith(".tmp-")] == []


def test_a_process_forked_inside_written_after_writes_at_once(repo, cache_on, monkeypatch):
    fdir = _feature_dir(repo)
    _settle(repo)
    pid = os.getpid()

    def fork():
        monkeypatch.setattr(cache.os, "getpid", lambda: pid + 1)  # what a forked child sees

    assert _stored_inside(fdir, lambda: None) is False
    feature = reader.read_feature(fdir)
    cache.cache_file(fdir.absolute()).unlink()
    with cache.written_after():
        fork()
        assert cache.store(fdir.absolute(), cache.fingerprint(fdir.absolute(), None), feature)
        assert cache.cache_file(fdir.absolute()).is_file()


def test_a_stored_feature_keeps_its_items_once_and_apart(repo, cache_on, monkeypatch):
    """The items are pickled in chunks of ITEMS_CHUNK before the feature (the memo of one pickle of
    everything was the peak of a cold read) and come back as the very objects the reports hold."""
    fdir = _feature_dir(repo)
    _settle(repo)
    monkeypatch.setattr(cache, "ITEMS_CHUNK", 7)
    first = reader.read_feature(fdir)
    _no_reading(monkeypatch)
    again = reader.read_feature(fdir)
    assert again == first and again is not first
    in_reports = {id(it) for r in again.reports for it in r.items}
    assert {id(it) for it in (*again.items, *again.resolved)} == in_reports
    assert len(in_reports) == len(first.items) + len(first.resolved) > 2 * 7
    import io
    import pickle

    buf = io.BytesIO()
    cache._dump_feature(buf, first)
    buf.seek(0)
    count = pickle.load(buf)
    chunks = [pickle.load(buf) for _ in range(-(-count // 7))]
    assert count == len(in_reports) and all(0 < len(c) <= 7 for c in chunks)
    with pytest.raises(pickle.UnpicklingError, match="persistent"):  # the feature names its items only
        pickle.load(buf)


def test_items_that_share_an_id_are_pickled_with_the_feature(repo, cache_on, monkeypatch):
    from scars.core.records import replace

    fdir = _feature_dir(repo)
    feature = reader.read_feature(fdir)
    twin = replace(feature, items=(*feature.items, replace(feature.items[0], text="another text")))
    assert cache._items_of(feature) and cache._items_of(twin) == ()
    import io

    buf = io.BytesIO()
    cache._dump_feature(buf, twin)
    buf.seek(0)
    assert cache._load_feature(buf) == twin


def _killed_atomic_write(monkeypatch: pytest.MonkeyPatch, path: Path) -> Path:
    """``atomic_write(path)`` killed between its temporary file and the rename: the leftover."""
    from scars.core.storage import durable

    before = set(path.parent.iterdir())

    class Killed:  # durable's os, killed at the rename: no clean-up runs after a SIGKILL
        def __getattr__(self, name):
            return getattr(os, name)

        def replace(self, *_a, **_k):
            raise KeyboardInterrupt

        def unlink(self, *_a, **_k):
            pass

    with monkeypatch.context() as m:
        m.setattr(durable, "os", Killed())
        with pytest.raises(KeyboardInterrupt):
            durable.atomic_write(path, b"half written\n")
    [left] = set(path.parent.iterdir()) - before
    return left


def test_a_killed_atomic_write_s_leftover_is_no_change(tmp_path, monkeypatch):
    """A kill inside atomic_write in a feature folder left `.<name>.<random>.tmp`, which the
    fingerprint (the cache's and the app's live refresh, `app.disk_stamp`) counted as a change;
    one rule (`durable.is_temp_name`) says what our own temporaries are, and the clean-up and
    the fingerprint both follow it."""
    from scars.core.storage.durable import clean_stale_temps, is_temp_name
    from tests.factories import samsara_feature

    f = samsara_feature(tmp_path)
    before = cache.fingerprint(f, None)
    # The files scars rewrites in a feature folder (it never writes in scar-reports/, whose
    # directory stamp is an input of its own).
    for target in (f / "iteration-log.yaml", f / "index.yaml"):
        left = _killed_atomic_write(monkeypatch, target)
        assert is_temp_name(left.name) and left.name.startswith(f".{target.name}.")
        assert cache.fingerprint(f, None) == before
        assert clean_stale_temps(target, older_than=0) == [str(left)]
    # A file of the loop's own that merely looks temporary is an input: a change.
    for name in ("notes.tmp", ".notes.tmp", ".notes.a-b.tmp", "scar-reports/task-9.yaml.tmp"):
        (f / name).write_text("x", encoding="utf-8")
        assert not is_temp_name(Path(name).name)
        assert cache.fingerprint(f, None) != before
        (f / name).unlink()


@pytest.mark.parametrize("flags", [(), ("--json",)])
def test_a_cold_status_keeps_the_cyclic_collector_off_to_its_end(repo, cache_on, monkeypatch, capsys, flags):
    """The cyclic GC is off for the whole command, its output and cache writes included, not only
    for the read: switched on after the read, its first collection scanned every object the read
    made (and another one ran in the cache writes); it is on again when the command returns."""
    import gc

    from scars.tui.cli.commands import status

    fdir = _feature_dir(repo)
    _settle(repo)
    collector_on: list[tuple[str, bool]] = []
    run, write = status._run, cache._write

    def watched_run(*a):
        code = run(*a)
        collector_on.append(("output", gc.isenabled()))
        return code

    def watched_write(*a):
        collector_on.append(("cache", gc.isenabled()))
        return write(*a)

    monkeypatch.setattr(status, "_run", watched_run)
    monkeypatch.setattr(cache, "_write", watched_write)
    assert _status(fdir, *flags) == 0
    writes = [("cache", False)] * (2 if flags else 1)  # the feature (and the items' JSON for --json)
    assert collector_on == [("output", False), *writes] and gc.isenabled()


def test_a_cache_write_sweeps_the_temporary_files_killed_writers_left(repo, cache_on, monkeypatch):
    """A process killed while it wrote a cache file leaves its temporary file (tens of MB at 50,000
    items); the next process that writes one removes those untouched for STALE_TEMP_SECONDS, at
    that age exactly and older, never a younger one (a write in progress)."""
    monkeypatch.setattr(cache, "_swept", set())
    _settle(repo)
    cache_on.mkdir(parents=True, exist_ok=True)
    now = time.time()
    ages = {
        "old": cache.STALE_TEMP_SECONDS + 5,
        "over": cache.STALE_TEMP_SECONDS + 1,
        "young": cache.STALE_TEMP_SECONDS - 60,
    }
    for name, age in ages.items():
        left = cache_on / f".tmp-{name}.pickle"
        left.write_bytes(b"half a cache file")
        os.utime(left, (now - age, now - age))
    (cache_on / ".tmp-other.txt").write_bytes(b"not ours")
    os.utime(cache_on / ".tmp-other.txt", (now - 2 * cache.STALE_TEMP_SECONDS,) * 2)
    reader.read_feature(_feature_dir(repo))  # stores the feature: the first write of this process
    left = sorted(p.name for p in cache_on.iterdir() if p.name.startswith(".tmp-"))
    assert left == [".tmp-other.txt", ".tmp-young.pickle"]
    assert cache._sweep_stale_temps(cache_on, now=now + 60) == [".tmp-young.pickle"]  # exactly at the age

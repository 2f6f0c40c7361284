"""A cache of read features, keyed by the files they were read from; never wrong when one changes.

``read_feature`` stores the Feature it built (pickled) together with a *fingerprint* of
every input taken **before** reading: for each file directly inside the feature directory,
each entry of ``scar-reports/`` and the repository's registry, its ``(kind, size,
mtime_ns, ctime_ns, inode, device)`` (plus the target's for a symlink), and "absent" for
the optional ones; the names in ``scar-reports/``; the repository root found; and the size
and mtime of the scars modules that compute the result, with the scars and Python versions.
A reopen recomputes the fingerprint (``stat`` only — no file is read) and uses the stored
Feature only when every part is identical.

Why a ``stat`` is enough here: writing a file always sets its ``ctime`` to the current time,
and ``ctime`` cannot be set back from user space (``os.utime`` sets ``mtime``/``atime`` and
itself moves ``ctime`` forward). The one gap is timestamp granularity: a file written twice
within one clock tick of the filesystem keeps its ``ctime``. So, as git does with "racily
clean" index entries, nothing is stored while any input changed less than ``RACY_NS`` (2 s)
before the store: such a feature is simply read again next time, and once its files have
settled the next read stores it. What is left is a system clock set backwards by more than
that window between two writes, which no stat-based check can see; ``SCARS_NO_CACHE=1``
turns the cache off entirely.

Where: ``$SCARS_CACHE_DIR``, else ``$XDG_CACHE_HOME/scars``, else ``~/.cache/scars``; one
file per feature directory (named by a hash of its absolute path), written atomically
(temporary file, rename; not fsynced: a file a crash cut short does not unpickle
and is ignored). A cache file that cannot be read, does not unpickle, or is
of another format is ignored (and replaced by the next store); a cache directory that
cannot be written leaves scars working exactly as without a cache. A pickle runs code when it is
loaded, so a cache file or folder that is not this user's alone (another owner, or writable by
group or others: a shared ``SCARS_CACHE_DIR``) is never loaded nor written: scars then works as
without a cache.

The cache holds only what ``read_feature`` derives from the files; decisions are never
cached (the journal is replayed by the session on every open).

A *part* is something computed from a cached Feature alone (``scars status --json``'s encoded
items): stored beside the Feature's file with the token the Feature was stored with (random,
new on every store) and the stamp of the modules that compute it, it is used only with that
very Feature (:func:`load_part`), never with a Feature read again or by other code.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import io
import os
import pickle
import re
import stat
import struct
import sys
import time
import weakref
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scars.core import __version__, settings
from scars.core.model import DEFERRED_PARTS, Feature, LazyFeature
from scars.core.records import record, replace
from scars.core.storage.durable import Fingerprint, is_temp_name, remove_stale, users_own
from scars.core.storage.parallel import gc_paused
from scars.core.storage.paths import folder_refusal

FORMAT = 5  # 4: a feature's items, reports and the rest apart, the rest first to load (_dump_feature); 5: records
# (scars.core.records) pickle as their class called with their field values
RACY_NS = 2_000_000_000  # inputs changed within this window before a store are not cached
MAX_CACHE_BYTES = 512 * 1024 * 1024  # a cache file larger than this is ignored

# The modules whose code decides what read_feature returns: an edited module (an editable
# install, a hot fix) must not see results computed by the old code.
# Paths relative to the scars.core package directory.
_CODE_MODULES = (
    "records.py",
    "model.py",
    "text.py",
    "values.py",
    "sanitize.py",
    "samsara/feature.py",
    "samsara/layout.py",
    "samsara/reports.py",
    "samsara/resolutions.py",
    "samsara/items.py",
    "samsara/registry.py",
    "samsara/contract.py",
    "samsara/aggregate.py",
    "samsara/patterns.py",
    "samsara/matching.py",
    "formats/iteration_log.py",
    "formats/auto_decisions.py",
    "storage/safe_read.py",
    "storage/paths.py",
    "storage/confine.py",
    "storage/cache.py",
    "storage/parallel.py",
)


def enabled() -> bool:
    return settings.current().cache_enabled


def cache_dir() -> Path:
    return settings.current().cache_dir


def cache_file(feature_dir: Path) -> Path:
    key = hashlib.sha256(os.fsencode(str(feature_dir))).hexdigest()[:32]
    return cache_dir() / f"feature-{key}.pickle"


def _stamp(st: os.stat_result) -> tuple:
    return (stat.S_IFMT(st.st_mode), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def _entry(path: str | os.PathLike[str]) -> tuple:
    """The stamp of one path: absent, or lstat (+ the target's stat for a symlink)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return ("absent",)
    except OSError as exc:
        return ("error", exc.errno)
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.stat(path)
        except OSError:
            return ("link", _stamp(st), os.readlink(path), None)
        return ("link", _stamp(st), os.readlink(path), _stamp(target))
    return _stamp(st)


@functools.cache
def _code_stamp(modules: tuple[str, ...] = _CODE_MODULES) -> tuple:
    """The stamp of the code of ``modules`` as this process loaded it: taken once (a repository of
    1,000 features stamped 20 modules per feature; a module edited later is not the code that runs)."""
    here = Path(__file__).resolve().parent.parent  # the scars.core package directory
    out: list[Any] = [FORMAT, sys.version, __version__]
    for name in modules:
        out.append((name, _entry(here / name)))
    return tuple(out)


def same_file(stamp: Any, fp: Fingerprint | None) -> bool:
    """Whether ``stamp`` (a regular file's entry in a :func:`fingerprint`) and ``fp`` (the durable
    fingerprint of a read of it) describe the file in one state: the same type, size, times, inode
    and device (what the cache itself trusts)."""
    return (
        fp is not None
        and isinstance(stamp, tuple)
        and stamp == (stat.S_IFREG, fp.size, fp.mtime_ns, fp.ctime_ns, fp.ino, fp.dev)
    )


def fingerprint(feature_dir: Path, repo_root: Path | None) -> dict[str, Any]:
    """Everything the read of ``feature_dir`` depends on, by ``stat`` (no file is read). The
    temporary files of our own atomic writes (in flight, or left by a killed writer) are not
    inputs: ``durable.is_temp_name``."""
    files: dict[str, tuple] = {}
    with os.scandir(feature_dir) as it:
        for e in it:
            if (not e.is_dir(follow_symlinks=False) or e.is_symlink()) and not is_temp_name(e.name):
                files[e.name] = _entry(e.path)
    for name in (
        "scar-reports",
        "index.yaml",
        "pre-thinking.md",
        "1.5-pre-thinking.md",
        "iteration-log.yaml",
        "auto-decisions.md",
    ):
        files.setdefault(name, _entry(feature_dir / name))
    reports: dict[str, tuple] = {}
    rdir = feature_dir / "scar-reports"
    # A scar-reports/ that is a link leading out of the repository is never listed (the read rule,
    # storage/paths): the reader makes it one parse failure, and its link target is input enough.
    if os.path.isdir(rdir) and not (os.path.islink(rdir) and folder_refusal(rdir / "x", repo_root or feature_dir)):
        with os.scandir(rdir) as it:
            for e in it:
                if not is_temp_name(e.name):
                    reports[e.name] = _entry(e.path)
    registry = _entry(repo_root / ".samsara" / "systemic-scars.yaml") if repo_root else ("no-root",)
    return {
        "code": _code_stamp(),
        "feature": str(feature_dir),
        "repo_root": str(repo_root) if repo_root else None,
        "files": files,
        "reports": reports,
        "registry": registry,
    }


def _newest_ns(fp: dict[str, Any]) -> int:
    newest = 0

    def walk(v: Any) -> None:
        nonlocal newest
        if isinstance(v, tuple) and len(v) == 6 and all(isinstance(x, int) for x in v):
            newest = max(newest, v[2], v[3])
        elif isinstance(v, (tuple, list)):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)

    walk({k: fp[k] for k in ("files", "reports", "registry")})
    return newest


def _too_recent(stamp: Any, now_ns: int | None = None) -> bool:
    """True when ``stamp`` (of ``_entry``) changed within ``RACY_NS`` of now."""
    now = time.time_ns() if now_ns is None else now_ns
    return _newest_ns({"files": stamp, "reports": (), "registry": ()}) >= now - RACY_NS


def load(feature_dir: Path, fp: dict[str, Any], also: dict[str, Any] | None = None) -> Any | None:
    """The cached Feature when ``fp`` matches the stored fingerprint exactly, else None; with
    ``also``, what is stored under that fingerprint instead is taken too (one open of the file)."""
    if not enabled():
        return None
    header, feature = _read(
        cache_file(feature_dir),
        lambda h: (
            isinstance(h, dict)
            and h.get("format") == FORMAT
            and (h.get("fingerprint") == fp or (also is not None and h.get("fingerprint") == also))
        ),
        _load_feature,
    )
    if header is None:
        return None
    _touch(cache_file(feature_dir))
    _remember(feature, header.get("token"))
    return feature


def store(feature_dir: Path, fp: dict[str, Any], feature: Any, now_ns: int | None = None) -> bool:
    """Store ``feature`` under ``fp`` (taken before reading). False when not stored; inside
    :func:`written_after` the file is written when the block ends.

    Not stored when the cache is off, when an input changed less than ``RACY_NS`` ago (its
    stamp could not tell a second write in the same tick apart), or when the cache
    directory cannot be written.
    """
    pending = begin_store(feature_dir, fp, now_ns)
    return pending is not None and pending.finish(feature)


def begin_store(feature_dir: Path, fp: dict[str, Any], now_ns: int | None = None) -> Store | None:
    """A store under ``fp`` begun (:class:`Store`: its items may be written before the feature is
    complete), or None when it would not be stored (:func:`store`'s rules, judged now)."""
    if not enabled():
        return None
    now = time.time_ns() if now_ns is None else now_ns
    if _newest_ns(fp) >= now - RACY_NS:
        return None
    return Store(cache_file(feature_dir), {"format": FORMAT, "fingerprint": fp, "token": os.urandom(16).hex()})


class Store:
    """One feature's cache file being written: :meth:`items` writes the items of the feature read
    (the bulk of the file) into its temporary file at once — while the feature's possible patterns
    are still computed elsewhere; :meth:`finish` completes it with the whole feature and puts it in
    place (inside :func:`written_after`, when the block ends). The file is what :func:`_dump_feature`
    writes in one go; a feature whose items are not those written is written in one go instead.
    :meth:`drop` abandons it (its temporary file removed)."""

    def __init__(self, path: Path, header: dict[str, Any]) -> None:
        self.path, self.header = path, header
        self._open: tuple[Any, str] | None = None  # (the temporary file, its path) holding header and items
        self._of: tuple[Any, Any] = ((), ())  # (items, resolved) of the feature whose items were written
        self._every: tuple[Any, ...] = ()  # and those items as written (_items_of)
        self._done = False

    def items(self, feature: Any) -> None:
        """Write the header and ``feature``'s items now (a feature whose items are pickled with it:
        nothing yet). A failure writes nothing (:meth:`finish` tries the whole file again)."""
        items = _items_of(feature)
        if self._open is not None or self._done or not items:
            return
        try:
            fh, tmp = _temp_file(self.path)
            self._open = (fh, tmp)
            pickle.dump(self.header, fh, protocol=pickle.HIGHEST_PROTOCOL)
            self._open = (_Summed(fh), tmp)
            _dump_items(self._open[0], items)
            self._of, self._every = (feature.items, feature.resolved), items
        except _WRITE_ERRORS:
            opened, self._open = self._open, None
            if opened is not None:
                _discard(*opened)

    def finish(self, feature: Any) -> bool:
        """Store ``feature`` (its items written already when they are the ones :meth:`items` wrote).
        False when it is not stored (the directory cannot be written, the value does not pickle)."""
        if self._done:
            return False
        if not (_defer(lambda: self._complete(feature), self.drop) or self._complete(feature)):
            return False
        _remember(feature, self.header["token"])
        return True

    def _complete(self, feature: Any) -> bool:
        opened, self._open = self._open, None
        self._done = True
        if opened is None or self._of[0] is not feature.items or self._of[1] is not feature.resolved:
            if opened is not None:
                _discard(*opened)
            return _write(self.path, self.header, feature, _dump_feature)
        fh, tmp = opened
        try:
            with fh.file:
                _dump_tail(fh, feature, self._every)
            os.replace(tmp, self.path)
            return True
        except _WRITE_ERRORS:
            _discard(fh, tmp)
            return False

    def drop(self) -> None:
        """Abandon the store: nothing is written, a temporary file begun is removed."""
        opened, self._open = self._open, None
        self._done = True
        if opened is not None:
            _discard(*opened)


ITEMS_CHUNK = 4096  # items pickled together (each chunk with a memo of its own)


def _items_of(feature: Any) -> tuple[Any, ...]:
    """A feature's items (remaining, then resolved: every item of its reports once), when they are
    all of one type and their ``id`` tells them apart; else () (the feature is pickled whole)."""
    items, resolved = getattr(feature, "items", None), getattr(feature, "resolved", None)
    if not isinstance(items, tuple) or not isinstance(resolved, tuple) or not (items or resolved):
        return ()
    every = items + resolved
    kind = type(every[0])
    if any(type(it) is not kind for it in every) or len({getattr(it, "id", None) for it in every}) != len(every):
        return ()
    return every


def _dump_feature(fh: Any, feature: Any) -> None:
    """``feature`` pickled in parts: its items (their count, then chunks of ITEMS_CHUNK, each
    pickled alone: one pickle of the whole feature memoised ~450,000 objects at 50,000 items, a
    memo table of 16-24 MB, the peak of a cold read), then its items, resolved items and reports
    naming each item by its id, then the rest of the feature, then :data:`_TRAILER`: where the
    parts start and the CRC-32 of all of them. :func:`_load_feature` reads the rest and leaves the
    items and reports to be loaded when first asked (model.LazyFeature)."""
    summed, every = _Summed(fh), _items_of(feature)
    _dump_items(summed, every)
    _dump_tail(summed, feature, every)


class _Summed:
    """A file written through, with the CRC-32 and the count of the bytes written."""

    def __init__(self, file: Any) -> None:
        self.file, self.crc, self.size = file, 0, 0

    def write(self, data: Any) -> int:
        self.crc = zlib.crc32(data, self.crc)
        self.size += len(data)
        return self.file.write(data)

    def close(self) -> None:
        self.file.close()


# After the parts: where the deferred parts' pickle and the rest's start, where the rest ends (each
# from the items' count on) and the CRC-32 of everything before it.
_TRAILER = struct.Struct("<QQQI")


def _dump_items(fh: _Summed, items: tuple[Any, ...]) -> None:
    """The first part of :func:`_dump_feature`: the count of ``items`` and their chunks."""
    pickle.dump(len(items), fh, protocol=pickle.HIGHEST_PROTOCOL)
    for start in range(0, len(items), ITEMS_CHUNK):
        pickle.dump(items[start : start + ITEMS_CHUNK], fh, protocol=pickle.HIGHEST_PROTOCOL)


def _dump_tail(fh: _Summed, feature: Any, items: tuple[Any, ...]) -> None:
    """The rest of :func:`_dump_feature`: the deferred parts of ``feature``, one pickle each, naming
    each of ``items`` (written before them) by its id (None for a value that is no Feature), the
    rest, the trailer."""
    deferred = isinstance(feature, Feature)
    parts_at = fh.size
    pickler = pickle.Pickler(fh, protocol=pickle.HIGHEST_PROTOCOL)
    if items:
        kind = type(items[0])
        pickler.persistent_id = lambda obj: obj.id if type(obj) is kind else None  # type: ignore[method-assign]
    for part in (getattr(feature, n) for n in DEFERRED_PARTS) if deferred else (None,):
        pickler.dump(part)
        pickler.clear_memo()  # each part's memo freed before the next (all at once peaked at 11 MiB)
    del pickler
    rest_at = fh.size
    without = replace(feature, **dict.fromkeys(DEFERRED_PARTS, ())) if deferred else None
    pickle.dump((feature.sizes(), without) if deferred else (None, feature), fh, protocol=pickle.HIGHEST_PROTOCOL)
    fh.file.write(_TRAILER.pack(parts_at, rest_at, fh.size, fh.crc))


def _load_feature(fh: Any) -> Any:
    """What :func:`_dump_feature` wrote, from the file's current place: the rest of the feature now,
    its items, resolved items and reports when first asked (a LazyFeature holding the file's bytes
    until then: the very item objects, shared by the reports, as stored). A file cut short or whose
    bytes are not those written (its CRC) is refused here, never when the items are loaded."""
    raw = fh.read()
    data = memoryview(raw)
    if len(data) < _TRAILER.size:
        raise ValueError("cache file cut short")
    parts_at, rest_at, end, crc = _TRAILER.unpack(data[-_TRAILER.size :])
    if not parts_at <= rest_at <= end == len(data) - _TRAILER.size or zlib.crc32(data[:end]) != crc:
        raise ValueError("cache file cut short or changed")
    sizes, rest = pickle.loads(data[rest_at:end])
    if sizes is None:
        return rest

    def load() -> tuple[Any, Any, Any]:
        parts_fh = io.BytesIO(raw)  # over the file's bytes, not a copy of them (a memoryview's slice would be)
        count = pickle.load(parts_fh)
        items: list[Any] = []
        while len(items) < count:
            items.extend(pickle.load(parts_fh))
        parts_fh.seek(parts_at)
        by_id = {it.id: it for it in items}.__getitem__
        out = []
        for _name in DEFERRED_PARTS:
            unpickler = pickle.Unpickler(parts_fh)
            if items:
                unpickler.persistent_load = by_id  # type: ignore[method-assign]
            out.append(unpickler.load())
        return out[0], out[1], out[2]

    def load_paused() -> tuple[Any, Any, Any]:  # 100,000 objects made: no collection meanwhile
        with gc_paused():
            return load()

    return LazyFeature.deferred(rest, sizes, load_paused)


# Writes deferred by ``written_after`` in this process: (its pid, the writes in order), else None.
_DEFERRED: tuple[int, list[tuple[Any, Any]]] | None = None


@contextlib.contextmanager
def written_after() -> Iterator[None]:
    """Cache files stored inside the block are written when it ends, in the order stored: a
    command writes its output first, then the cache (a cold ``scars status --json`` at 50,000
    items spent ~0.3 s pickling before printing; a :class:`Store` whose items were written early
    is completed and put in place then). The same files are written as without it, also when
    the block ends by an error (a closed pipe), not when it is interrupted (Ctrl-C: a store
    begun is abandoned). A process forked inside the block (parallel reads) writes its own
    stores at once."""
    global _DEFERRED
    if _DEFERRED is not None and _DEFERRED[0] == os.getpid():  # nested: the outer block writes
        yield
        return
    writes: list[tuple[Any, Any]] = []
    _DEFERRED = (os.getpid(), writes)
    interrupted = False
    try:
        yield
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        _DEFERRED = None
        for write, drop in writes:
            if not interrupted:
                write()
            elif drop is not None:
                drop()


def _defer(write: Any, drop: Any = None) -> bool:
    """Queue ``write`` when this process is inside ``written_after`` (``drop``: what abandons it
    when the block is interrupted); False when it is not."""
    if _DEFERRED is None or _DEFERRED[0] != os.getpid():
        return False
    _DEFERRED[1].append((write, drop))
    return True


def _folder_is_yours(directory: Path) -> bool:
    """Whether the cache folder is this user's alone (``durable.users_own``: a pickle runs code when
    loaded, so one another user could plant is never loaded)."""
    try:
        st = os.stat(directory)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and users_own(st)


def _read(path: Path, accept: Any, load: Any = pickle.load) -> tuple[Any, Any]:
    """(header, value) of a cache file whose header ``accept`` takes; (None, None) when there is
    none, it is too large, corrupt, foreign, or not accepted — or not this user's alone: the file
    (opened without following a link) and its folder must be owned by this user and writable by
    nobody else (``durable.users_own``), else it is ignored and never unpickled."""
    try:
        if not _folder_is_yours(path.parent):
            return None, None
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode) or not users_own(st) or st.st_size > MAX_CACHE_BYTES:
                return None, None
            header = pickle.load(fh)
            if not accept(header):
                return None, None
            return header, load(fh)
    except FileNotFoundError:
        return None, None
    except Exception:  # noqa: BLE001 - a corrupt or foreign cache file is ignored, never fatal
        return None, None


# What a failed write of a cache file raises: the directory cannot be written, the value does not pickle.
_WRITE_ERRORS = (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError)


# A temporary cache file untouched for this long is the leftover of a process killed mid-write
# (tens of MB at 50,000 items): one being written is touched within seconds (an hour leaves room
# for a read held up by a loaded machine). Swept once per process, at its first write.
STALE_TEMP_SECONDS = 3600.0
_TEMP_PREFIX, _TEMP_SUFFIX = ".tmp-", ".pickle"
_swept: set[Path] = set()


def _sweep_stale_temps(directory: Path, now: float | None = None) -> list[str]:
    """Remove the cache's temporary files in ``directory`` untouched for STALE_TEMP_SECONDS; the
    names removed."""
    removed = remove_stale(
        directory,
        lambda name: name.startswith(_TEMP_PREFIX) and name.endswith(_TEMP_SUFFIX),
        older_than=STALE_TEMP_SECONDS,
        now=now,
    )
    return [os.path.basename(p) for p in removed]


# ----------------------------------------------------------------------------- the bound
# The cache is bounded (issue 31: it grew to hundreds of files): an entry — a feature's file and
# its parts — unused for MAX_AGE_SECONDS goes, then the least recently used go while the whole is
# over MAX_TOTAL_BYTES. A load touches the file it used (its mtime is its last use). The bound is
# applied once per process, at its first write into the folder (with the sweep of temporary
# files killed writes left); `scars cache clean` applies it
# (or removes every entry) on demand. Only files of the cache's own names are ever removed.
MAX_AGE_SECONDS = 30 * 86400.0
MAX_TOTAL_BYTES = 256 * 1024 * 1024
_ENTRY_NAME = re.compile(r"feature-([0-9a-f]{32})(?:\.[A-Za-z0-9_-]+)?\.pickle")


@record(slots=True)
class CacheEntry:
    """One feature's files in the cache: its Feature file and its parts."""

    key: str  # the hash of the feature directory's path
    files: tuple[str, ...]  # names in the cache folder
    size: int  # bytes, all files
    used: float  # the latest mtime of its files (a load touches the file it used)


@record(slots=True)
class CleanResult:
    """What :func:`clean` removed (or, with ``dry_run``, would remove) and what it kept."""

    directory: Path
    removed: tuple[CacheEntry, ...]
    kept: tuple[CacheEntry, ...]
    temps: tuple[str, ...]  # temporary files of killed writes, removed
    refused: str | None = None  # why nothing was touched (a folder not this user's alone)
    dry_run: bool = False

    @property
    def removed_bytes(self) -> int:
        return sum(e.size for e in self.removed)

    @property
    def kept_bytes(self) -> int:
        return sum(e.size for e in self.kept)


def entries(directory: Path | None = None) -> list[CacheEntry]:
    """The cache's entries (regular files of its own names, links not followed), least recently
    used first."""
    directory = cache_dir() if directory is None else directory
    groups: dict[str, list[tuple[str, os.stat_result]]] = {}
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    for name in names:
        m = _ENTRY_NAME.fullmatch(name)
        if m is None:
            continue
        try:
            st = os.lstat(directory / name)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            groups.setdefault(m.group(1), []).append((name, st))
    out = [
        CacheEntry(
            key,
            tuple(sorted(n for n, _ in files)),
            sum(st.st_size for _, st in files),
            max(st.st_mtime for _, st in files),
        )
        for key, files in groups.items()
    ]
    return sorted(out, key=lambda e: (e.used, e.key))


def over_bound(
    found: list[CacheEntry], *, now: float, max_age: float = MAX_AGE_SECONDS, max_bytes: int = MAX_TOTAL_BYTES
) -> list[CacheEntry]:
    """The entries the bound removes: every one unused for ``max_age`` seconds (exactly that age
    stays), then the least recently used while the rest is over ``max_bytes`` (exactly at it
    stays). ``found`` least recently used first (:func:`entries`)."""
    gone = [e for e in found if now - e.used > max_age]
    rest = [e for e in found if now - e.used <= max_age]
    total = sum(e.size for e in rest)
    for e in rest:
        if total <= max_bytes:
            break
        gone.append(e)
        total -= e.size
    return gone


def clean(
    *,
    everything: bool = False,
    dry_run: bool = False,
    max_age: float = MAX_AGE_SECONDS,
    max_bytes: int = MAX_TOTAL_BYTES,
    directory: Path | None = None,
    now: float | None = None,
) -> CleanResult:
    """Apply the bound to the cache folder (``everything``: remove every entry), or with
    ``dry_run`` say what it would remove. Temporary files of killed writes older than
    STALE_TEMP_SECONDS go too. A folder that is not this user's alone is left untouched."""
    directory = cache_dir() if directory is None else directory
    now = time.time() if now is None else now
    if not directory.exists():
        return CleanResult(directory, (), (), (), dry_run=dry_run)
    if not _folder_is_yours(directory):
        return CleanResult(directory, (), (), (), refused="the cache folder is not this user's alone", dry_run=dry_run)
    found = entries(directory)
    gone = list(found) if everything else over_bound(found, now=now, max_age=max_age, max_bytes=max_bytes)
    kept = tuple(e for e in found if e not in gone)
    temps: list[str] = []
    if not dry_run:
        for e in gone:
            for name in e.files:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(directory / name)
        temps = _sweep_stale_temps(directory, now=now)
    return CleanResult(directory, tuple(gone), kept, tuple(temps), dry_run=dry_run)


def _touch(path: Path) -> None:
    """Mark a cache file used now (the bound removes the least recently used)."""
    with contextlib.suppress(OSError):
        os.utime(path, None, follow_symlinks=False)


def _temp_file(path: Path) -> tuple[Any, str]:
    """(a temporary file opened for writing beside ``path``, its path)."""
    # lazy: tempfile (~1.5 ms, it imports random) only when a cache file is written, not for a warm open
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not _folder_is_yours(path.parent):  # a folder others can write: nothing of ours goes there
        raise PermissionError(errno.EACCES, "the cache folder is not this user's alone", str(path.parent))
    if path.parent not in _swept:  # once per process: temporaries of killed writes, and the bound
        _swept.add(path.parent)
        clean(directory=path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=_TEMP_PREFIX, suffix=_TEMP_SUFFIX)
    return os.fdopen(fd, "wb"), tmp


def _discard(fh: Any, tmp: str) -> None:
    """Close and remove a temporary file of :func:`_temp_file`."""
    with contextlib.suppress(OSError):
        fh.close()
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def _write(path: Path, header: dict[str, Any], value: Any, dump: Any = None) -> bool:
    """Write ``header`` then ``value`` to ``path`` atomically (temporary file, rename). False
    when the cache directory cannot be written or the value does not pickle."""
    opened = None
    try:
        opened = _temp_file(path)
        with opened[0] as fh:
            pickle.dump(header, fh, protocol=pickle.HIGHEST_PROTOCOL)
            if dump is None:
                pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
            else:
                dump(fh, value)
            # No fsync: a cache file lost or cut short by a crash fails to unpickle and is
            # ignored (then rewritten); syncing would cost a disk flush per feature.
        os.replace(opened[1], path)
        opened = None
        return True
    except _WRITE_ERRORS:
        return False
    finally:
        if opened is not None:
            _discard(*opened)


# The token of each Feature this process stored or loaded, while that Feature lives (by identity,
# through a weak reference: a token never keeps a feature of tens of megabytes alive).
_TOKENS: dict[int, tuple[weakref.ref[Any], str]] = {}


def _remember(feature: Any, token: Any) -> None:
    if not isinstance(token, str):
        return
    key = id(feature)

    def forget(_dead: object) -> None:
        _TOKENS.pop(key, None)

    try:
        ref = weakref.ref(feature, forget)
    except TypeError:  # not weakly referenceable: its parts are not kept
        return
    _TOKENS[key] = (ref, token)


def _token_of(feature: Any) -> str | None:
    held = _TOKENS.get(id(feature))
    return held[1] if held is not None and held[0]() is feature else None


def token_of(feature: Any) -> str | None:
    """The token this process stored or loaded ``feature`` with (None: a Feature the cache did not
    store or load, e.g. with the cache off or its files changed within ``RACY_NS``). Two Features
    with one token are the one stored Feature: read from the very same files."""
    return _token_of(feature)


def _part_file(feature_dir: Path, name: str) -> Path:
    return cache_file(feature_dir).with_suffix(f".{name}.pickle")


def load_part(feature_dir: Path, name: str, feature: Any, modules: tuple[str, ...]) -> Any | None:
    """The part ``name`` stored for this very ``feature`` (the one :func:`load` or :func:`store`
    returned or took in this process) by the code of ``modules`` as it is now, else None."""
    token = _token_of(feature)
    if token is None or not enabled():
        return None
    want = {"format": FORMAT, "token": token, "code": _code_stamp(modules)}
    return _read(_part_file(feature_dir, name), lambda h: h == want)[1]


def store_part(feature_dir: Path, name: str, feature: Any, modules: tuple[str, ...], value: Any) -> bool:
    """Store ``value``, computed from ``feature`` alone by the code of ``modules``, as its part
    ``name``: only when ``feature`` is the one stored or loaded by this process. False when not."""
    token = _token_of(feature)
    if token is None or not enabled():
        return False
    header = {"format": FORMAT, "token": token, "code": _code_stamp(modules)}
    path = _part_file(feature_dir, name)
    return _defer(lambda: _write(path, header, value)) or _write(path, header, value)

"""Reading many scar reports at once: across processes above a threshold, serially below it.

``read_reports(jobs, registry, read_one)`` returns exactly what calling ``read_one`` (the
reader's ``scars.core.samsara.reports.read_report``, passed in: storage knows no samsara
concept) on each ``(path, rel)`` in order would return. With at
least ``PARALLEL_THRESHOLD`` reports and more than one usable core, the reports are split
into contiguous chunks read by a pool of worker processes (``fork`` on Linux, so workers
start in milliseconds with everything already imported); results come back in order. Any
failure of the pool itself (a worker killed, a start method that is not available, a
result that does not pickle …) falls back to reading serially, so the outcome never
depends on the pool. A report that cannot be parsed is a parse failure either way — that is
``read_one``'s job, not an exception. ``read_features(paths, read_one)`` does the same for
whole features. ``Beside(fn, args)`` starts one pure computation in a forked child while this
process goes on (the possible patterns beside the rest of the read and the log matcher).

The cyclic garbage collector is paused during the bulk read (it would otherwise scan the
growing heap of parsed objects again and again: the largest single cost on big inputs, see
docs/performance.md) and frozen objects are released afterwards.
"""

from __future__ import annotations

import functools
import gc
import os
import pickle
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from scars.core import settings

# read_report(path, rel, registry) -> (report, failures, warnings, dangling): passed in by the reader.
ReadReport = Callable[[Path, str, Any], Any]

PARALLEL_THRESHOLD = 400  # reports; below this a pool costs more than it saves
MAX_WORKERS = 8
CHUNKS_PER_WORKER = 4


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def workers_for(n_reports: int) -> int:
    """How many worker processes to use for ``n_reports`` (1 = serial)."""
    env = settings.current().workers
    if env is not None:
        return max(1, min(env, MAX_WORKERS))
    if n_reports < PARALLEL_THRESHOLD:
        return 1
    return max(1, min(usable_cpus(), MAX_WORKERS))


@contextmanager
def gc_paused() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _read_chunk(jobs: Sequence[tuple[str, str]], registry: Any, read_one: ReadReport) -> list[Any]:
    with gc_paused():
        return [read_one(Path(p), rel, registry) for p, rel in jobs]


def _serial(jobs: Sequence[tuple[str, str]], registry: Any, read_one: ReadReport) -> list[Any]:
    return _read_chunk(jobs, registry, read_one)


def _chunks(jobs: Sequence[tuple[str, str]], n: int) -> list[Sequence[tuple[str, str]]]:
    size = max(1, -(-len(jobs) // n))
    return [jobs[i : i + size] for i in range(0, len(jobs), size)]


def read_reports(
    jobs: Sequence[tuple[str | os.PathLike[str], str]],
    registry: Any,
    read_one: ReadReport,
    *,
    workers: int | None = None,
) -> list[Any]:
    """``[read_one(path, rel, registry) for path, rel in jobs]``, in parallel when it pays.

    ``read_one`` is a module-level function (it is pickled by reference for the workers)."""
    plain = [(os.fspath(p), rel) for p, rel in jobs]
    n = workers_for(len(plain)) if workers is None else max(1, workers)
    if n <= 1 or len(plain) < 2:
        return _serial(plain, registry, read_one)
    try:
        return _pool_read(plain, registry, n, read_one)
    except Exception:  # noqa: BLE001 - any pool failure: the serial read gives the same result
        return _serial(plain, registry, read_one)


def _pool_read(jobs: list[tuple[str, str]], registry: Any, n: int, read_one: ReadReport) -> list[Any]:
    return _pool_map(functools.partial(_read_chunk, registry=registry, read_one=read_one), jobs, n)


FEATURES_THRESHOLD = 64  # features; reading a repository root with more uses the pool


def read_features(
    paths: Sequence[str | os.PathLike[str]], read_one: Callable[[str], Any], *, workers: int | None = None
) -> list[Any]:
    """``[read_one(p) for p in paths]``: across processes for many features.

    Any failure in the pool (including a feature that raises) repeats the read serially, so
    errors surface exactly as the serial read raises them.
    """
    plain = [os.fspath(p) for p in paths]
    if workers is None:
        env = settings.current().workers
        workers = (
            max(1, min(env, MAX_WORKERS))
            if env is not None
            else (1 if len(plain) < FEATURES_THRESHOLD else min(usable_cpus(), MAX_WORKERS))
        )
    if workers > 1 and len(plain) > 1:
        try:
            return _pool_map(functools.partial(_read_feature_chunk, read_one=read_one), plain, workers)
        except Exception:  # noqa: BLE001 - the serial read gives the same result or the real error
            pass
    return _read_feature_chunk(plain, read_one)


def _read_feature_chunk(paths: Sequence[str], read_one: Callable[[str], Any]) -> list[Any]:
    with gc_paused():
        return [read_one(p) for p in paths]


def _pool_map(fn: Any, items: list[Any], n: int) -> list[Any]:
    # lazy: multiprocessing and concurrent.futures (~12 ms) only when a pool runs; every start-up would pay them
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    if sys.platform.startswith("linux"):
        ctx = mp.get_context("fork" if threading.active_count() == 1 else "forkserver")
    else:
        ctx = mp.get_context()
    chunks = _chunks(items, n * CHUNKS_PER_WORKER)
    out: list[Any] = []
    with ProcessPoolExecutor(max_workers=min(n, len(chunks)), mp_context=ctx) as pool:
        futures = [pool.submit(fn, chunk) for chunk in chunks]
        with gc_paused():
            for fut in futures:
                out.extend(fut.result())
    if len(out) != len(items):  # pragma: no cover - defensive
        raise RuntimeError("worker returned a partial chunk")
    return out


class Beside:
    """``fn(*args)``, started in a forked child when a fork is safe and useful (Linux, this process
    running one thread, more than one usable core, ``SCARS_WORKERS`` not 1) and ``fork`` is
    true, so that this process does other work meanwhile; :meth:`result` gives it. ``fn`` must be
    a pure function of its arguments with a picklable result; any failure of the child (killed,
    an exception, a result that does not pickle) or no fork computes ``fn(*args)`` here instead,
    in :meth:`result`, so the outcome never depends on the fork. A handle whose result is not
    wanted is cancelled (:meth:`cancel`: the child killed and reaped)."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...], *, fork: bool = True) -> None:
        self._fn, self._args = fn, args
        self._pid: int | None = None
        self._read = -1
        workers = settings.current().workers
        if (
            not fork
            or not sys.platform.startswith("linux")
            or threading.active_count() != 1
            or usable_cpus() < 2
            or (workers is not None and workers <= 1)
        ):
            return
        try:
            r, w = os.pipe()
            pid = os.fork()
        except OSError:
            return
        if pid == 0:  # the child: compute, send, leave without running any of the parent's exit code
            code = 1
            try:
                os.close(r)
                gc.disable()
                data = pickle.dumps(fn(*args), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(w, "wb") as out:
                    out.write(data)
                code = 0
            finally:
                os._exit(code)
        os.close(w)
        self._pid, self._read = pid, r

    @property
    def args(self) -> tuple[Any, ...]:
        """The arguments ``fn`` was (or will be) called with."""
        return self._args

    @property
    def forked(self) -> bool:
        return self._pid is not None

    def result(self) -> Any:
        """``fn(*args)``: the child's result when it gave one, else computed here. Once."""
        given, value = self.wait()
        return value if given else self._fn(*self._args)

    def wait(self) -> tuple[bool, Any]:
        """(True, the child's result) once the child gave one; (False, None) when there was no
        child or it gave none (killed, an exception, a result that does not unpickle). Waits for
        the child and reaps it; computes nothing here. Once."""
        if self._pid is None:
            return False, None
        with os.fdopen(self._read, "rb") as inp:
            data = inp.read()
        _pid, status = os.waitpid(self._pid, 0)
        self._pid = None
        if status == 0 and data:
            try:
                return True, pickle.loads(data)
            except Exception:  # noqa: BLE001 - a result that does not unpickle: none given
                pass
        return False, None

    def cancel(self) -> None:
        """The result is not wanted: the child (if any) is killed and reaped."""
        if self._pid is not None:
            os.kill(self._pid, 9)
            os.waitpid(self._pid, 0)
            os.close(self._read)
            self._pid = None

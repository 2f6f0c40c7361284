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

import contextlib
import fcntl
import functools
import gc
import os
import pickle
import struct
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


_paused_for_startup = False


def pause_for_startup() -> None:
    """The cyclic collector paused while the app starts (its imports, its first frame): what that
    allocates lives on (modules, classes, widgets) or is freed by its counts, and the collections
    it set off were ~20 ms of the first screen (issue 31). :func:`resume_after_startup` ends the
    pause; one someone else made is theirs (not taken for this one, not ended by it)."""
    global _paused_for_startup
    if gc.isenabled():
        gc.disable()
        _paused_for_startup = True


def resume_after_startup() -> None:
    """The collector runs again, when :func:`pause_for_startup` paused it (else nothing). What the
    start allocated is frozen first (``gc.freeze``): it lives on, and a first collection over
    all of it would be a ~20 ms stall just after the first frame."""
    global _paused_for_startup
    if _paused_for_startup:
        _paused_for_startup = False
        gc.freeze()
        gc.enable()


@contextmanager
def paused_for_startup() -> Iterator[None]:
    """:func:`pause_for_startup` for the block, resumed when it ends unless resumed earlier (the
    app's first frame): the start of an app that may end without one."""
    pause_for_startup()
    try:
        yield
    finally:
        resume_after_startup()


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


def _may_fork(fork: bool = True) -> bool:
    """Whether a child is forked for work done beside this process: Linux, this process running
    one thread (a fork copies no other thread, and a lock another holds would stay held), more
    than one usable core, ``SCARS_WORKERS`` not 1, and the caller's ``fork``."""
    workers = settings.current().workers
    return (
        fork
        and sys.platform.startswith("linux")
        and threading.active_count() == 1
        and usable_cpus() >= 2
        and (workers is None or workers > 1)
    )


_FRAME = struct.Struct("<Q")  # a message's length, before its pickle
PIPE_BYTES = 1 << 20  # asked of the kernel for a feed's pipe: a child sends without waiting for a read


class Feed:
    """``fn(send, *args)`` in a forked child (:func:`_may_fork`) while this process goes on: each
    ``send(obj)`` there is a message this process takes with :meth:`next`, in order. A message
    is pickled whole before it is written, so each one taken is complete; once the child fails
    (killed, an exception, a value that does not pickle) :meth:`next` gives nothing more. No child
    (no fork): :attr:`forked` is False and :meth:`next` gives nothing — the caller does the work."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...], *, fork: bool = True) -> None:
        self._pid: int | None = None
        self._inp: Any = None
        if not _may_fork(fork):
            return
        try:
            r, w = os.pipe()
            with contextlib.suppress(OSError, AttributeError):  # a larger pipe where the kernel allows it
                fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
            pid = os.fork()
        except OSError:
            return
        if pid == 0:  # the child: work, send, leave without running any of the parent's exit code
            code = 1
            try:
                os.close(r)
                gc.disable()
                with os.fdopen(w, "wb") as out:  # buffered: each write is written whole

                    def send(obj: Any) -> None:
                        data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
                        out.write(_FRAME.pack(len(data)))
                        out.write(data)
                        out.flush()  # the message is the parent's as soon as it is sent

                    fn(send, *args)
                code = 0
            finally:
                os._exit(code)
        os.close(w)
        self._pid, self._inp = pid, os.fdopen(r, "rb")

    @property
    def forked(self) -> bool:
        return self._pid is not None

    def next(self) -> tuple[bool, Any]:
        """(True, the child's next message), waiting for it; (False, None) when there is none: no
        child, the child ended (failed, or sent all it had), or a message that does not unpickle.
        After the last message the child is reaped."""
        if self._pid is None:
            return False, None
        try:
            head = self._inp.read(_FRAME.size)
            if len(head) == _FRAME.size:
                (size,) = _FRAME.unpack(head)
                data = self._inp.read(size)
                if len(data) == size:
                    return True, pickle.loads(data)
        except Exception:  # noqa: BLE001 - a message that does not unpickle: none given, as a failed child's
            pass
        self.cancel()  # it ended (reaped as it is) or sent what does not unpickle (stopped)
        return False, None

    def close(self) -> None:
        """No more messages wanted: the child is let finish (what it sends still is not read) and
        reaped."""
        if self._pid is not None:
            with contextlib.suppress(OSError):
                while self._inp.read(1 << 16):
                    pass
            self._reap()

    def cancel(self) -> None:
        """No more messages wanted: the child, if still running, is killed and reaped."""
        if self._pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, 9)
            self._reap()

    def _reap(self) -> None:
        assert self._pid is not None
        os.waitpid(self._pid, 0)
        self._inp.close()
        self._pid = None


def _send_result(send: Callable[[Any], None], fn: Callable[..., Any], *args: Any) -> None:
    send(fn(*args))


class Beside:
    """``fn(*args)``, started in a forked child when a fork is safe and useful (:func:`_may_fork`)
    and ``fork`` is true, so that this process does other work meanwhile; :meth:`result` gives it.
    ``fn`` must be a pure function of its arguments with a picklable result; any failure of the
    child (killed, an exception, a result that does not pickle) or no fork computes ``fn(*args)``
    here instead, in :meth:`result`, so the outcome never depends on the fork. A handle whose
    result is not wanted is cancelled (:meth:`cancel`: the child killed and reaped). A
    :class:`Feed` of one message."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...], *, fork: bool = True) -> None:
        self._fn, self._args = fn, args
        self._feed = Feed(_send_result, (fn, *args), fork=fork)

    @property
    def args(self) -> tuple[Any, ...]:
        """The arguments ``fn`` was (or will be) called with."""
        return self._args

    @property
    def forked(self) -> bool:
        return self._feed.forked

    def result(self) -> Any:
        """``fn(*args)``: the child's result when it gave one, else computed here. Once."""
        given, value = self.wait()
        return value if given else self._fn(*self._args)

    def wait(self) -> tuple[bool, Any]:
        """(True, the child's result) once the child gave one; (False, None) when there was no
        child or it gave none (killed, an exception, a result that does not unpickle). Waits for
        the child and reaps it; computes nothing here. Once."""
        given, value = self._feed.next()
        self._feed.close()
        return given, value

    def cancel(self) -> None:
        """The result is not wanted: the child (if any) is killed and reaped."""
        self._feed.cancel()

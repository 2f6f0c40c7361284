"""Run a function in a forked child with a memory cap and a hang guard.

A hostile input may crash (segfault), exhaust memory or block (a FIFO) a naive reader. The
tests must report that as a failure of the reader, not die with it, so every such case runs
in a child: ``RLIMIT_AS`` = the parent's current address space + ``mem_bytes`` (fork shares
the parent's mappings, so an absolute cap would be meaningless), and SIGKILL after
``timeout`` seconds. The function's JSON-able result comes back through a pipe.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import select
import signal
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

GIB = 1 << 30


@dataclass
class Outcome:
    status: str  # ok | exception | signal | timeout | exit
    value: Any = None
    error: str = ""
    elapsed: float = 0.0
    detail: str = ""

    def explain(self) -> str:
        return f"{self.status} after {self.elapsed:.2f}s: {self.detail}\n{self.error}"


def _vm_size() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def run_isolated(fn: Callable[[], Any], *, timeout: float = 30.0, mem_bytes: int = GIB) -> Outcome:
    rfd, wfd = os.pipe()
    limit = _vm_size() + mem_bytes
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # child
        code = 0
        try:
            os.close(rfd)
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            try:
                payload = {"ok": True, "value": fn()}
            except BaseException as exc:  # reported to the parent, which fails the test
                payload = {"ok": False, "error": "".join(traceback.format_exception(exc))}
            data = json.dumps(payload, default=repr).encode()
            view = memoryview(data)
            while view:
                n = os.write(wfd, view)
                view = view[n:]
        except BaseException:
            code = 70
        finally:
            os._exit(code)
    os.close(wfd)
    chunks: list[bytes] = []
    deadline = start + timeout
    timed_out = False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([rfd], [], [], left)
            if not ready:
                continue
            chunk = os.read(rfd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(rfd)
    if timed_out:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    elapsed = time.monotonic() - start
    if timed_out:
        return Outcome("timeout", elapsed=elapsed, detail=f"killed after {timeout}s")
    if os.WIFSIGNALED(status):
        return Outcome("signal", elapsed=elapsed, detail=f"child died of signal {os.WTERMSIG(status)}")
    raw = b"".join(chunks)
    if not raw:
        return Outcome("exit", elapsed=elapsed, detail=f"child exited {os.WEXITSTATUS(status)} without a result")
    payload = json.loads(raw)
    if not payload["ok"]:
        return Outcome("exception", error=payload["error"], elapsed=elapsed, detail="exception in child")
    return Outcome("ok", value=payload["value"], elapsed=elapsed)

"""Helpers of the fault-injection tests: a feature with many items, a decision driver that
reports every operation before and after it, a model of what the reports promise, and a
verifier of what is on disk after a kill.

The driver runs in a forked child and writes one line per event to a pipe:

    B <op> <args>      an operation begins (it may or may not reach the disk)
    D <op> <args>      the operation returned: the tool reported it saved

so after a SIGKILL the parent knows every operation reported saved, and the single one that
was in flight (if any).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import time
from pathlib import Path
from typing import Any

FEATURE_NAME = "2026-02-01_faults"
ACCEPT = {"re_review_signal": "a second writer appears", "owner": "storage team", "rationale": "one writer today"}

LOG_HEAD = """\
# iteration log written by hand before scars ran (comments must survive)
feature: "faults"
signal_lost_initial: {n}
budget:
  max_rounds: 3
  reviewer_retry_limit: 2
rounds:
  - round: 1
    signal_lost_before: {n}
    budget_context:
      remaining_rounds_at_start: 2
      stagnation_count_at_start: 0
      net_rot_previous_round: 0
      strategy_hint: explore
    items_triaged: 0
    triage_result:
      fix: []
      accept: []
      defer: []
    fixes_applied: 0
    fixes_scar_count: 0
    signal_lost_after: {n}
    decision: continue
    decision_reason: "first round written by hand"  # kept byte for byte
"""


def make_fault_feature(root: Path, *, items: int = 40, auto: bool = False, log: bool = True) -> Path:
    """A samsara feature with ``items`` counted items in several reports (and a round-1 log)."""
    feature = root / "changes" / FEATURE_NAME
    reports = feature / "scar-reports"
    reports.mkdir(parents=True)
    per = 10
    for r in range(0, items, per):
        lines = [f"task_id: task-{r // per + 1}", "completion_status: done", "known_shortcuts:"]
        for i in range(r, min(r + per, items)):
            lines.append(f'  - description: "Shortcut number {i}: something hard-coded in module {i}"')
        lines += [
            "silent_failure_conditions: []",
            "assumptions_made: []",
            "debt_registered: true",
            f'debt_location: "src/m{r}.py:1"',
        ]
        (reports / f"task-{r // per + 1}-scar.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if log:
        (feature / "iteration-log.yaml").write_text(LOG_HEAD.format(n=items), encoding="utf-8")
    if auto:
        (feature / "pre-thinking.md").write_text(
            "# Pre-thinking\n\nExecution mode: auto\n\n## Evaluation Contract\n\n**Primary evaluator:** the test suite\n",
            encoding="utf-8",
        )
    return feature


def copy_feature(template: Path, dest_root: Path) -> Path:
    shutil.copytree(template.parent.parent, dest_root)
    return dest_root / "changes" / FEATURE_NAME


# ------------------------------------------------------------------ the model


class Model:
    """The state the reported operations promise: item -> action, with the undo stack."""

    def __init__(self, decided: dict[str, str] | None = None):
        self.state: dict[str, str] = dict(decided or {})
        self.stack: list[list[tuple[str, str | None]]] = []
        self.closed: list[int] = []
        self.open_round: int | None = None

    def copy(self) -> Model:
        m = Model(self.state)
        m.stack = [list(x) for x in self.stack]
        m.closed = list(self.closed)
        m.open_round = self.open_round
        return m

    def apply(self, op: dict[str, Any]) -> None:
        kind = op["op"]
        if kind == "decide":
            self.stack.append([(i, self.state.get(i)) for i in op["ids"]])
            for i in op["ids"]:
                self.state[i] = op["action"]
        elif kind == "undo":
            if self.stack:
                for i, prev in self.stack.pop():
                    if prev is None:
                        self.state.pop(i, None)
                    else:
                        self.state[i] = prev
        elif kind == "start":
            self.open_round = op["round"]
        elif kind == "close":
            self.closed.append(op["round"])
            self.open_round = None
            self.stack.clear()


# ------------------------------------------------------------------ the driver (child side)


def _emit(fd: int, tag: str, op: dict[str, Any]) -> None:
    os.write(fd, (tag + " " + json.dumps(op) + "\n").encode())


def drive(feature: Path, fd: int, seed: int, *, rounds: bool, max_ops: int = 10_000) -> None:
    """Decide, undo and (with ``rounds``) start/close rounds until killed or ``max_ops``."""
    from scars.core.samsara.session import FeatureSession

    rnd = random.Random(seed)
    s = FeatureSession.open(feature, user="driver")
    # past max_rounds on purpose: the driver exercises durability, not the valve (a decision made
    # while no round is open opens one: the same override)
    past = "the kill driver runs past max_rounds to test durability"
    ids = [i.id for i in s.feature.items if i.counted]
    os.write(fd, b"OPEN {}\n")
    for _ in range(max_ops):
        r = rnd.random()
        if rounds and r < 0.3:
            if s.current_round() is None:
                op = {"op": "start", "round": s.next_round_number()}
                _emit(fd, "B", op)
                got = s.start_round(override_max_rounds=past)
                op["round"] = got["round"]
            else:
                op = {"op": "close", "round": s.current_round()}
                _emit(fd, "B", op)
                s.close_round("continue", f"round {op['round']} closed by the kill driver")
            _emit(fd, "D", op)
            continue
        r = rnd.random()
        if r < 0.15:
            op = {"op": "undo"}
            _emit(fd, "B", op)
            op["ids"] = s.undo()
            _emit(fd, "D", op)
            continue
        action = rnd.choice(["fix", "accept", "defer"])
        fields = dict(ACCEPT) if action == "accept" else ({"reason": "needs the v2 API"} if action == "defer" else {})
        if r < 0.35:
            batch = rnd.sample(ids, rnd.randint(2, 5))
            op = {"op": "decide", "ids": batch, "action": action}
            _emit(fd, "B", op)
            s.decide_many(batch, action, override_max_rounds=past, **fields)
        else:
            item = rnd.choice(ids)
            op = {"op": "decide", "ids": [item], "action": action}
            _emit(fd, "B", op)
            s.decide(item, action, override_max_rounds=past, **fields)
        _emit(fd, "D", op)
    s.close()


def parse_events(raw: bytes) -> tuple[list[dict], dict | None, bool]:
    """(operations reported saved, the operation in flight or None, whether OPEN was seen)."""
    done: list[dict] = []
    inflight = None
    opened = False
    for line in raw.split(b"\n"):
        if not line:
            continue
        tag, _, body = line.partition(b" ")
        if tag == b"OPEN":
            opened = True
            continue
        try:
            op = json.loads(body)
        except ValueError:  # a line torn by the kill (the pipe got part of it)
            continue
        if tag == b"B":
            inflight = op
        elif tag == b"D":
            done.append(op)
            inflight = None
    return done, inflight, opened


def run_and_kill(feature: Path, seed: int, *, rounds: bool, delay: float, timeout: float = 20.0) -> bytes:
    """Fork a driver, SIGKILL it ``delay`` seconds after it opened the session; return its events."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(rfd)
            drive(feature, wfd, seed, rounds=rounds)
        except BaseException as exc:  # reported to the parent as an event
            with contextlib.suppress(BaseException):
                os.write(wfd, b"ERROR " + json.dumps(repr(exc)).encode() + b"\n")
            code = 1
        finally:
            os._exit(code)
    os.close(wfd)
    buf = bytearray()
    deadline = time.monotonic() + timeout
    kill_at = None
    import select

    try:
        while time.monotonic() < deadline:
            if kill_at is None and b"OPEN" in buf:
                kill_at = time.monotonic() + delay
            wait = 0.05 if kill_at is None else max(0.0, kill_at - time.monotonic())
            if kill_at is not None and wait == 0.0:
                break
            r, _, _ = select.select([rfd], [], [], min(wait, 0.05))
            if r:
                chunk = os.read(rfd, 65536)
                if not chunk:
                    break
                buf += chunk
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        # What the child wrote before it died is still in the pipe.
        while True:
            r, _, _ = select.select([rfd], [], [], 0)
            if not r:
                break
            chunk = os.read(rfd, 65536)
            if not chunk:
                break
            buf += chunk
    finally:
        os.close(rfd)
    if b"ERROR " in buf:
        raise AssertionError(f"driver failed: {bytes(buf).split(b'ERROR ', 1)[1][:2000]!r}")
    return bytes(buf)

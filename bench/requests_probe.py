#!/usr/bin/env python3
"""Gate requests (`scars gate … --wait`): answer-to-wake latency and the idle CPU of a waiter.

    python bench/requests_probe.py latency N WORKDIR   # N requests, one real waiting process each
    python bench/requests_probe.py idle SECONDS WORKDIR

``latency``: for each request a real `scars gate spec PATH --wait --json` process posts it (its
first line, the request id); after a random 0–0.2 s (so the answer lands anywhere in the waiter's
poll) the answer is written exactly as the app writes it (``requests.answer_request``), and the
time runs from its return to the waiter's result line: the poll, reading the request, gathering
the gate again, recording it through the record path, printing. The baseline is the record path
alone (``gates.record`` of the same answer at the same gate, in this process). ``idle``: the CPU
time (utime + stime, /proc) a waiter spends over SECONDS once its request is posted. Prints one
JSON object.
"""

from __future__ import annotations

import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

REASON = "offline sync is v2 scope; the backlog entry keeps it"

# The loop-spec feature waiting at its SPEC gate that the screenshots in docs/ use.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "screenshots"))
from make_screenshots import LOOP_SPEC_FEATURE as FEATURE  # noqa: E402


def _feature(root: Path, slug: str) -> Path:
    d = root / ".loop-spec" / "features" / slug
    d.mkdir(parents=True)
    (d / "feature.json").write_text(json.dumps({**FEATURE, "slug": slug}, indent=2) + "\n", encoding="utf-8")
    return d


def _waiter(fdir: Path, root: Path) -> tuple[subprocess.Popen, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEXTUAL_")}
    env.update(NO_COLOR="1", SCARS_USER="agent")
    proc = subprocess.Popen(
        [sys.executable, "-m", "scars.tui", "gate", "spec", str(fdir), "--wait", "--json"],
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    first = proc.stdout.readline() if proc.stdout else ""
    if not first:
        raise SystemExit(f"the waiter posted nothing: {proc.stderr.read() if proc.stderr else ''}")
    return proc, json.loads(first)["request"]


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def latency(n: int, work: Path) -> dict:
    from scars.core.gates import gather, record
    from scars.core.gates import requests as rq

    root = work / "latency"
    (root / ".git").mkdir(parents=True)
    rnd = random.Random(18)
    samples: list[float] = []
    for i in range(n):
        fdir = _feature(root, f"f{i:03d}")
        proc, rid = _waiter(fdir, root)
        time.sleep(rnd.uniform(0.0, 0.2))
        rq.answer_request(root, rid, "ship", REASON, user="bench", source="app")
        t0 = time.perf_counter()
        line = proc.stdout.readline() if proc.stdout else ""
        t1 = time.perf_counter()
        proc.wait(60)
        if proc.returncode != 0 or json.loads(line).get("request") != rid:
            raise SystemExit(f"waiter {rid} exited {proc.returncode}: {line!r}")
        samples.append((t1 - t0) * 1000)
    in_place: list[float] = []
    for i in range(min(n, 20)):
        fdir = _feature(root, f"p{i:03d}")
        t0 = time.perf_counter()
        record(gather("spec", fdir), "ship", REASON, user="bench", source="bench")
        in_place.append((time.perf_counter() - t0) * 1000)
    return {
        "n": n,
        "p50_ms": statistics.median(samples),
        "p99_ms": _pct(samples, 0.99),
        "max_ms": max(samples),
        "in_place_ms": statistics.median(in_place),
        "poll_s": rq.POLL_SECONDS,
    }


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def idle(seconds: float, work: Path) -> dict:
    root = work / "idle"
    (root / ".git").mkdir(parents=True)
    proc, rid = _waiter(_feature(root, "idle"), root)
    try:
        c0, t0 = _cpu_seconds(proc.pid), time.perf_counter()
        time.sleep(seconds)
        c1, t1 = _cpu_seconds(proc.pid), time.perf_counter()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    return {"seconds": t1 - t0, "cpu_s": c1 - c0, "cpu_pct": (c1 - c0) / (t1 - t0) * 100, "request": rid}


def main() -> int:
    what, amount, work = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    work.mkdir(parents=True, exist_ok=True)
    out = latency(int(amount), work) if what == "latency" else idle(float(amount), work)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

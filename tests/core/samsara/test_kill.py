"""Kill tests: a writer killed with SIGKILL at random moments loses nothing it reported saved.

The writer is a forked child (cheap: the modules are already imported) that records
decisions, undos and whole rounds on a feature in auto mode and reports each one on a pipe
after the call returns. The parent kills it at a random moment, then checks: every file
still parses, every reported decision and round is on disk, and reopening resumes.
"""

from __future__ import annotations

import os
import random
import signal
import time

import pytest
import yaml

import scars.core.samsara.feature  # imported before forking so the writer starts at once
import scars.core.samsara.rounds  # noqa: F401
from scars.core.formats.auto_decisions import parse_auto_decisions
from scars.core.samsara.decisions import DECISION, UNDO, replay
from scars.core.samsara.session import FeatureSession
from scars.core.storage.journal import journal_path, read_journal
from tests.factories import ACCEPT, csv_feature


def _writer(feature, wfd: int, seed: int) -> None:
    rnd = random.Random(seed)
    s = FeatureSession.open(feature, user="killer")
    ids = [i.id for i in s.feature.items]
    os.write(wfd, b"READY\n")
    while True:
        if s.current_round() is None:
            info = s.start_round()
            os.write(wfd, f"START {info['round']}\n".encode())
        op = rnd.random()
        if op < 0.55:
            item = rnd.choice(ids)
            action = rnd.choice(["fix", "accept", "defer"])
            fields = ACCEPT if action == "accept" else ({"reason": "needs the v2 API"} if action == "defer" else {})
            s.decide(item, action, **fields)
            seq = s.records[-1]["seq"]
            os.write(wfd, f"DECISION {seq} {item} {action}\n".encode())
        elif op < 0.7:
            reverted = s.undo()
            if reverted:  # nothing to undo writes no record
                seq = s.records[-1]["seq"]
                os.write(wfd, f"UNDO {seq} {','.join(reverted)}\n".encode())
        else:
            r = s.close_round("continue", "another round may help")
            os.write(wfd, f"ROUND {r['round']}\n".encode())


def _trial(tmp_path, n: int, rnd: random.Random) -> dict:
    feature = csv_feature(tmp_path / f"t{n}", auto=True)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(r)
            _writer(feature, w, n)
        finally:
            os._exit(0)
    os.close(w)
    buf = b""
    if rnd.random() < 0.9:  # most kills land while deciding; some while the session opens
        while b"READY\n" not in buf:
            chunk = os.read(r, 4096)
            if not chunk:
                break
            buf += chunk
    time.sleep(rnd.uniform(0.0, 0.25))
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    with os.fdopen(r, "rb") as f:
        buf += f.read()
    reported = [ln for ln in buf.decode().splitlines() if ln != "READY"]
    return _check(feature, reported)


def _check(feature, reported: list[str]) -> dict:
    # 1. every file parses as it was left by the kill
    read = read_journal(journal_path(feature))
    assert len(read.problems) <= 1 and (not read.problems or read.torn_tail), read.problems
    log_path = feature / "iteration-log.yaml"
    rounds_before = []
    if log_path.exists():
        data = yaml.safe_load(log_path.read_text(encoding="utf-8"))
        rounds_before = [x["round"] for x in data["rounds"]]
        assert rounds_before == list(range(1, len(rounds_before) + 1))
    md = feature / "auto-decisions.md"
    if md.exists():
        entries = parse_auto_decisions(md.read_text(encoding="utf-8"))
        assert [e.number for e in entries] == list(range(1, len(entries) + 1))
        assert all(not e.problems for e in entries), [e.problems for e in entries]
    # 2. every reported record is in the journal as reported
    by_seq = {rec["seq"]: rec for rec in read.records}
    rounds_reported = []
    for line in reported:
        kind, *rest = line.split()
        if kind == "DECISION":
            rec = by_seq[int(rest[0])]
            d = rec["decisions"][0]
            assert (d["item_id"], d["action"]) == (rest[1], rest[2])
        elif kind == "UNDO":
            assert by_seq[int(rest[0])]["type"] == UNDO
        elif kind == "ROUND":
            rounds_reported.append(int(rest[0]))
    # 3. reopening resumes: same state as the journal, every reported round in the log
    state = replay(read.records)
    with FeatureSession.open(feature, user="checker") as s:
        assert s.decisions == state.decisions
        assert s.problems == [] or all("incomplete" in p or "checksum" in p for p in s.problems)
        if rounds_reported:
            data = yaml.safe_load(log_path.read_text(encoding="utf-8"))
            on_disk = [x["round"] for x in data["rounds"]]
            assert set(rounds_reported) <= set(on_disk)
        # the journal accepts new records after a torn tail (the decision opens a round when none
        # is open: past max_rounds with the override)
        s.decide(s.feature.items[0].id, "fix", override_max_rounds="the kill test decides past max_rounds")
    assert read_journal(journal_path(feature)).records[-1]["type"] == DECISION
    return {"reported": len(reported), "rounds": len(rounds_reported), "torn": read.torn_tail}


def _run(tmp_path, trials: int, seed: int) -> list[dict]:
    rnd = random.Random(seed)
    return [_trial(tmp_path, n, rnd) for n in range(trials)]


def test_kill_quick(tmp_path):
    results = _run(tmp_path, 10, seed=1)
    assert sum(r["reported"] for r in results) > 0  # the kills did land mid-work


@pytest.mark.slow
def test_kill_many(tmp_path):
    results = _run(tmp_path, 150, seed=2)
    assert sum(r["reported"] for r in results) > 150
    assert sum(r["rounds"] for r in results) > 0

"""SIGKILL at random moments while deciding and while closing rounds.

Each trial copies a feature, forks a driver that decides, undoes, starts and closes rounds
(reporting every operation before and after it), kills it with SIGKILL at a random moment,
and checks: every operation reported saved is on disk (the decisions equal the reported
state, or that state plus the one operation in flight), every file parses, and the next
start resumes (the lock is free, pending rounds are written, work goes on).

Default suite: 10 trials. ``pytest -m slow``: 300 (``SCARS_KILL_TRIALS`` overrides).
Set ``SCARS_RELIAB_FIGURES=file.json`` to record the figures of a run.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from scars.core.formats.auto_decisions import parse_auto_decisions
from scars.core.formats.iteration_log import read_iteration_log
from scars.core.samsara.session import FeatureSession
from scars.core.storage.journal import journal_path, read_journal
from tests.hostile.faults import ACCEPT, Model, copy_feature, make_fault_feature, parse_events, run_and_kill

HAND_ROUNDS = {1}  # the template's iteration-log.yaml holds round 1, written by hand


@pytest.fixture(scope="module")
def templates(tmp_path_factory):
    base = tmp_path_factory.mktemp("kill-templates")
    return {
        "decide": make_fault_feature(base / "decide", items=40),
        "rounds": make_fault_feature(base / "rounds", items=40, auto=True),
    }


def _actions(session: FeatureSession) -> dict[str, str]:
    return {k: d.action for k, d in session.decisions.items()}


def _log_rounds(feature: Path) -> list[int]:
    path = feature / "iteration-log.yaml"
    log = read_iteration_log(path)  # raises if the file does not parse
    return [r.round for r in log.rounds]


def one_trial(template: Path, root: Path, trial: int, *, rounds: bool) -> dict:
    rnd = random.Random(trial)
    feature = copy_feature(template, root)
    log_before = (feature / "iteration-log.yaml").read_bytes()
    delay = rnd.uniform(0.0, 1.2 if rounds else 0.25)
    events = run_and_kill(feature, seed=trial, rounds=rounds, delay=delay)
    done, inflight, opened = parse_events(events)
    assert opened, f"trial {trial}: the driver never opened the session"
    reported = Model()
    for op in done:
        reported.apply(op)
    possible = [reported]
    if inflight is not None:
        m2 = reported.copy()
        m2.apply(inflight)
        possible.append(m2)
    label = f"trial {trial} (seed {trial}, kill after {delay:.3f}s, {len(done)} ops reported, in flight: {inflight})"

    # 1. The journal: intact records, at most a torn last line.
    read = read_journal(journal_path(feature))
    assert len(read.problems) <= 1 and (not read.problems or read.torn_tail), (
        f"{label}: journal damaged: {read.problems}"
    )

    # 2. iteration-log.yaml parses, and holds every round reported closed (earlier bytes kept).
    text = (feature / "iteration-log.yaml").read_bytes()
    assert text.startswith(log_before.rstrip(b"\n")), f"{label}: the hand-written part of iteration-log.yaml changed"
    on_disk = [r for r in _log_rounds(feature) if r not in HAND_ROUNDS]
    assert len(on_disk) == len(set(on_disk)), f"{label}: a round written twice: {on_disk}"
    assert set(reported.closed) <= set(on_disk), f"{label}: rounds reported closed {reported.closed}, on disk {on_disk}"
    allowed = set(reported.closed) | ({inflight["round"]} if inflight and inflight["op"] == "close" else set())
    assert set(on_disk) <= allowed, f"{label}: rounds on disk {on_disk} that were never closed"

    # 3. auto-decisions.md parses (every entry well formed).
    ad = feature / "auto-decisions.md"
    entries = parse_auto_decisions(ad.read_text(encoding="utf-8")) if ad.exists() else []
    assert all(not e.problems for e in entries), f"{label}: {[e.problems for e in entries]}"
    assert [e.number for e in entries] == list(range(1, len(entries) + 1)), f"{label}: numbering"

    # 4. A reader sees exactly the reported state (or it plus the op in flight).
    with FeatureSession.open(feature, read_only=True) as ro:
        seen = _actions(ro)
    assert any(seen == m.state for m in possible), f"{label}: on disk {seen}\nreported {reported.state}"

    # 5. The next start resumes: lock free, pending rounds written, same state, work goes on.
    with FeatureSession.open(feature, user="resumer") as s:
        assert _actions(s) == seen, f"{label}: resume changed the state"
        journal_closed = [r["round"] for r in s._state.closed_rounds]
        assert sorted(r for r in _log_rounds(feature) if r not in HAND_ROUNDS) == sorted(journal_closed), label
        free = [i.id for i in s.feature.items if i.counted]
        # the decision opens a round when none is open (past max_rounds with the override)
        s.decide(
            free[0], "accept", override_max_rounds="the resume check runs past max_rounds to test durability", **ACCEPT
        )
        closed = s.close_round("stop", "resumed after a kill and stopped")
    assert closed["round"] in _log_rounds(feature)
    entries_after = parse_auto_decisions(ad.read_text(encoding="utf-8")) if ad.exists() else []
    assert all(not e.problems for e in entries_after)
    return {
        "reported_ops": len(done),
        "inflight": inflight is not None,
        "torn_tail": read.torn_tail,
        "rounds_closed": len(reported.closed),
    }


def _record(name: str, results: list[dict]) -> None:
    path = os.environ.get("SCARS_RELIAB_FIGURES")
    if not path:
        return
    data = json.loads(Path(path).read_text()) if Path(path).exists() else {}
    data[name] = {
        "trials": len(results),
        "ops_reported_saved": sum(r["reported_ops"] for r in results),
        "killed_mid_operation": sum(r["inflight"] for r in results),
        "torn_journal_tails": sum(r["torn_tail"] for r in results),
        "rounds_closed": sum(r["rounds_closed"] for r in results),
        "lost": 0,
    }
    Path(path).write_text(json.dumps(data, indent=2))


@pytest.mark.parametrize("mode", ["decide", "rounds"])
def test_kill_quick(templates, tmp_path, mode):
    results = [one_trial(templates[mode], tmp_path / f"t{n}", n, rounds=mode == "rounds") for n in range(5)]
    assert sum(r["reported_ops"] for r in results) > 0


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["decide", "rounds"])
def test_kill_many(templates, tmp_path, mode):
    n = int(os.environ.get("SCARS_KILL_TRIALS", "150"))
    results = [one_trial(templates[mode], tmp_path / f"t{k}", 1000 + k, rounds=mode == "rounds") for k in range(n)]
    _record(f"kill_{mode}", results)
    # The kills must land mid-operation often enough to mean something.
    assert sum(r["inflight"] for r in results) >= n // 4

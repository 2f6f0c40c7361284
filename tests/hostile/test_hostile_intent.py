"""A kill mid-record of the loop-spec, ARIS / Mechanist, bkit and DAG gates rolls forward.

Each of these records writes several files (its auto-decisions.md entry first, then the loop's
state). A kill after any of those writes leaves the record's intent file; the next taker of the
directory's lock (the next record there, or a gate's read of it) completes the record, and the
files are then byte for byte those of an uninterrupted record of the same answer. A file someone
changed meanwhile is refused by name and nothing is overwritten.

The kill is simulated in-process (the k+1-th write raises ``SystemExit`` and the lock is dropped
as a dead process's is) after each write in turn, and done for real with SIGKILL at random moments
on loop-spec's ship, the longest record (default suite: 6 trials; ``-m slow``: 150, or
``SCARS_INTENT_TRIALS``).
"""

from __future__ import annotations

import json
import os
import random
import select
import shutil
import signal
import stat
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from scars.core import gates
from scars.core.errors import ChangedOnDisk, UsageError
from scars.core.gatekit import state_io
from scars.core.loops.bkit import gates as bkit_gate
from scars.core.loops.discover import discover_loops
from scars.core.storage import intent
from scars.core.storage.intent import intent_path, pending
from tests.factories import bkit_project, clean_env, loop_spec_feature, mechanist_state

USER = "alice"
NOW = "2026-11-30T12:00:00Z"
REASON = "the remaining gaps are v2 scope; the backlog keeps them"


class _Frozen(datetime):
    @classmethod
    def now(cls, tz=None):
        return datetime(2026, 11, 30, 12, 0, 0, 123000, tzinfo=UTC).astimezone(tz) if tz else cls(2026, 11, 30, 12)


@pytest.fixture(autouse=True)
def _frozen(monkeypatch):
    """One clock for every record, so two records of one answer are byte for byte the same."""
    clean_env(monkeypatch, USER)
    monkeypatch.setattr(state_io, "datetime", _Frozen)
    monkeypatch.setattr(bkit_gate, "datetime", _Frozen)


# --------------------------------------------------------------------------- the loops' records


def _loop_spec_ship(root: Path) -> tuple[Path, Path]:
    """The longest record: entry, .bak, feature.json, the pause record removed, a ledger line,
    two backlog lines (one BACKLOG.md written twice), a progress line."""
    fdir = loop_spec_feature(root)
    fj = fdir / "feature.json"
    data = json.loads(fj.read_text())
    second = {"type": "execute", "description": "conflict UI missing", "fix_first": "add the conflict dialog"}
    data["iterate"]["lastVerdict"]["remaining_gaps"] = [second]
    fj.write_text(json.dumps(data, indent=2) + "\n")
    (fdir / "graph-pause.json").write_text(json.dumps({"paused": True, "node": "human.iterate-spec-approval"}))
    (fdir / "PROGRESS.md").write_text("- 2026-11-29: EXECUTE done")  # no final newline: the line gets one first
    (fdir / "feature.json.bak").write_text("{}\n")
    (fdir / "feature.json.bak").chmod(0o644)
    fj.chmod(0o640)
    return fdir, fdir


def _loop_spec_reopen(root: Path) -> tuple[Path, Path]:
    fdir = loop_spec_feature(root)
    return fdir, fdir


def _mechanist_stop(root: Path) -> tuple[Path, Path]:
    stage = mechanist_state(root)
    return root, stage


def _bkit_partial(root: Path) -> tuple[Path, Path]:
    sf = bkit_project(root, rate=86, count=5, history=(80, 84, 86))
    return root, sf.parent


def _dag_retry(root: Path) -> tuple[Path, Path]:
    report = {
        "taskId": "docs-task",
        "decision": {"needsIteration": True, "priority": "high"},
        "triggers": [
            {"type": "validation_failure", "severity": 0.7, "details": "$.x: TYPE_MISMATCH", "code": "TYPE_MISMATCH"}
        ]
        * 3,
        "strategy": {"type": "refine"},
        "budget": {"maxIterations": 5, "currentIteration": 2, "remainingIterations": 3},
    }
    path = root / "dag" / "decision.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(yaml.safe_dump({"iterationDecision": report}, sort_keys=False))
    return root, path.parent


SCENARIOS = {
    # name: (setup, gate, answer, reason, writes of the record)
    "loop-spec ship": (_loop_spec_ship, "spec", "ship", REASON, 8),
    "loop-spec reopen": (_loop_spec_reopen, "spec", "reopen", "the spec never defined offline", 5),
    "mechanist stop": (_mechanist_stop, "review-continue", "stop", "the claims hold; stopping here", 2),
    "bkit partial": (_bkit_partial, "pdca-continue", "partial", REASON, 2),
    "dag retry": (_dag_retry, "dag-escalate", "retry", "emit strings as the schema says", 2),
}


def _record(scenario: str, root: Path) -> None:
    _setup, gate, answer, reason, _n = SCENARIOS[scenario]
    where = root if gate != "spec" else root / ".loop-spec" / "features" / "sync"
    gates.apply_answer(gates.gather(gate, where), answer, reason, user=USER, now=NOW)


def _snapshot(root: Path) -> dict[str, tuple[int, bytes]]:
    """Every file (mode, bytes) but the lock directory's own (the lock, its .gitignore)."""
    return {
        str(p.relative_to(root)): (stat.S_IMODE(p.stat().st_mode), p.read_bytes())
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".scars" not in p.relative_to(root).parts
    }


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """Per scenario: the tree before the record and the tree an uninterrupted record leaves."""
    out = {}
    base = tmp_path_factory.mktemp("intent-templates")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SCARS_USER", USER)
        mp.setattr(state_io, "datetime", _Frozen)
        mp.setattr(bkit_gate, "datetime", _Frozen)
        for name, (setup, *_rest) in SCENARIOS.items():
            template = base / name.replace(" ", "-") / "template"
            template.mkdir(parents=True)
            setup(template)
            whole = template.parent / "whole"
            shutil.copytree(template, whole)
            writes: list[str] = []
            real = intent._apply

            def counted(step, target, writes=writes, real=real):
                writes.append(step.op)
                real(step, target)

            mp.setattr(intent, "_apply", counted)
            _record(name, whole)
            mp.setattr(intent, "_apply", real)
            assert len(writes) == SCENARIOS[name][4], (name, writes)
            out[name] = (template, _snapshot(template), _snapshot(whole))
    return out


def _copy(template: Path, dest: Path) -> Path:
    shutil.copytree(template, dest)
    return dest


class _Kill:
    """The record's k+1-th write raises SystemExit (a kill after k writes); the lock is then
    dropped as a dead process's is (its ``with`` exits)."""

    def __init__(self, monkeypatch, k: int):
        self.k, self.done = k, 0
        real = intent._apply

        def apply(step, target):
            if self.done == self.k:
                raise SystemExit(f"killed after {self.k} writes")
            real(step, target)
            self.done += 1

        monkeypatch.setattr(intent, "_apply", apply)


def _lock_dir(scenario: str, root: Path) -> Path:
    return {
        "loop-spec ship": root / ".loop-spec" / "features" / "sync",
        "loop-spec reopen": root / ".loop-spec" / "features" / "sync",
        "mechanist stop": root / "review-stage",
        "bkit partial": root / ".bkit" / "state",
        "dag retry": root / "dag",
    }[scenario]


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_a_record_killed_after_each_write_is_completed_by_the_next_taker(made, tmp_path, monkeypatch, scenario):
    template, before, whole = made[scenario]
    writes = SCENARIOS[scenario][4]
    assert before != whole
    for k in range(writes):
        for taker in ("gather", "record's lock"):
            root = _copy(template, tmp_path / f"k{k}-{taker.split()[0]}")
            with monkeypatch.context() as mp:
                _Kill(mp, k)
                with pytest.raises(SystemExit):
                    _record(scenario, root)
            lock_dir = _lock_dir(scenario, root)
            assert pending(lock_dir), f"{scenario}: no intent after a kill after {k} writes"
            assert _snapshot(root) != whole, f"{scenario}: write {k + 1} of {writes} was already done"
            if taker == "gather":
                ev = gates.gather(SCENARIOS[scenario][1], lock_dir)
                assert any("has been completed" in w and "decision-001" in w for w in ev.warnings), ev.warnings
                # The evidence is read after the completion: an answer to it is not refused as stale.
                state_io.check_unchanged(ev.state_file, ev.context.get("fp") or ev.context["meta"]["fp"])
            else:
                with state_io.state_lock(lock_dir, "bob"):
                    pass
            assert not pending(lock_dir)
            assert _snapshot(root) == whole, f"{scenario}: killed after {k} writes, completed by the {taker}"


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_a_kill_before_the_intent_is_written_leaves_no_record(made, tmp_path, monkeypatch, scenario):
    template, before, _whole = made[scenario]
    root = _copy(template, tmp_path / "r")
    with monkeypatch.context() as mp:

        def killed(*a, **kw):
            raise SystemExit("killed while the intent was written")

        mp.setattr(intent, "atomic_write", killed)
        with pytest.raises(SystemExit):
            _record(scenario, root)
    assert not pending(_lock_dir(scenario, root))
    gates.gather(SCENARIOS[scenario][1], _lock_dir(scenario, root))
    assert _snapshot(root) == before


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_scars_loops_reads_an_interrupted_record_as_a_warning_and_writes_nothing(made, tmp_path, monkeypatch, scenario):
    template, _before, whole = made[scenario]
    root = _copy(template, tmp_path / "r")
    with monkeypatch.context() as mp:
        _Kill(mp, 1)
        with pytest.raises(SystemExit):
            _record(scenario, root)
    partial = _snapshot(root)
    [state] = [s for s in discover_loops(root) if s.kind != "bkit-sprint"]
    [note] = [p for p in state.parse_failures if "interrupted" in p.message]
    assert note.severity == "warning" and note.file == str(intent_path(_lock_dir(scenario, root)))
    assert _snapshot(root) == partial and pending(_lock_dir(scenario, root))  # a read writes nothing
    gates.gather(SCENARIOS[scenario][1], _lock_dir(scenario, root))
    assert _snapshot(root) == whole
    assert not any("interrupted" in p.message for s in discover_loops(root) for p in s.parse_failures)


def test_a_completion_killed_itself_is_completed_by_the_next_taker(made, tmp_path, monkeypatch):
    template, _before, whole = made["loop-spec ship"]
    for first, second in ((1, 0), (1, 3), (3, 2), (0, 7)):
        root = _copy(template, tmp_path / f"{first}-{second}")
        fdir = _lock_dir("loop-spec ship", root)
        with monkeypatch.context() as mp:
            _Kill(mp, first)
            with pytest.raises(SystemExit):
                _record("loop-spec ship", root)
        with monkeypatch.context() as mp:
            _Kill(mp, second)  # the completion dies after `second` more writes
            with pytest.raises(SystemExit):
                gates.gather("spec", fdir)
        assert pending(fdir)
        with state_io.state_lock(fdir, "carol"):
            pass
        assert _snapshot(root) == whole, (first, second)


@pytest.mark.parametrize(
    ("name", "change"),
    [
        (".loop-spec/features/sync/PROGRESS.md", lambda p: p.write_text("- rewritten by hand\n")),
        (".loop-spec/features/sync/feature.json", lambda p: p.write_text('{"edited": "by hand"}\n')),
        (".loop-spec/features/sync/graph-pause.json", lambda p: p.write_text('{"paused": true, "node": "x"}')),
    ],
)
def test_a_file_changed_between_the_kill_and_the_completion_is_refused_by_name(
    made, tmp_path, monkeypatch, name, change
):
    template, _before, _whole = made["loop-spec ship"]
    root = _copy(template, tmp_path / "r")
    fdir = _lock_dir("loop-spec ship", root)
    with monkeypatch.context() as mp:
        _Kill(mp, 1)  # the entry is written, the loop's state is not
        with pytest.raises(SystemExit):
            _record("loop-spec ship", root)
    change(root / name)
    edited = _snapshot(root)
    ev = gates.gather("spec", fdir)  # shows the state, says why the record is still pending
    assert any("cannot be completed" in w and str(root / name) in w for w in ev.warnings), ev.warnings
    with pytest.raises(ChangedOnDisk) as exc:
        gates.apply_answer(ev, "stop", None, user="bob", now=NOW)
    assert str(root / name) in str(exc.value) and "decision-001" in str(exc.value)
    assert _snapshot(root) == edited  # nothing overwritten, nothing of either answer written
    assert pending(fdir)


def test_backlog_lines_another_feature_appended_after_the_kill_stay_and_the_record_follows_them(
    made, tmp_path, monkeypatch
):
    """The repository's one BACKLOG.md takes every feature's ship lines, each record under its own
    feature's lock: lines another record appended between the kill and the completion (here the
    file it created) are kept, and the interrupted record's lines follow them."""
    template, _before, whole = made["loop-spec ship"]
    root = _copy(template, tmp_path / "r")
    fdir = _lock_dir("loop-spec ship", root)
    with monkeypatch.context() as mp:
        _Kill(mp, 1)  # the entry is written, the backlog lines are not
        with pytest.raises(SystemExit):
            _record("loop-spec ship", root)
    other = b"# Backlog\n\n- [ ] (2026-11-30 other iterate-gap id=x) another feature's gap\n"
    (root / ".loop-spec" / "BACKLOG.md").write_bytes(other)
    with state_io.state_lock(fdir, "carol"):
        pass
    got = _snapshot(root)
    assert got[".loop-spec/BACKLOG.md"][1] == other + whole[".loop-spec/BACKLOG.md"][1]
    assert {k: v for k, v in got.items() if k != ".loop-spec/BACKLOG.md"} == {
        k: v for k, v in whole.items() if k != ".loop-spec/BACKLOG.md"
    }
    assert not pending(fdir)


def test_the_bak_is_the_old_feature_json_with_its_mode_as_loop_spec_rotates_it(made):
    template, before, whole = made["loop-spec ship"]
    fj, bak = ".loop-spec/features/sync/feature.json", ".loop-spec/features/sync/feature.json.bak"
    assert before[bak] == (0o644, b"{}\n")
    assert whole[bak] == before[fj] == (0o640, before[fj][1])  # shutil.copy2's result, as before the plan
    assert whole[fj][0] == 0o640 and whole[fj][1] != before[fj][1]


def test_a_record_refused_while_it_is_planned_writes_nothing(tmp_path):
    """The DAG answer that cannot be appended (humanDecisions: is not the report's last root key
    any more) is refused before the entry is written: no entry without its answer."""
    _dag_retry(tmp_path)
    report = tmp_path / "dag" / "decision.yaml"
    ev = gates.gather("dag-escalate", tmp_path)
    report.write_text("humanDecisions: []\n" + report.read_text())
    ev.context["fp"] = None  # the edit is not what this test is about: the plan's refusal is
    before = _snapshot(tmp_path)
    with pytest.raises(UsageError, match="humanDecisions: is not the last root key"):
        gates.apply_answer(ev, "retry", "emit strings", user=USER, now=NOW)
    assert _snapshot(tmp_path) == before
    assert not (tmp_path / "dag" / "auto-decisions.md").exists() and not pending(tmp_path / "dag")


# --------------------------------------------------------------------------- a real SIGKILL


def _sigkill_trial(
    template: Path, dest: Path, rnd: random.Random, span: float, before, whole, *, stop_before: int | None = None
) -> str:
    """One recorder killed at a random moment; what the kill left: ``intent`` (mid-record),
    ``nothing`` (before the intent) or ``whole`` (after the record). The next taker of the lock
    must leave the files as before the record or as the whole record.

    ``stop_before``: the recorder stops itself before its step of that index (0: with the intent
    written and checked, no step applied) and is killed there: a kill mid-record, whatever the
    machine's speed."""
    root = _copy(template, dest)
    fdir = _lock_dir("loop-spec ship", root)
    ev = gates.gather("spec", fdir)
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the recorder
        code = 0
        try:
            os.close(rfd)
            if stop_before is not None:
                apply, applied = intent._apply, [0]

                def stop_there(step, target):
                    if applied[0] == stop_before:
                        os.write(wfd, b"S")
                        while True:  # held here until the kill
                            signal.pause()
                    applied[0] += 1
                    return apply(step, target)

                intent._apply = stop_there
            os.write(wfd, b"G")
            gates.apply_answer(ev, "ship", REASON, user=USER, now=NOW)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(wfd)
    try:
        select.select([rfd], [], [], 20)
        assert os.read(rfd, 1) == b"G"
        if stop_before is None:
            time.sleep(rnd.uniform(0, span))
        else:
            select.select([rfd], [], [], 120)  # a guard against a hang only: the recorder says when
            assert os.read(rfd, 1) == b"S", f"the recorder never reached its step {stop_before}"
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(rfd)
    assert not (os.WIFEXITED(status) and os.WEXITSTATUS(status) != 0), "the recorder failed"
    if intent_path(fdir).is_file():  # mid-record (a mark alone: killed just before the intent or just after)
        left = "intent"
    else:
        left = {repr(before): "nothing", repr(whole): "whole"}.get(repr(_snapshot(root)), "between")
    assert left != "between", f"{dest.name}: no intent, and the files are between before and the whole record"
    gates.gather("spec", fdir)  # the next taker of the lock
    assert not pending(fdir)
    now = _snapshot(root)
    assert now == (before if left == "nothing" else whole), f"{dest.name} ({left}): not the expected files"
    return left


def _sigkill_trials(made, tmp_path, n: int) -> dict[str, int]:
    template, before, whole = made["loop-spec ship"]
    # One uninterrupted record's time, so the kills land across it (and a little after).
    probe = _copy(template, tmp_path / "probe")
    started = time.perf_counter()
    _record("loop-spec ship", probe)
    span = 1.5 * (time.perf_counter() - started)
    counts = {"intent": 0, "nothing": 0, "whole": 0}
    for t in range(n):
        counts[_sigkill_trial(template, tmp_path / f"t{t}", random.Random(t), span, before, whole)] += 1
    return counts


def test_sigkill_mid_record_leaves_no_record_or_the_whole_record(made, tmp_path):
    _sigkill_trials(made, tmp_path, 6)  # each trial asserts what its kill left and what the next gate leaves


def test_sigkill_between_any_two_steps_is_completed_by_the_next_gate(made, tmp_path, monkeypatch):
    """A kill at each step of a loop-spec ship, the recorder stopped there by a hook (no timing):
    every kill lands mid-record, leaves the intent, and the next gate completes the whole record."""
    template, before, whole = made["loop-spec ship"]
    planned, commit = [], intent.Plan.commit
    with monkeypatch.context() as mp:  # the plan's steps counted on a copy (the frozen clock kept)
        mp.setattr(intent.Plan, "commit", lambda plan: (planned.append(len(plan.steps)), commit(plan))[1])
        _record("loop-spec ship", _copy(template, tmp_path / "probe"))
    (steps,) = planned
    assert steps == 8  # the entry, .bak, feature.json, the pause record, ledger, 2 backlog lines, progress
    for k in range(steps):
        left = _sigkill_trial(template, tmp_path / f"s{k}", random.Random(k), 0.0, before, whole, stop_before=k)
        assert left == "intent", f"killed before step {k}: {left}"


@pytest.mark.slow
def test_sigkill_mid_record_many(made, tmp_path):
    n = int(os.environ.get("SCARS_INTENT_TRIALS", "150"))
    counts = _sigkill_trials(made, tmp_path, n)
    # The kills must land mid-record often enough to mean something.
    print(f"SIGKILL trials: {counts}")
    assert counts["intent"] >= n // 10, counts

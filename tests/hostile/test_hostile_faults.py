"""Disk full, read-only directories, two writers at once, and logs edited by hand.

Disk full is injected two ways: a real tmpfs of a few hundred KB (mounted when the tests
run as root and mounting is allowed; skipped otherwise), and ``ENOSPC`` raised by the N-th
``os.write`` / ``os.fsync`` / ``os.replace`` / ``os.open`` of the durable layer, looping N
over every call an operation makes. After each fault: a clear error (a ``ScarsError``, never
a bare ``OSError``), the previous files intact, nothing reported saved that is not, and the
next operation works.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scars.core.errors import ChangedOnDisk, LockHeld, ScarsError
from scars.core.formats.auto_decisions import parse_auto_decisions
from scars.core.formats.iteration_log import read_iteration_log
from scars.core.samsara.session import FeatureSession
from scars.core.storage.journal import journal_path, read_journal
from tests.factories import SyscallTrace, decision_entry
from tests.hostile.faults import ACCEPT, copy_feature, make_fault_feature


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return make_fault_feature(tmp_path_factory.mktemp("fault-template") / "repo", items=12, auto=True)


def _files(feature: Path) -> dict[str, bytes]:
    out = {}
    for p in sorted(feature.rglob("*")):
        if p.is_file() and p.name != "lock":
            out[str(p.relative_to(feature))] = p.read_bytes()
    return out


def _all_parse(feature: Path) -> None:
    read = read_journal(journal_path(feature))
    assert not read.problems, read.problems
    seqs = [r["seq"] for r in read.records]
    assert seqs == sorted(set(seqs)), f"journal seqs not unique and increasing: {seqs}"
    if (feature / "iteration-log.yaml").exists():
        read_iteration_log(feature / "iteration-log.yaml")
    ad = feature / "auto-decisions.md"
    if ad.exists():
        entries = parse_auto_decisions(ad.read_text(encoding="utf-8"))
        assert all(not e.problems for e in entries), [e.problems for e in entries]


# ------------------------------------------------------------------ injected faults


class Injector(SyscallTrace):
    """Counts the durable layer's system calls; raises ``err`` at call number ``fail_at``.

    It is a :class:`durable_helpers.SyscallTrace`, so every run also says which renames and
    file creations no directory fsync made durable (``missing_dir_fsyncs``).
    """

    CALLS = ("write", "fsync", "replace", "open", "ftruncate", "mkdir")

    def __init__(
        self,
        monkeypatch,
        fail_at: int | None,
        err: int = errno.ENOSPC,
        only: tuple[str, ...] = CALLS,
        fail_from: bool = False,
    ):
        self.fail_from = fail_from
        self.n = 0
        self.fail_at = fail_at
        self.err = err
        self.only = only
        self.failed_call: str | None = None
        super().__init__(monkeypatch, hook=self._fault)

    def _fault(self, name, args):
        if name not in self.only:
            return
        if name == "open" and len(args) > 1 and not (args[1] & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)):
            return  # reads are not faults we inject
        self.n += 1
        if self.fail_at is not None and (self.n == self.fail_at or (self.fail_from and self.n > self.fail_at)):
            self.failed_call = name
            raise OSError(self.err, os.strerror(self.err))


OPS = {
    "decide": lambda s, ids: s.decide(ids[0], "accept", **ACCEPT),
    "decide_many": lambda s, ids: s.decide_many(ids[1:4], "defer", reason="needs the v2 API"),
    "undo": lambda s, ids: s.undo(),
    "close_round": lambda s, ids: s.close_round("continue", "round closed under injected faults"),
    "auto_decision": lambda s, ids: s.append_auto_decision(decision_entry(rationale="they bite first")),
}


def _prepare(feature: Path) -> list[str]:
    """A session history to fault on top of: decisions, an open round, one undoable step."""
    with FeatureSession.open(feature) as s:
        ids = [i.id for i in s.feature.items if i.counted]
        s.start_round()
        s.decide(ids[5], "fix")
        s.decide(ids[6], "defer", reason="next quarter")
    return ids


def _state(feature: Path) -> tuple[dict, list[int]]:
    with FeatureSession.open(feature, read_only=True) as s:
        return {k: d.action for k, d in s.decisions.items()}, [r.get("round") for r in s._state.closed_rounds]


@pytest.mark.parametrize("op", list(OPS))
def test_injected_enospc_at_every_call(op, template, tmp_path, monkeypatch):
    # Dry run: how many calls does the operation make?
    dry = copy_feature(template, tmp_path / "dry")
    ids = _prepare(dry)
    with FeatureSession.open(dry) as s, monkeypatch.context() as m:
        inj = Injector(m, None)
        OPS[op](s, ids)
        total = inj.n
    assert total >= 2, f"{op} made {total} durable calls"
    # Every rename and every file the operation created is made durable by a directory fsync.
    assert inj.missing_dir_fsyncs() == [], f"{op}: {inj.missing_dir_fsyncs()}"
    for n in range(1, total + 1):
        feature = copy_feature(template, tmp_path / f"n{n}")
        ids = _prepare(feature)
        before_files = _files(feature)
        before_state, before_closed = _state(feature)
        with FeatureSession.open(feature) as s:
            with monkeypatch.context() as m:
                inj = Injector(m, n)
                try:
                    OPS[op](s, ids)
                    raised = None
                except ScarsError as exc:
                    raised = exc
                except OSError as exc:  # a bare OSError is not a clear error
                    pytest.fail(f"{op}, fault at call {n} ({inj.failed_call}): bare {exc!r}")
            label = f"{op}, ENOSPC at call {n}/{total} ({inj.failed_call})"
            if raised is None:
                # Only a call whose failure is harmless may pass (e.g. a temp-file cleanup).
                continue
            msg = str(raised)
            assert re.search(r"disk|No space|not updated|recorded in the journal", msg), (
                f"{label}: unclear message {msg!r}"
            )
            # The same session goes on after the fault.
            free = [i for i in ids if i not in before_state][-1]
            s.decide(free, "fix")
        _all_parse(feature)
        after_state, after_closed = _state(feature)
        expected_after = dict(before_state, **{free: "fix"})
        if "recorded in the journal" in msg and op == "close_round":  # kept, the logs follow on next open
            assert after_closed == before_closed + [after_closed[-1]], label
        elif "recorded in the journal" in msg:  # the entry is in the journal: written on next open
            assert after_state == expected_after and after_closed == before_closed, label
        else:
            # Nothing reported saved that is not, and nothing half-saved.
            assert after_state == expected_after, f"{label}: state {after_state} != {expected_after} ({msg})"
            assert after_closed == before_closed, label
        for name, data in before_files.items():
            now = (feature / name).read_bytes()
            if name.endswith(("journal.jsonl", "auto-decisions.md")):
                assert now.startswith(data), f"{label}: {name} lost earlier bytes"
            elif name.endswith("iteration-log.yaml") and "recorded in the journal" not in msg:
                assert now == data, f"{label}: {name} changed"
        # The next start writes what the journal holds.
        with FeatureSession.open(feature) as s2:
            assert {k: d.action for k, d in s2.decisions.items()} == after_state
        _all_parse(feature)
        if op == "auto_decision" and "recorded in the journal" in msg:
            text = (feature / "auto-decisions.md").read_text(encoding="utf-8")
            assert [e.gate_id for e in parse_auto_decisions(text)] == ["triage"], label


def test_fsync_failure_then_retry_keeps_journal_sequence_unique(template, tmp_path, monkeypatch):
    """A decision whose fsync failed is reported failed; the next ones still get unique seqs."""
    feature = copy_feature(template, tmp_path / "f")
    ids = _prepare(feature)
    with FeatureSession.open(feature) as s:
        with monkeypatch.context() as m:
            Injector(m, 1, err=errno.EIO, only=("fsync",))
            with pytest.raises(ScarsError):
                s.decide(ids[0], "fix")
        s.decide(ids[1], "fix")
        s.decide(ids[2], "fix")
    _all_parse(feature)
    state, _ = _state(feature)
    assert state[ids[1]] == "fix" and state[ids[2]] == "fix"


# ------------------------------------------------------------------ a real full disk (tmpfs)


@pytest.fixture
def tmpfs(tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root to mount a tmpfs")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", str(mnt)], capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode(errors='replace').strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def _fill(directory: Path) -> Path:
    filler = directory / "filler.bin"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    return filler


def test_real_disk_full(template, tmpfs):
    feature = copy_feature(template, tmpfs / "repo")
    ids = _prepare(feature)
    log = feature / "iteration-log.yaml"
    with FeatureSession.open(feature) as s:
        s.decide(ids[0], "fix")
        filler = _fill(tmpfs)
        log_before = log.read_bytes()
        saved, failed = [], []
        for item in ids[1:5] + ids[7:]:
            try:
                s.decide(item, "accept", **dict(ACCEPT, rationale="a long rationale " * 40))
                saved.append(item)
            except ScarsError as exc:
                assert re.search(r"disk", str(exc)), str(exc)
                failed.append(item)
            except OSError as exc:
                pytest.fail(f"decide on a full disk: bare {exc!r}")
        try:
            s.close_round("continue", "closing on a full disk")
            closed = True
        except ScarsError as exc:
            assert re.search(r"disk|not updated|recorded in the journal", str(exc)), str(exc)
            closed = "recorded in the journal" in str(exc)
            if "iteration-log.yaml NOT written" in str(exc) or not closed:
                assert log.read_bytes() == log_before, "a failed write changed iteration-log.yaml"
        assert failed, "the disk was not full"
        _all_parse(feature)
        filler.unlink()
    with FeatureSession.open(feature) as s2:  # resumes: pending rounds are written now
        state = {k: d.action for k, d in s2.decisions.items()}
        assert state[ids[0]] == "fix"
        assert all(state.get(i) == "accept" for i in saved), "a decision reported saved is missing"
        assert not any(i in state for i in failed), "a decision reported failed is on disk"
        if closed:
            assert 2 in [r.round for r in read_iteration_log(log).rounds]
    _all_parse(feature)


def test_read_only_filesystem(template, tmpfs):
    """A feature on a filesystem mounted read-only: writers get a clear error, readers work."""
    feature = copy_feature(template, tmpfs / "repo")
    ids = _prepare(feature)
    before = _files(feature)
    subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], check=True)
    try:
        with pytest.raises(ScarsError) as info:
            FeatureSession.open(feature)
        assert "read-only" in str(info.value).lower(), str(info.value)
        with FeatureSession.open(feature, read_only=True) as ro:
            assert ro.decisions[ids[5]].action == "fix"
        p = subprocess.run(
            [sys.executable, "-m", "scars.tui.cli.main", "decide", ids[1], "--fix", "--feature", str(feature)],
            capture_output=True,
            timeout=60,
        )
        assert p.returncode != 0 and b"Traceback" not in p.stderr, p.stderr
        assert b"read-only" in p.stderr.lower(), p.stderr
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(tmpfs)], check=True)
    assert _files(feature) == before


@pytest.mark.parametrize("op", list(OPS))
def test_directory_turning_read_only_mid_session(op, template, tmp_path, monkeypatch):
    """EROFS/EACCES on every write of an open session (a remount cannot happen while scars
    holds files open for writing, so it is injected): a clear error, files untouched."""
    feature = copy_feature(template, tmp_path / "f")
    ids = _prepare(feature)
    before = _files(feature)
    before_state, _ = _state(feature)
    for err, word in ((errno.EROFS, "read-only"), (errno.EACCES, "permission")):
        with FeatureSession.open(feature) as s:
            with monkeypatch.context() as m:
                Injector(m, 1, err=err, fail_from=True)
                with pytest.raises(ScarsError) as info:
                    OPS[op](s, ids)
            assert word in str(info.value).lower(), str(info.value)
        assert _files(feature) == before, f"{op}: files changed after {errno.errorcode[err]}"
        assert _state(feature)[0] == before_state


# ------------------------------------------------------------------ two writers


def _writer(feature: Path, ids: list[str], per_session: int, out_fd: int, go_fd: int) -> None:
    os.read(go_fd, 1)  # start when the parent says so (EOF), while it holds the lock
    i = 0
    while i < len(ids):
        try:
            s = FeatureSession.open(feature, user=f"w{os.getpid()}")
        except LockHeld as exc:
            os.write(out_fd, (json.dumps({"refused": exc.holder.get("pid")}) + "\n").encode())
            time.sleep(0.002)
            continue
        try:
            for item in ids[i : i + per_session]:
                s.decide(item, "fix")
                os.write(out_fd, (json.dumps({"saved": item}) + "\n").encode())
            i += per_session
        finally:
            s.close()


class _Events:
    """The JSON lines a writer reports through its pipe, read as they come."""

    def __init__(self, fd: int) -> None:
        self.fd, self.events, self._rest = fd, [], b""

    def read_until(self, done) -> None:
        """Read until ``done(events)`` holds or the writer closed its end."""
        while not done(self.events):
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return
            *lines, self._rest = (self._rest + chunk).split(b"\n")
            self.events += [json.loads(x) for x in lines if x]


def _two_writers(feature: Path, n_each: int, per_session: int) -> tuple[list[list[str]], list, int]:
    """Two forked writers decide their halves, each retrying while the other holds the lock.

    They start together while this process holds the lock, and it lets go only once each has
    been refused once: so refusals always happen (the check of what a refusal names is never
    vacuous), before the two contend with each other. Returns the halves, [(pid, events)]
    per writer, and the pid of the first holder (this process).
    """
    with FeatureSession.open(feature, read_only=True) as ro:
        ids = [i.id for i in ro.feature.items if i.counted]
    assert len(ids) >= 2 * n_each
    halves = [ids[:n_each], ids[n_each : 2 * n_each]]
    go_r, go_w = os.pipe()
    procs = []
    for half in halves:
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                os.close(rfd)
                os.close(go_w)
                _writer(feature, half, per_session, wfd, go_r)
            except BaseException as exc:
                os.write(wfd, (json.dumps({"error": repr(exc)}) + "\n").encode())
                code = 1
            finally:
                os._exit(code)
        os.close(wfd)
        procs.append((pid, _Events(rfd)))
    os.close(go_r)
    with FeatureSession.open(feature, user="first-holder"):
        os.close(go_w)  # go
        for _, ev in procs:
            ev.read_until(lambda events: any("refused" in e or "error" in e for e in events))
    outs = []
    for pid, ev in procs:
        ev.read_until(lambda events: False)  # to the end
        os.close(ev.fd)
        _, status = os.waitpid(pid, 0)
        assert not [e for e in ev.events if "error" in e], ev.events[-3:]
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        outs.append((pid, ev.events))
    return halves, outs, os.getpid()


def _check_two_writers(feature: Path, halves, outs, first_holder: int) -> int:
    """Nothing lost or doubled, and every refusal names the process that held the lock.

    Returns how many refusals named the other writer (the two contending with each other).
    """
    saved = [e["saved"] for _, ev in outs for e in ev if "saved" in e]
    refused = [(pid, e["refused"]) for pid, ev in outs for e in ev if "refused" in e]
    assert sorted(saved) == sorted(halves[0] + halves[1])
    writers = {pid for pid, _ in outs}
    assert refused, "no writer was ever refused: the lock was never contended"
    for pid, _ in outs:
        assert (pid, first_holder) in refused, f"writer {pid} started while the lock was held, yet was not refused"
    for pid, holder in refused:
        assert holder in (writers - {pid}) | {first_holder}, f"a refusal of {pid} named {holder}, not the holder"
    _all_parse(feature)
    read = read_journal(journal_path(feature))
    state, _ = _state(feature)
    assert set(saved) <= set(state) and all(state[i] == "fix" for i in saved)
    assert len([r for r in read.records if r["type"] == "decision"]) == len(saved), "a record lost or doubled"
    return len([1 for _, holder in refused if holder in writers])


def test_two_writers_quick(tmp_path):
    feature = make_fault_feature(tmp_path / "repo", items=40, log=False)
    _check_two_writers(feature, *_two_writers(feature, 20, 4))


@pytest.mark.slow
def test_two_writers_500_each(tmp_path):
    feature = make_fault_feature(tmp_path / "repo", items=1000, log=False)
    refused = _check_two_writers(feature, *_two_writers(feature, 500, 10))
    path = os.environ.get("SCARS_RELIAB_FIGURES")
    if path:
        data = json.loads(Path(path).read_text()) if Path(path).exists() else {}
        data["two_writers"] = {"decisions": 1000, "lock_refusals": refused, "lost": 0}
        Path(path).write_text(json.dumps(data, indent=2))


def test_second_writer_refused_while_first_holds(template, tmp_path):
    feature = copy_feature(template, tmp_path / "f")
    ids = _prepare(feature)
    with FeatureSession.open(feature, user="alice") as first:
        with pytest.raises(LockHeld) as info:
            FeatureSession.open(feature, user="bob")
        assert info.value.holder.get("pid") == os.getpid()
        p = subprocess.run(
            [sys.executable, "-m", "scars.tui.cli.main", "decide", ids[0], "--fix", "--feature", str(feature)],
            capture_output=True,
            timeout=60,
        )
        assert p.returncode == 5, p.stderr
        assert str(os.getpid()).encode() in p.stderr and b"Traceback" not in p.stderr
        first.decide(ids[0], "fix")
    _all_parse(feature)


# ------------------------------------------------------------------ edited by hand meanwhile


def test_log_edited_by_hand_is_never_overwritten(template, tmp_path):
    feature = copy_feature(template, tmp_path / "f")
    ids = _prepare(feature)
    log = feature / "iteration-log.yaml"
    with FeatureSession.open(feature) as s:
        s.decide(ids[0], "fix")
        edited = log.read_text(encoding="utf-8").replace("first round written by hand", "EDITED BY A PERSON")
        log.write_text(edited, encoding="utf-8")
        with pytest.raises(ChangedOnDisk) as info:
            s.close_round("stop", "stopping while someone edits the log")
        assert "changed" in str(info.value)
        assert log.read_text(encoding="utf-8") == edited, "the hand edit was overwritten"
    _all_parse(feature)


def test_disjoint_hand_edit_is_merged_not_lost(template, tmp_path):
    feature = copy_feature(template, tmp_path / "f")
    ids = _prepare(feature)
    log = feature / "iteration-log.yaml"
    with FeatureSession.open(feature) as s:
        s.decide(ids[0], "fix")
        with open(log, "a", encoding="utf-8") as f:
            f.write("# a note a person added while scars ran\n")
        s.close_round("stop", "stopping after a note was added")
    text = log.read_text(encoding="utf-8")
    assert "# a note a person added while scars ran" in text
    assert [r.round for r in read_iteration_log(log).rounds] == [1, 2]


def test_auto_decisions_edited_by_hand_keeps_the_edit(template, tmp_path):
    feature = copy_feature(template, tmp_path / "f")
    ids = _prepare(feature)
    ad = feature / "auto-decisions.md"
    with FeatureSession.open(feature) as s:
        OPS["auto_decision"](s, ids)
        edited = ad.read_text(encoding="utf-8").replace("they bite first", "EDITED: they bite first")
        ad.write_text(edited, encoding="utf-8")
        n = OPS["auto_decision"](s, ids)
    text = ad.read_text(encoding="utf-8")
    assert text.startswith(edited), "an earlier entry was rewritten"
    assert n == 2 and [e.number for e in parse_auto_decisions(text)] == [1, 2]


def test_journal_line_edited_by_hand_is_detected(template, tmp_path):
    feature = copy_feature(template, tmp_path / "f")
    ids = _prepare(feature)
    jp = journal_path(feature)
    lines = jp.read_bytes().split(b"\n")
    target = next(i for i, ln in enumerate(lines) if b'"action":"defer"' in ln)
    lines[target] = lines[target].replace(b'"action":"defer"', b'"action":"fixx"')
    jp.write_bytes(b"\n".join(lines))
    with FeatureSession.open(feature) as s:
        assert any("checksum" in p for p in s.problems), s.problems
        assert ids[6] not in s.decisions or s.decisions[ids[6]].action != "fixx"


def test_the_first_decision_makes_the_new_journal_durable(tmp_path, monkeypatch):
    """Creating .scars/journal.jsonl is followed by an fsync of .scars (else a crash can lose
    the file with every decision in it, though each record was fsynced)."""
    feature = make_fault_feature(tmp_path, items=3, log=False)
    with FeatureSession.open(feature) as s:
        first = [i.id for i in s.feature.items if i.counted][0]
        with monkeypatch.context() as m:
            trace = SyscallTrace(m)
            s.decide(first, "fix")
    journal = os.path.realpath(journal_path(feature))
    assert ("open", journal, True) in trace.events
    assert trace.missing_dir_fsyncs() == []
    assert os.path.dirname(journal) in trace.dir_fsyncs()

"""scars.core.storage.lock and scars.core.storage.journal: one writer, checksummed records, torn tails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zlib

import pytest

from scars.core.errors import LockHeld
from scars.core.samsara.decisions import BLOCKED_FIX, DECISION, SIGN_OFF, UNDO, Decision, replay
from scars.core.storage.journal import Journal, frame, read_journal, unframe
from scars.core.storage.lock import FeatureLock, current_holder, lock_path


def test_second_lock_is_refused_naming_the_holder(tmp_path):
    a = FeatureLock(tmp_path, user="alice").acquire()
    with pytest.raises(LockHeld) as info:
        FeatureLock(tmp_path, user="bob").acquire()
    assert info.value.holder["pid"] == os.getpid()
    assert info.value.holder["user"] == "alice"
    assert "alice" in str(info.value) and str(os.getpid()) in str(info.value)
    assert current_holder(tmp_path)["user"] == "alice"
    a.release()
    assert current_holder(tmp_path) is None
    with FeatureLock(tmp_path, user="bob") as b:
        assert b.held


def test_lock_of_a_killed_process_is_free(tmp_path):
    code = textwrap.dedent(
        f"""
        import os, signal, sys
        from scars.core.storage.lock import FeatureLock
        lk = FeatureLock({str(tmp_path)!r}, user="ghost").acquire()
        print("locked", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert proc.stdout.strip() == "locked"
    assert lock_path(tmp_path).exists()
    assert json.loads(lock_path(tmp_path).read_text())["user"] == "ghost"  # stale holder info …
    with FeatureLock(tmp_path, user="me") as lk:  # … but the lock itself is free
        assert lk.held
        assert json.loads(lock_path(tmp_path).read_text())["user"] == "me"


def test_lock_held_by_another_process_is_refused(tmp_path):
    code = textwrap.dedent(
        f"""
        import sys
        from scars.core.storage.lock import FeatureLock
        lk = FeatureLock({str(tmp_path)!r}, user="other").acquire()
        print("locked", flush=True)
        sys.stdin.read()
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "locked"
        with pytest.raises(LockHeld) as info:
            FeatureLock(tmp_path).acquire()
        assert info.value.holder["pid"] == proc.pid
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    FeatureLock(tmp_path).acquire().release()


def test_frame_roundtrip_and_corruption():
    rec = {"type": "decision", "seq": 1, "text": 'line\nbreak \u2028 "q" é'}
    line = frame(rec)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert unframe(line[:-1]) == rec
    bad = bytearray(line[:-1])
    bad[-3] ^= 1
    assert isinstance(unframe(bytes(bad)), str)
    assert isinstance(unframe(b"garbage"), str)


def test_torn_tail_is_ignored_and_reported(tmp_path):
    p = tmp_path / "journal.jsonl"
    j = Journal(p)
    j.append(DECISION, decisions=[{"item_id": "ks-1", "action": "fix"}])
    j.append(DECISION, decisions=[{"item_id": "ks-2", "action": "fix"}])
    data = p.read_bytes()
    p.write_bytes(data[:-7])  # cut the last record mid-way
    read = read_journal(p)
    assert [r["seq"] for r in read.records] == [1]
    assert read.torn_tail and "incomplete" in read.problems[0]
    j2 = Journal(p)  # reopening ends the torn line so the next record stays intact
    j2.append(DECISION, decisions=[{"item_id": "ks-3", "action": "defer"}])
    read = read_journal(p)
    assert [r["decisions"][0]["item_id"] for r in read.records] == ["ks-1", "ks-3"]
    assert len(read.problems) == 1 and "checksum" in read.problems[0]


def test_corrupt_middle_line_is_skipped(tmp_path):
    p = tmp_path / "journal.jsonl"
    j = Journal(p)
    for i in range(3):
        j.append(DECISION, decisions=[{"item_id": f"ks-{i}", "action": "fix"}])
    lines = p.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b"ks-1", b"ks-9")
    p.write_bytes(b"\n".join(lines))
    read = read_journal(p)
    assert [r["seq"] for r in read.records] == [1, 3]
    assert read.problems == ["line 2: checksum mismatch (torn or altered record); ignored"]
    assert not read.torn_tail


def _dec(item, action="fix", **kw):
    return Decision(item_id=item, action=action, decided_by="t", decided_at="2026-01-01T00:00:00+00:00", **kw).to_dict()


def test_replay_applies_undo_sign_off_and_blocked_outcomes():
    recs = [
        {"seq": 1, "type": DECISION, "decisions": [_dec("a"), _dec("b")]},
        {"seq": 2, "type": DECISION, "decisions": [_dec("a", "defer", reason="later on")]},
        {"seq": 3, "type": UNDO, "target": 2},
        {"seq": 4, "type": BLOCKED_FIX, "item_id": "b", "outcome": "reclassify_as_defer", "reason": "needs design"},
        {"seq": 5, "type": SIGN_OFF, "item_id": "a", "reviewed_by": "carol"},
    ]
    st = replay(recs)
    assert st.decisions["a"].action == "fix" and st.decisions["a"].reviewed_by == "carol"
    assert st.decisions["b"].action == "defer" and st.decisions["b"].blocked_outcome == "reclassify_as_defer"
    assert st.decisions["b"].reason == "needs design"
    assert st.undo_stack == [1, 4, 5]
    assert [h["seq"] for h in st.history["a"]] == [1]  # the earlier state, with the record that made it
    assert st.history["a"][0]["reviewed_by"] is None


def _framed(body: bytes) -> bytes:
    """``body`` framed with its true checksum (a record whose checksum matches, whatever it holds)."""
    return b"%08x %s" % (zlib.crc32(body) & 0xFFFFFFFF, body)


def test_each_bad_record_is_skipped_with_its_reason_and_the_replay_goes_on(tmp_path):
    p = tmp_path / "journal.jsonl"
    first, last = (
        frame({"seq": 1, "type": DECISION, "decisions": [_dec("a")]}),
        frame({"seq": 2, "type": DECISION, "decisions": [_dec("b", "defer", reason="after the API freeze")]}),
    )
    bad = [
        b"zzzzzzzz " + first[9:-1],  # a checksum field that is not hex
        _framed(b'{"seq": 9, "type": '),  # the checksum matches, the JSON is cut
        _framed(b"[1, 2, 3]"),  # JSON, not an object
        _framed(b'{"seq": 9}'),  # an object without a type
        _framed(b'{"seq": 9, "type": 3}'),  # a type that is not text
        b"x" * 10,  # too short to hold a checksum
    ]
    p.write_bytes(first + b"\n".join(bad) + b"\n" + last)
    read = read_journal(p)
    assert [r["seq"] for r in read.records] == [1, 2] and not read.torn_tail
    assert read.problems == [
        "line 2: not a journal record (bad checksum field); ignored",
        "line 3: checksum matches but the JSON is invalid; ignored",
        "line 4: record has no type; ignored",
        "line 5: record has no type; ignored",
        "line 6: record has no type; ignored",
        "line 7: not a journal record (no checksum); ignored",
    ]
    state = replay(read.records)
    assert {k: d.action for k, d in state.decisions.items()} == {"a": "fix", "b": "defer"}
    assert state.undo_stack == [1, 2]


@pytest.mark.parametrize(
    "text",
    [
        None,  # scars' earlier text itself: brought up to date
        "# my own ignores, as long as scars' earlier text and starting as it does........" + "x" * 20,
    ],
    ids=["scars' earlier text", "a user's text of the same length"],
)
def test_only_scars_earlier_gitignore_byte_for_byte_is_rewritten(tmp_path, text):
    from scars.core.storage import lock as lock_mod

    earlier = lock_mod._GITIGNORE_BEFORE
    mine = earlier if text is None else (earlier[:20] + text)[: len(earlier)]
    assert len(mine.encode()) == len(earlier.encode())
    (tmp_path / ".scars").mkdir()
    (tmp_path / ".scars" / ".gitignore").write_text(mine, encoding="utf-8")
    FeatureLock(tmp_path).acquire().release()
    got = (tmp_path / ".scars" / ".gitignore").read_text(encoding="utf-8")
    assert got == (lock_mod.GITIGNORE if text is None else mine)

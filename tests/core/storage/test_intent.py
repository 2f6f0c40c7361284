"""storage.intent: a planned record of several writes, its intent file and its roll-forward."""

from __future__ import annotations

import hashlib
import json
import os
import stat

import pytest

from scars.core import settings
from scars.core.errors import ChangedOnDisk
from scars.core.storage import intent
from scars.core.storage.durable import WriteFailed
from scars.core.storage.intent import IntentUnreadable, Plan, complete_pending, intent_path, pending, read_intent


def _plan(d):
    (d / "state.json").write_bytes(b'{"a": 1}\n')
    (d / "log.md").write_bytes(b"one\n")
    (d / "pause.json").write_bytes(b"{}")
    plan = Plan(d, "decision-001 (test: go)")
    plan.append(d / "log.md", b"two\n")
    plan.replace(d / "state.json", b'{"a": 2}\n')
    plan.remove(d / "pause.json")
    plan.append(d / "log.md", b"three\n")  # planned on the first append's result
    plan.replace(d / "sub" / "new.txt", b"new\n", mode=0o600)
    return plan


WHOLE = {"log.md": b"one\ntwo\nthree\n", "state.json": b'{"a": 2}\n', "sub/new.txt": b"new\n"}


def _files(d):
    return {
        str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file() and ".scars" not in p.parts
    }


class Killed(BaseException):
    pass


def _killed_record(d, k):
    """The record of :func:`_plan` in ``d`` killed after k writes (its intent left behind); only
    the kill is undone afterwards, not the test's own settings."""
    plan = _plan(d)
    with pytest.MonkeyPatch.context() as mp:
        _kill_after(mp, k)
        with pytest.raises(Killed):
            plan.commit()


def _kill_after(monkeypatch, k):
    """The k+1-th write of a step raises (a kill after k writes)."""
    real = intent._apply
    calls = {"n": 0}

    def apply(step, target):
        if calls["n"] == k:
            raise Killed
        calls["n"] += 1
        real(step, target)

    monkeypatch.setattr(intent, "_apply", apply)
    return calls


def test_a_committed_plan_writes_every_step_in_order_and_removes_its_intent(tmp_path):
    plan = _plan(tmp_path)
    assert plan.read(tmp_path / "log.md") == b"one\ntwo\nthree\n"
    assert plan.read(tmp_path / "pause.json") is None
    # the two appends to log.md are one step, where the first was planned; targets are absolute
    assert [(s.op, os.path.relpath(s.path, tmp_path)) for s in plan.steps] == [
        ("append", "log.md"),
        ("replace", "state.json"),
        ("remove", "pause.json"),
        ("replace", os.path.join("sub", "new.txt")),
    ]
    assert plan.steps[0].data == b"two\nthree\n" and plan.steps[0].offset == 4
    plan.commit()
    assert _files(tmp_path) == WHOLE
    assert stat.S_IMODE((tmp_path / "sub" / "new.txt").stat().st_mode) == 0o600
    assert not intent_path(tmp_path).exists() and not pending(tmp_path)


@pytest.mark.parametrize("k", range(4))
def test_a_record_killed_after_k_writes_leaves_its_intent_and_is_completed(tmp_path, monkeypatch, k):
    plan = _plan(tmp_path)
    _kill_after(monkeypatch, k)
    with pytest.raises(Killed):
        plan.commit()
    assert pending(tmp_path)
    assert read_intent(tmp_path)[0] == "decision-001 (test: go)"
    monkeypatch.undo()
    assert complete_pending(tmp_path) == "decision-001 (test: go)"
    assert _files(tmp_path) == WHOLE
    assert not pending(tmp_path)
    assert complete_pending(tmp_path) is None  # nothing left: completing twice changes nothing
    assert _files(tmp_path) == WHOLE


def test_a_kill_between_the_last_write_and_the_intent_removal_is_completed_as_done(tmp_path, monkeypatch):
    plan = _plan(tmp_path)
    real = os.unlink

    def unlink(path, *a, **kw):
        if str(path) == str(intent_path(tmp_path)):
            raise Killed
        return real(path, *a, **kw)

    monkeypatch.setattr(intent.os, "unlink", unlink)
    with pytest.raises(Killed):
        plan.commit()
    monkeypatch.undo()
    assert _files(tmp_path) == WHOLE and pending(tmp_path)
    complete_pending(tmp_path)
    assert _files(tmp_path) == WHOLE and not pending(tmp_path)


def test_a_kill_while_the_intent_is_written_leaves_no_record(tmp_path, monkeypatch):
    plan = _plan(tmp_path)
    before = _files(tmp_path)

    def replace(*a, **kw):
        raise Killed

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(Killed):
        plan.commit()
    monkeypatch.undo()
    assert not pending(tmp_path)
    assert complete_pending(tmp_path) is None
    assert _files(tmp_path) == before


@pytest.mark.parametrize("k", range(1, 4))
def test_a_completion_killed_itself_is_completed_by_the_next_taker(tmp_path, monkeypatch, k):
    _killed_record(tmp_path, 1)
    _kill_after(monkeypatch, k - 1)  # the completion dies after k - 1 more writes
    with pytest.raises(Killed):
        complete_pending(tmp_path)
    monkeypatch.undo()
    assert pending(tmp_path)
    complete_pending(tmp_path)
    assert _files(tmp_path) == WHOLE and not pending(tmp_path)


@pytest.mark.parametrize(
    ("name", "edit"),
    [
        ("state.json", lambda p: p.write_bytes(b'{"a": 9}\n')),  # replaced by someone else
        ("state.json", lambda p: p.unlink()),  # removed
        ("log.md", lambda p: p.write_bytes(b"ONE\n")),  # same size, other bytes before the offset
        ("log.md", lambda p: p.write_bytes(b"on")),  # cut back before the offset
        ("log.md", lambda p: p.write_bytes(b"one\ntw")),  # a torn write of the record's own append
        ("pause.json", lambda p: p.write_bytes(b'{"x": 1}')),  # a file to remove was changed
    ],
)
def test_a_file_changed_after_the_kill_is_refused_by_name_and_not_overwritten(tmp_path, monkeypatch, name, edit):
    _killed_record(tmp_path, 0)
    edit(tmp_path / name)
    before = _files(tmp_path)
    with pytest.raises(ChangedOnDisk) as exc:
        complete_pending(tmp_path)
    assert str(tmp_path / name) in str(exc.value)
    assert "decision-001 (test: go)" in str(exc.value)
    assert pending(tmp_path)  # left for a person to look at
    assert _files(tmp_path) == before  # nothing written, the changed file least of all


def test_a_file_others_appended_to_after_the_kill_gets_the_record_after_their_lines(tmp_path, monkeypatch):
    """An append-only file is shared (the repository's BACKLOG.md takes the lines of every
    feature's records, each under its own feature's lock): lines appended after the planned
    offset are someone else's, kept, and the record's own bytes follow them."""
    _killed_record(tmp_path, 0)
    (tmp_path / "log.md").write_bytes(b"one\n!\n")
    complete_pending(tmp_path)
    assert _files(tmp_path) == {**WHOLE, "log.md": b"one\n!\ntwo\nthree\n"} and not pending(tmp_path)


def test_an_append_is_done_when_its_bytes_follow_its_offset_and_to_do_over_the_same_first_bytes():
    head = hashlib.sha256(b"abc").hexdigest()
    step = intent.Step("append", "f", b"de", before=head, offset=3)
    assert intent._state(step, b"abc") == "todo"
    assert intent._state(step, b"abcx") == "todo"  # another writer's bytes first: ours go after them
    assert intent._state(step, b"abcde") == "done"
    assert intent._state(step, b"abcdef") == "done"  # appended to after: still done
    assert intent._state(step, b"abcxde") == "done"  # after another writer's bytes
    assert intent._state(step, b"abcd") == "changed"  # a torn write of the record's own bytes
    assert intent._state(step, b"abXde") == "changed"  # the first bytes edited
    assert intent._state(step, b"ab") == "changed"  # shorter than the offset
    assert intent._state(step, None) == "changed"
    assert intent._state(intent.Step("append", "f", b"de", offset=0), None) == "todo"


def test_a_replace_or_remove_is_done_by_its_result_and_applied_only_over_what_it_replaced():
    sha = hashlib.sha256(b"old").hexdigest()
    step = intent.Step("replace", "f", b"new", before=sha)
    assert intent._state(step, None) == "changed"  # absent, though it existed
    assert intent._state(step, b"old") == "todo"
    assert intent._state(step, b"new") == "done"
    assert intent._state(step, b"other") == "changed"
    new = intent.Step("replace", "g", b"new", before=None)
    assert intent._state(new, None) == "todo"
    assert intent._state(new, b"x") == "changed"
    gone = intent.Step("remove", "h", before=sha)
    assert intent._state(gone, b"old") == "todo"
    assert intent._state(gone, None) == "done"
    assert intent._state(gone, b"other") == "changed"


@pytest.mark.parametrize(
    "mangle",
    [
        lambda doc: "not json",
        lambda doc: json.dumps({**doc, "v": 99}),
        lambda doc: json.dumps({**doc, "steps": [{**doc["steps"][0], "sha256": "0" * 64}]}),
        lambda doc: json.dumps({**doc, "steps": [{**doc["steps"][0], "op": "chmod"}]}),
        lambda doc: json.dumps({**doc, "steps": [{**doc["steps"][0], "path": "log.md"}]}),  # relative
        lambda doc: json.dumps({**doc, "steps": [{**doc["steps"][0], "path": "/x/../etc/passwd"}]}),  # not normal
        lambda doc: json.dumps({**doc, "steps": [{**doc["steps"][1], "mode": 0o17777}]}),  # not a mode
        lambda doc: json.dumps({**doc, "steps": [{**doc["steps"][1], "mode": -1}]}),
        lambda doc: json.dumps({**doc, "dir": "/somewhere/else"}),  # another directory's intent
        lambda doc: "[" * 100_000,  # nested past the JSON parser's recursion
        lambda doc: json.dumps({**doc, "steps": [{**doc["steps"][0], "path": "/tmp/\ud800x"}]}),  # no file name
    ],
)
def test_an_intent_that_scars_did_not_write_is_refused_and_nothing_is_written(tmp_path, monkeypatch, mangle):
    _killed_record(tmp_path, 0)
    path = intent_path(tmp_path)
    path.write_text(mangle(json.loads(path.read_text())))
    before = _files(tmp_path)
    with pytest.raises(IntentUnreadable) as exc:
        complete_pending(tmp_path)
    assert str(path) in str(exc.value)
    assert _files(tmp_path) == before


def test_a_symlinked_folder_inside_the_repository_is_written_where_it_leads(tmp_path):
    """A feature folder that is a symlink to another folder of the repository: the repository's
    BACKLOG.md is the one the path names (not ``<the link's target>/../../BACKLOG.md``) and the
    feature's files are written where the link leads, inside the repository."""
    repo = tmp_path / "repo"
    (repo / "features").mkdir(parents=True)
    (repo / "store" / "x" / "y").mkdir(parents=True)
    (repo / "features" / "f").symlink_to(repo / "store" / "x" / "y")
    d = repo / "features" / "f"
    plan = Plan(d, root=repo)
    plan.append(repo / "BACKLOG.md", b"x\n")
    plan.append(d / "PROGRESS.md", b"p\n")
    assert [s.path for s in plan.steps] == [str(repo / "BACKLOG.md"), str(repo / "store" / "x" / "y" / "PROGRESS.md")]
    plan.commit()
    assert (repo / "BACKLOG.md").read_bytes() == b"x\n"
    assert not (repo / "store" / "BACKLOG.md").exists()
    assert (d / "PROGRESS.md").read_bytes() == b"p\n"


def test_a_symlinked_folder_leading_out_of_the_repository_refuses_the_whole_record(tmp_path):
    """Issue 27 §1 (a loop's folder linked out of a clone): before, the record wrote PROGRESS.md
    into the folder the link leads to, outside the repository. Now every target is checked by the
    write rule before the first write: refused, nothing written anywhere (not even BACKLOG.md)."""
    from scars.core.errors import OutsideRepository

    repo = tmp_path / "repo"
    (repo / "features").mkdir(parents=True)
    (tmp_path / "store" / "x" / "y").mkdir(parents=True)
    (repo / "features" / "f").symlink_to(tmp_path / "store" / "x" / "y")
    d = repo / "features" / "f"
    plan = Plan(d, root=repo)
    plan.append(repo / "BACKLOG.md", b"x\n")
    with pytest.raises(OutsideRepository, match=r"features/f: it is a symlink leading to .*store/x/y, outside"):
        plan.append(d / "PROGRESS.md", b"p\n")
    assert not (repo / "BACKLOG.md").exists()
    # Planned while the folder was a folder, the link swapped in before the commit: refused too.
    (repo / "features" / "g").mkdir()
    plan = Plan(repo / "features" / "g", root=repo)
    plan.append(repo / "BACKLOG.md", b"x\n")
    plan.append(repo / "features" / "g" / "PROGRESS.md", b"p\n")
    (repo / "features" / "g").rmdir()
    (repo / "features" / "g").symlink_to(tmp_path / "store" / "x" / "y")
    with pytest.raises(OutsideRepository):
        plan.commit()
    assert not (repo / "BACKLOG.md").exists()
    assert list((tmp_path / "store" / "x" / "y").iterdir()) == []


def test_an_empty_plan_writes_no_intent(tmp_path):
    Plan(tmp_path).commit()
    assert not (tmp_path / ".scars").exists() and not pending(tmp_path)


def test_the_intent_is_this_user_s_state_never_a_file_of_the_repository(tmp_path, monkeypatch):
    """An intent says which files to write: one that came with a clone (the repository's own
    ``.scars/intent.json``, where the first version kept it) is never read, and a record's intent
    is written under the user's state directory."""
    monkeypatch.setenv("SCARS_STATE_DIR", str(tmp_path / "state"))
    victim = tmp_path / "outside.txt"
    victim.write_bytes(b"mine\n")
    repo = tmp_path / "repo"
    (repo / ".scars").mkdir(parents=True)
    planted = {
        "v": 1,
        "steps": [
            {
                "op": "append",
                "path": "../outside.txt",
                "data": "eAo=",
                "sha256": hashlib.sha256(b"x\n").hexdigest(),
                "offset": 0,
            }
        ],
    }
    (repo / ".scars" / "intent.json").write_text(json.dumps(planted))
    assert not pending(repo) and complete_pending(repo) is None
    assert victim.read_bytes() == b"mine\n"
    _killed_record(repo, 0)
    monkeypatch.setenv("SCARS_STATE_DIR", str(tmp_path / "state"))
    assert intent_path(repo).parent == tmp_path / "state" / "intents" and pending(repo)
    assert complete_pending(repo) == "decision-001 (test: go)"


def test_a_file_changed_between_the_plan_and_its_commit_is_refused_and_leaves_no_intent(tmp_path):
    plan = _plan(tmp_path)
    (tmp_path / "state.json").write_bytes(b'{"a": 5}\n')  # changed after the plan read it
    before = _files(tmp_path)
    with pytest.raises(ChangedOnDisk, match="read the gate again"):
        plan.commit()
    assert _files(tmp_path) == before and not pending(tmp_path)


def test_an_append_once_is_done_by_its_marker_whatever_else_the_file_became():
    step = intent.Step("append_once", "/f", b"- [ ] (d s id=1) t\n", marker=b"(d s id=1) t")
    assert intent._state(step, None) == "todo"
    assert intent._state(step, b"# Backlog\n") == "todo"
    assert intent._state(step, b"- [x] (d s id=1) t\n") == "done"  # closed by backlog.sh since: still there
    assert intent._state(step, b"rewritten\n- [ ] (d s id=1) t\n- [ ] other\n") == "done"


def test_the_completion_removes_the_temporary_files_a_killed_replace_left(tmp_path, monkeypatch):
    """A SIGKILL inside atomic_write leaves its temporary file (younger than the minute after
    which any writer removes it); the completion holds the lock, so it removes them at once."""
    _killed_record(tmp_path, 1)
    left = [tmp_path / ".state.json.k1ll3d.tmp", tmp_path / "sub" / ".new.txt.abc_12.tmp"]
    left[1].parent.mkdir()
    for p in left:
        p.write_bytes(b'{"a"')
    stray = intent_path(tmp_path).with_name(f".{intent_path(tmp_path).name}.x9.tmp")
    stray.write_bytes(b"{")
    other = tmp_path / ".log.md.zz.tmp"  # the temporary of a file the record does not replace
    other.write_bytes(b"x")
    complete_pending(tmp_path)
    assert not any(p.exists() for p in [*left, stray])
    assert other.exists()  # younger than a minute and not the record's: not ours to judge
    assert _files(tmp_path) == {**WHOLE, ".log.md.zz.tmp": b"x"}


def test_an_append_once_counts_its_marker_as_planned_so_a_closed_line_of_the_same_text_is_not_it(tmp_path):
    """The same gap shipped again the day its first line was closed (`- [x]`, same date, slug, id
    and text): the new line is written, not judged there already."""
    backlog = tmp_path / "BACKLOG.md"
    backlog.write_bytes(b"- [x] (d s id=1) t\n")
    plan = Plan(tmp_path, "decision-002 (spec: ship)")
    plan.append_once(backlog, b"- [ ] (d s id=1) t\n", b"(d s id=1) t")
    plan.commit()
    assert backlog.read_bytes() == b"- [x] (d s id=1) t\n- [ ] (d s id=1) t\n"
    step = intent.Step("append_once", "/f", b"- [ ] (d s id=1) t\n", marker=b"(d s id=1) t", seen=1)
    assert intent._state(step, b"- [x] (d s id=1) t\n") == "todo"
    assert intent._state(step, b"- [x] (d s id=1) t\n- [ ] (d s id=1) t\n") == "done"


def test_a_file_changed_while_the_intent_is_written_is_refused_and_leaves_no_intent(tmp_path, monkeypatch):
    plan = _plan(tmp_path)
    real = intent.atomic_write

    def write_then_change(path, data, **kw):
        real(path, data, **kw)
        if str(path) == str(intent_path(tmp_path)):  # someone writes state.json just then
            (tmp_path / "state.json").write_bytes(b'{"a": 7}\n')

    monkeypatch.setattr(intent, "atomic_write", write_then_change)
    with pytest.raises(ChangedOnDisk, match="read the gate again"):
        plan.commit()
    assert not pending(tmp_path)
    assert _files(tmp_path) == {"state.json": b'{"a": 7}\n', "log.md": b"one\n", "pause.json": b"{}"}


def test_a_state_directory_that_cannot_be_used_is_a_clear_refusal(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_bytes(b"")
    monkeypatch.setenv("SCARS_STATE_DIR", str(blocker / "scars"))
    (tmp_path / "d").mkdir()
    plan = _plan(tmp_path / "d")
    before = _files(tmp_path / "d")
    with pytest.raises(WriteFailed, match="SCARS_STATE_DIR") as exc:
        plan.commit()
    assert str(blocker / "scars") in str(exc.value)
    assert _files(tmp_path / "d") == before  # nothing of the record written
    with pytest.raises(WriteFailed, match="SCARS_STATE_DIR"):
        complete_pending(tmp_path / "d")  # the next gate says the same, never a traceback


def test_intents_are_this_user_s_alone(tmp_path):
    plan = _plan(tmp_path)
    plan.commit()
    folder = intent_path(tmp_path).parent
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    killed = tmp_path / "killed"
    killed.mkdir()
    _killed_record(killed, 0)
    assert stat.S_IMODE(intent_path(killed).stat().st_mode) == 0o600  # the intent a kill leaves: 0600


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
def test_an_intent_of_another_user_is_refused(tmp_path, monkeypatch):
    _killed_record(tmp_path, 0)
    os.chown(intent_path(tmp_path), 54321, -1)
    before = _files(tmp_path)
    with pytest.raises(IntentUnreadable, match="not yours"):
        complete_pending(tmp_path)
    assert _files(tmp_path) == before


def test_another_user_s_interrupted_record_is_seen_refused_by_name_and_left_to_them(tmp_path, monkeypatch):
    """The intent is its writer's own state: a gate run by someone else (another user, another
    SCARS_STATE_DIR) finds the record's mark in the directory, refuses to record over the half
    written state, and says whose it is and how to go on; its writer's next gate completes it."""
    alice, bob = tmp_path / "alice", tmp_path / "bob"
    d = tmp_path / "d"
    d.mkdir()
    monkeypatch.setenv("SCARS_STATE_DIR", str(alice))
    monkeypatch.setenv("SCARS_USER", "alice")
    _killed_record(d, 1)
    monkeypatch.setenv("SCARS_STATE_DIR", str(bob))
    settings.clear()  # bob's own command: the environment read afresh
    assert pending(d) and read_intent(d) is None  # bob has no intent of it: only its mark
    partial = _files(d)
    with pytest.raises(intent.InterruptedElsewhere, match="alice@") as exc:
        complete_pending(d)
    assert str(intent.pointer_path(d)) in str(exc.value) and _files(d) == partial
    monkeypatch.setenv("SCARS_STATE_DIR", str(alice))
    settings.clear()
    assert complete_pending(d) == "decision-001 (test: go)"
    assert _files(d) == WHOLE and not pending(d) and not intent.pointer_path(d).exists()


def test_a_kill_after_the_intent_is_removed_leaves_a_mark_its_writer_clears(tmp_path, monkeypatch):
    plan = _plan(tmp_path)
    monkeypatch.setattr(intent, "_unmark", lambda directory: (_ for _ in ()).throw(Killed()))
    with pytest.raises(Killed):
        plan.commit()
    monkeypatch.undo()
    assert _files(tmp_path) == WHOLE and intent.pointer_path(tmp_path).exists() and pending(tmp_path)
    assert complete_pending(tmp_path) is None  # the record was whole: the mark is only removed
    assert not pending(tmp_path)


@pytest.mark.parametrize(
    ("user", "host"), [("\x1b]52;c;evil\x07", "h"), ("alice", "\x1b]0;evil\x07")], ids=["user", "host"]
)
def test_a_mark_that_came_with_the_files_is_never_shown_as_it_is_written(tmp_path, user, host):
    mark = intent.pointer_path(tmp_path)
    mark.parent.mkdir()
    mark.write_text(json.dumps({"user": user, "host": host, "intent": "/x"}))
    with pytest.raises(intent.InterruptedElsewhere) as exc:
        complete_pending(tmp_path)
    assert "\x1b" not in str(exc.value) and "another user or another state directory" in str(exc.value)


def test_a_mark_naming_an_intent_by_a_relative_path_is_not_this_user_s(tmp_path, monkeypatch):
    """Only an absolute path names this user's intent: a relative one that happens to resolve to it
    from the current folder is someone else's mark, refused and left, never removed as finished."""
    mark, mine = intent.pointer_path(tmp_path), intent_path(tmp_path)
    mark.parent.mkdir()
    mine.parent.mkdir(parents=True, exist_ok=True)
    mark.write_text(json.dumps({"user": "bob", "host": "h", "intent": mine.name}))
    monkeypatch.chdir(mine.parent)
    assert os.path.realpath(mine.name) == os.path.realpath(mine)
    with pytest.raises(intent.InterruptedElsewhere, match=r"\(bob@h\)"):
        complete_pending(tmp_path)
    assert mark.is_file()


def test_a_mark_naming_a_gone_intent_in_this_user_s_folder_is_not_a_moved_repository(tmp_path):
    """The moved-repository message names an intent that is there to look at; a mark naming one of
    this user's intent files that is gone is an interrupted record of someone, said as such."""
    mark = intent.pointer_path(tmp_path)
    mark.parent.mkdir()
    gone = intent_path(tmp_path).parent / "gone.json"
    mark.write_text(json.dumps({"user": "bob", "host": "h", "intent": str(gone)}))
    with pytest.raises(intent.InterruptedElsewhere) as exc:
        complete_pending(tmp_path)
    assert "(bob@h)" in str(exc.value) and "another path" not in str(exc.value)


def test_completing_this_user_s_record_leaves_another_user_s_mark_in_place(tmp_path, monkeypatch):
    """A's roll-forward succeeds; B's interrupted record beside it stays seen by everyone."""
    _killed_record(tmp_path, 1)
    theirs = json.dumps({"v": 1, "user": "bob", "host": "h", "intent": "/home/bob/.local/state/scars/intents/x.json"})
    intent.pointer_path(tmp_path).write_text(theirs)
    assert complete_pending(tmp_path) == "decision-001 (test: go)"
    assert _files(tmp_path) == WHOLE
    assert intent.pointer_path(tmp_path).read_text() == theirs and pending(tmp_path)


def test_a_record_of_this_user_from_before_the_repository_moved_names_its_intent(tmp_path, monkeypatch):
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    _killed_record(old, 1)
    left = intent_path(old)
    old.rename(new)
    with pytest.raises(intent.InterruptedElsewhere, match="by you when the repository had another path") as exc:
        complete_pending(new)
    assert str(left) in str(exc.value) and str(intent.pointer_path(new)) in str(exc.value)


def test_a_kill_before_the_intent_is_written_leaves_only_this_user_s_mark_which_their_next_gate_clears(
    tmp_path, monkeypatch
):
    plan = _plan(tmp_path)
    before = _files(tmp_path)
    real = intent.atomic_write

    def killed_at_the_intent(path, data, **kw):
        if str(path) == str(intent_path(tmp_path)):
            raise SystemExit(9)  # a kill: nothing of the record written, the mark already there
        real(path, data, **kw)

    monkeypatch.setattr(intent, "atomic_write", killed_at_the_intent)
    with pytest.raises(SystemExit):
        plan.commit()
    monkeypatch.undo()
    # A caught exit cleans up (as a SIGKILL cannot): nothing is left.
    assert not pending(tmp_path) and _files(tmp_path) == before
    mark = json.dumps({"v": 1, "user": "me", "host": "h", "intent": str(intent_path(tmp_path))})
    intent.pointer_path(tmp_path).write_text(mark)  # what a SIGKILL at that point leaves
    assert pending(tmp_path)
    assert complete_pending(tmp_path) is None and not pending(tmp_path)


@pytest.mark.parametrize("extra", [0, 1], ids=["at the limit", "one byte more"])
def test_an_intent_larger_than_any_record_is_refused_unread(tmp_path, extra):
    """An intent of MAX_INTENT_BYTES (the killed record's, padded with JSON's own whitespace) is
    still completed; one byte more is refused before it is read, and nothing is written."""
    _killed_record(tmp_path, 0)
    path = intent_path(tmp_path)
    body = path.read_bytes()
    with open(path, "ab") as f:
        f.write(b" " * (intent.MAX_INTENT_BYTES - len(body) + extra))
    assert path.stat().st_size == intent.MAX_INTENT_BYTES + extra
    before = _files(tmp_path)
    if extra:
        with pytest.raises(IntentUnreadable, match="is larger than any record scars writes; nothing was written"):
            complete_pending(tmp_path)
        assert _files(tmp_path) == before and path.is_file()
    else:
        assert complete_pending(tmp_path) is not None
        assert not pending(tmp_path) and all((tmp_path / f).read_bytes() == b for f, b in WHOLE.items())

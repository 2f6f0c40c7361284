"""Journals, locks, requests and ``.scars/`` folders made before the 0600 / 0700 rule (issue 27 §5)
are narrowed to it when scars next opens them for writing (``storage/confine.narrow_private``):
other users lose their bits; the group keeps its own where the repository is shared with its group
(the creation rule: ``dir_mode_for``, ``private_mode``); nothing is followed through a link, nothing
another user owns is touched, nothing scars keeps readable on purpose is narrowed, and a read-only
look narrows nothing."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from scars.core import gates
from scars.core.gates import requests as rq
from scars.core.samsara.session import FeatureSession
from tests.factories import clean_env, item_id, loop_spec_feature, run_cli, samsara_feature

ROOT = os.getuid() == 0
ITEM = "Retry count is hard-coded to 3"


def mode(p: Path) -> int:
    return stat.S_IMODE(os.lstat(p).st_mode)


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)
    old = os.umask(0o022)
    yield
    os.umask(old)


def _old_state(feature: Path, folder: int = 0o755, file: int = 0o644) -> Path:
    """``.scars/`` as a scars before the rule left it: a folder others can list, files others can read."""
    state = feature / ".scars"
    state.mkdir(exist_ok=True)
    for name in ("journal.jsonl", "watches.jsonl", "lock", "interrupted.json", ".gitignore", "notes.md"):
        (state / name).write_bytes(b"")
        os.chmod(state / name, file)
    os.chmod(state, folder)
    return state


def _decide(feature: Path) -> None:
    with FeatureSession.open(feature) as s:
        s.decide(item_id(feature, ITEM), "fix")


def test_an_old_state_folder_and_its_private_files_are_narrowed_when_written(tmp_path: Path):
    feature = samsara_feature(tmp_path / "repo")
    os.chmod(feature, 0o755)
    state = _old_state(feature)
    _decide(feature)
    assert mode(state) == 0o700
    assert [mode(state / n) for n in ("journal.jsonl", "watches.jsonl", "lock")] == [0o600] * 3
    # Readable on purpose (the mark of a record under way, .gitignore), or not scars' (a person's notes).
    assert [mode(state / n) for n in ("interrupted.json", ".gitignore", "notes.md")] == [0o644] * 3


def test_a_state_folder_shared_with_the_group_keeps_the_groups_bits(tmp_path: Path):
    feature = samsara_feature(tmp_path / "team")
    os.chmod(feature, 0o2775)  # the repository's group sharing is intended: group-writable, setgid
    state = _old_state(feature, folder=0o2777, file=0o666)
    _decide(feature)
    assert mode(state) == 0o2770  # others lose theirs; the setgid bit and the group's stay
    assert [mode(state / n) for n in ("journal.jsonl", "watches.jsonl", "lock")] == [0o660] * 3


def test_a_private_name_that_is_a_link_is_not_followed(tmp_path: Path):
    feature = samsara_feature(tmp_path / "repo")
    state = _old_state(feature)
    mine = feature / "mine.txt"  # inside the repository: the write rule would follow it; narrowing does not
    mine.write_bytes(b"")
    os.chmod(mine, 0o644)
    (state / "watches.jsonl").unlink()
    (state / "watches.jsonl").symlink_to(mine)
    _decide(feature)
    assert mode(mine) == 0o644 and mode(state / "journal.jsonl") == 0o600


@pytest.mark.skipif(not ROOT, reason="giving a file to another user needs root")
def test_what_another_user_owns_is_not_touched(tmp_path: Path):
    feature = samsara_feature(tmp_path / "repo")
    state = _old_state(feature)
    os.chown(state / "watches.jsonl", 54321, -1)
    _decide(feature)
    assert mode(state / "watches.jsonl") == 0o644 and mode(state / "journal.jsonl") == 0o600
    other = samsara_feature(tmp_path / "theirs")
    theirs = _old_state(other)
    os.chown(theirs, 54321, -1)
    _decide(other)
    assert mode(theirs) == 0o755  # their folder: left as it is (its files of ours are still ours)


def test_a_read_only_look_narrows_nothing(tmp_path: Path, capsys):
    feature = samsara_feature(tmp_path / "repo")
    state = _old_state(feature)
    before = {p.name: mode(p) for p in [state, *state.iterdir()]}
    assert run_cli(["round", "status", "--feature", str(feature)], capsys)[0] == 0
    assert run_cli(["status", str(feature)], capsys)[0] == 0
    with FeatureSession.open(feature, read_only=True):
        pass
    assert {p.name: mode(p) for p in [state, *state.iterdir()]} == before


def test_an_old_requests_inbox_is_narrowed_when_a_request_is_posted(tmp_path: Path):
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    spec = loop_spec_feature(root)
    inbox = root / ".scars" / "requests"
    inbox.mkdir(parents=True)
    (inbox / "spec-aaaaaa.json").write_text("{}\n", encoding="utf-8")
    (inbox / "spec-aaaaaa.lock").write_bytes(b"")
    (inbox / "README.txt").write_text("a person's note\n", encoding="utf-8")
    for p in inbox.iterdir():
        os.chmod(p, 0o644)
    os.chmod(inbox, 0o755)
    os.chmod(root / ".scars", 0o755)
    req = rq.post_request(gates.gather("spec", spec), spec, user="agent", root=root)
    assert mode(root / ".scars") == 0o700 and mode(inbox) == 0o700
    assert mode(inbox / "spec-aaaaaa.json") == 0o600 and mode(inbox / "spec-aaaaaa.lock") == 0o600
    assert mode(inbox / f"{req.id}.json") == 0o600
    assert mode(inbox / "README.txt") == 0o644


def test_the_private_names_are_the_files_scars_makes_private():
    from scars.core.samsara.watches import WATCHES_NAME
    from scars.core.storage.journal import JOURNAL_NAME
    from scars.core.storage.lock import LOCK_NAME, PRIVATE_FILES

    assert {JOURNAL_NAME, WATCHES_NAME, LOCK_NAME} == PRIVATE_FILES
